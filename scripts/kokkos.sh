#!/usr/bin/env bash
# Builds a Kokkos with the OpenMP backend (and Serial) once into a cache folder
# and prints its install prefix on stdout. Debian packages only Kokkos 3.4.1
# with Serial; its `trilinos` source package holds the same Kokkos standalone
# under packages/kokkos, so that is what is built (nothing else is fetched).
#
#   prefix="$(scripts/kokkos.sh openmp)"    # then -DKokkos_ROOT="$prefix"
#
# Environment:
#   ISOSTENCIL_CACHE  cache folder (default: ~/.cache/isostencil)
#   JOBS              parallel build jobs (default: 2)
# Idempotent: a finished install is reused at once. Progress goes to stderr,
# full logs only on failure.
set -euo pipefail

backend="${1:-openmp}"
[[ "$backend" == openmp ]] || { echo "kokkos.sh: backend '$backend': only openmp is built here" >&2; exit 2; }

CACHE="${ISOSTENCIL_CACHE:-${HOME:-/root}/.cache/isostencil}"
JOBS="${JOBS:-2}"
PREFIX="$CACHE/kokkos-3.4.1-openmp"
SOURCE_PACKAGE=trilinos

say() { [[ "${SETUP_QUIET:-0}" == 1 ]] || echo "kokkos: $*" >&2; }
fail() { echo "kokkos: $*" >&2; exit 1; }

if [[ -f "$PREFIX/.complete" ]]; then
  echo "$PREFIX"
  exit 0
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/isostencil-kokkos.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
logged() {
  local name="$1"; shift
  "$@" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log" >&2; fail "$name failed: $*"; }
}

SUDO=()
[[ "$(id -u)" == 0 ]] || SUDO=(sudo)

# --- the source tarball ------------------------------------------------------
# A deb-src entry for each archive the machine already uses for binaries, so
# the source comes from the same place and release as Debian's Kokkos.
mkdir -p "$CACHE/src"
orig="$(compgen -G "$CACHE/src/${SOURCE_PACKAGE}_*.orig.tar.*" | head -n 1 || true)"
if [[ -z "$orig" ]]; then
  src_list=/etc/apt/sources.list.d/isostencil-deb-src.sources
  if [[ ! -f "$src_list" ]] && ! apt-get -o Debug::NoLocking=1 source --print-uris "$SOURCE_PACKAGE" >/dev/null 2>&1; then
    binary_sources=/etc/apt/sources.list.d/debian.sources
    [[ -f "$binary_sources" ]] || fail "no $binary_sources to derive a deb-src entry from; add one for '$SOURCE_PACKAGE' by hand"
    say "adding deb-src entries for the archives of $binary_sources"
    sed 's/^Types: deb$/Types: deb-src/' "$binary_sources" | "${SUDO[@]}" tee "$src_list" >/dev/null
    logged apt-update "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=300 update
  fi
  command -v dpkg-source >/dev/null || logged dpkg-dev "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends dpkg-dev
  say "downloading the $SOURCE_PACKAGE source package (about 170 MB)"
  (cd "$CACHE/src" && logged apt-source apt-get source --download-only "$SOURCE_PACKAGE")
  orig="$(compgen -G "$CACHE/src/${SOURCE_PACKAGE}_*.orig.tar.*" | head -n 1 || true)"
  [[ -n "$orig" ]] || fail "apt-get source left no ${SOURCE_PACKAGE}_*.orig.tar.* in $CACHE/src"
fi

# --- Kokkos alone --------------------------------------------------------------
say "extracting packages/kokkos from $(basename "$orig")"
logged extract tar -xf "$orig" -C "$WORK" --wildcards '*/packages/kokkos/*'
kokkos_src="$(dirname "$(compgen -G "$WORK/*/packages/kokkos/CMakeLists.txt" | head -n 1)")"
[[ -f "$kokkos_src/CMakeLists.txt" ]] || fail "no packages/kokkos/CMakeLists.txt in $orig"

say "building Kokkos with OpenMP into $PREFIX (about 1 minute on 2 cores)"
rm -rf "$PREFIX"
logged configure cmake -S "$kokkos_src" -B "$WORK/build" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_EXTENSIONS=OFF \
  -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON \
  -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF
logged build cmake --build "$WORK/build" -j"$JOBS"
logged install cmake --install "$WORK/build"
touch "$PREFIX/.complete"
echo "$PREFIX"
