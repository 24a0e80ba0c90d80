#!/usr/bin/env bash
# Prepares, on a Debian 12 machine with the project's packages installed
# (scripts/setup.sh), the offline kit for a bare GPU node: one folder of at most
# 64 MiB that scripts/gpu-run.sh turns into a CUDA build, the GPU tests and the
# measurements (docs/building-kokkos.md#cuda).
#
#   scripts/gpu-kit.sh KOKKOS_SRC [KIT_DIR]
#
#   KOKKOS_SRC  a Kokkos 4.x release: its tarball (.tar.gz/.tar.xz/.zip not
#               supported) or an unpacked source tree. Never fetched here.
#   KIT_DIR     output folder (default gpu-kit/, ignored by git); emptied first.
#
# The kit holds
#   prefix.tar.xz    Debian packages unpacked (dpkg-deb -x) into a prefix that
#                    needs no installation, plus env.sh (paths, Open MPI and
#                    PMIx relocation) and MANIFEST (package versions)
#   kokkos.tar.xz    the Kokkos tree with the CUDA 13 changes applied
#   isostencil.tar.xz  the project (git archive HEAD)
#   gpu-run.sh       the run script itself, so the node needs nothing else
#
# Which packages: the ones the build and run name (SEED below), then every
# package that owns a shared library one of the kit's ELF files needs and the
# kit does not hold, repeated until nothing is missing. A package is left out
# (BASE) when a bare CUDA node has it anyway: Priority required or important
# (libc, zlib, libudev, ...) or part of build-essential (g++, which nvcc needs
# as its host compiler). Libraries are looked up on this machine (dpkg -S), so
# its packages must be installed: scripts/setup.sh does that.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
LIMIT_MIB=64

if (($# < 1 || $# > 2)); then
  echo "usage: scripts/gpu-kit.sh KOKKOS_SRC [KIT_DIR]" >&2; exit 2
fi
KOKKOS_SRC=$1
KIT=${2:-$ROOT/gpu-kit}
[[ -e $KOKKOS_SRC ]] || { echo "gpu-kit: Kokkos source '$KOKKOS_SRC' does not exist" >&2; exit 2; }
for tool in apt-get apt-cache dpkg-deb dpkg git xz python3 file; do
  command -v "$tool" >/dev/null || { echo "gpu-kit: '$tool' is needed" >&2; exit 2; }
done

# Build headers, CMake configs and compiler wrappers; their runtime libraries
# follow from the library scan below.
SEED="libopenmpi-dev openmpi-bin openmpi-common libopenmpi3 libpmix2
  libhdf5-openmpi-dev libhdf5-openmpi-103-1 libhdf5-openmpi-hl-100
  libtomlplusplus-dev libtomlplusplus3 libcli11-dev libfmt-dev libfmt9
  nlohmann-json3-dev libgtest-dev googletest
  libssl-dev libcurl4-openssl-dev libaec-dev zlib1g-dev"
# h5pcc's link line names -lcrypto -lcurl -lsz -lz: their .so links come from
# the four -dev packages in the last line.

mkdir -p "$KIT"
KIT=$(cd "$KIT" && pwd)
find "$KIT" -mindepth 1 -maxdepth 1 ! -name debs -exec rm -rf {} +
DEBS=$KIT/debs            # download cache (not part of the kit)
STAGE=$KIT/.stage         # unpacked prefix
mkdir -p "$DEBS" "$STAGE/prefix"
P=$STAGE/prefix

# --- base set: what a bare node has ------------------------------------------
declare -A BASE=()
nodeps="--recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances"
# shellcheck disable=SC2086
for p in $(apt-cache depends $nodeps build-essential | grep '^[a-z0-9]'); do BASE[$p]=1; done
is_base() {
  [[ -n ${BASE[$1]:-} ]] && return 0
  local prio
  prio=$(apt-cache show --no-all-versions "$1" 2>/dev/null | awk '/^Priority:/ { print $2; exit }')
  [[ $prio == required || $prio == important ]]
}

declare -A HAVE=()
fetch_unpack() {  # package names
  local p deb
  for p in "$@"; do
    [[ -n ${HAVE[$p]:-} ]] && continue
    HAVE[$p]=1
    deb=$(ls "$DEBS/${p}"_*.deb 2>/dev/null | head -1 || true)
    if [[ -z $deb ]]; then
      (cd "$DEBS" && apt-get download "$p" 2>&1 >/dev/null | grep -v "^W: Download is performed unsandboxed" || true; ls "${p}"_*.deb >/dev/null 2>&1) ||
        { echo "gpu-kit: apt-get download $p failed" >&2; exit 1; }
      deb=$(ls "$DEBS/${p}"_*.deb | head -1)
    fi
    dpkg-deb -x "$deb" "$P"
    echo "$p $(dpkg-deb -f "$deb" Version)" >>"$STAGE/MANIFEST"
  done
}

: >"$STAGE/MANIFEST"
# shellcheck disable=SC2086
fetch_unpack $SEED

# --- closure over shared libraries -------------------------------------------
LDCACHE=$(ldconfig -p)
for round in 1 2 3 4 5 6; do
  libdirs=$(find "$P" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)
  # Fortran bindings are deleted below: their libraries are not followed.
  missing=$(find "$P" -type f \( -name '*.so*' -o -path '*/bin/*' \) \
      ! -name '*fortran*' ! -name '*mpifh*' ! -name '*usempi*' -print0 |
    xargs -0 file -N | awk -F: '/ELF/ { print $1 }' |
    while read -r f; do LD_LIBRARY_PATH=$libdirs ldd "$f" 2>/dev/null || true; done |
    awk '$2 == "=>" && $3 !~ "^'"$P"'" { print $1 }' | sort -u)
  new=()
  for lib in $missing; do
    path=$(awk -v l="$lib" '$1 == l && /x86-64/ && !p { print $NF; p = 1 }' <<<"$LDCACHE")
    [[ -n $path ]] || { echo "gpu-kit: $lib is not installed here (run scripts/setup.sh)" >&2; exit 1; }
    # dpkg knows a library by the path its package shipped (link or target)
    pkg=$( { dpkg -S "$path" || dpkg -S "$(readlink -f "$path")"; } 2>/dev/null |
          awk -F: 'NR == 1 { print $1 }')
    [[ -n $pkg ]] || { echo "gpu-kit: no package owns $path" >&2; exit 1; }
    is_base "$pkg" || [[ -n ${HAVE[$pkg]:-} ]] || new+=("$pkg")
  done
  ((${#new[@]} == 0)) && break
  mapfile -t new < <(printf '%s\n' "${new[@]}" | sort -u)
  echo "gpu-kit: libraries pull in ${new[*]}"
  fetch_unpack "${new[@]}"
done
sort -o "$STAGE/MANIFEST" "$STAGE/MANIFEST"

# --- trim: docs, man pages, static libraries, Fortran, unused programs ----------
rm -rf "$P"/usr/share/{doc,man,info,lintian,bug} "$P"/usr/share/locale
find "$P" -name '*.a' ! -name 'libgtest*.a' ! -name 'libgmock*.a' -delete
find "$P" \( -name '*fortran*' -o -name '*.mod' -o -name '*mpif*' -o -name '*usempi*' \) \
  -exec rm -rf {} + 2>/dev/null || true
# gmock sources and the Java bindings are not used
rm -rf "$P"/usr/src "$P"/usr/share/java "$P"/usr/lib/x86_64-linux-gnu/openmpi/lib/*.jar
# Of the programs only the MPI launchers and compiler wrappers are used
find "$P/usr/bin" -mindepth 1 ! \( -name 'mpi*' -o -name 'orte*' -o -name 'ompi*' -o -name 'opal*' \
  -o -name 'h5pcc*' -o -name 'prte*' -o -name 'pmix*' \) -delete
# Debian's alternatives (made by postinst, absent here): the plain names
for n in mpicc mpicxx mpic++ mpirun mpiexec; do
  [[ -e $P/usr/bin/$n.openmpi ]] && ln -sf "$n.openmpi" "$P/usr/bin/$n"
done
ln -sf h5pcc.openmpi "$P/usr/bin/h5pcc"
mkdir -p "$P/usr/include/x86_64-linux-gnu"
ln -sfn ../../lib/x86_64-linux-gnu/openmpi/include "$P/usr/include/x86_64-linux-gnu/mpi"
find "$P" -type f -name '*.so*' -exec strip --strip-unneeded {} + 2>/dev/null || true
# A -dev link whose library is a base package's (libcrypto.so -> libcrypto.so.3
# of libssl3) dangles in the kit: point it at the node's copy, so the link step
# finds it there instead of missing it.
find "$P" -xtype l -name '*.so' | while read -r link; do
  target=$(readlink "$link")
  for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu; do
    [[ -e $d/$(basename "$target") ]] && { ln -sf "$d/$(basename "$target")" "$link"; break; }
  done
done

# Relocation: sourced by gpu-run.sh with KIT_PREFIX set to where it was unpacked.
cat >"$P/env.sh" <<'EOF'
# Paths and Open MPI / PMIx relocation for the unpacked kit prefix (KIT_PREFIX).
: "${KIT_PREFIX:?set KIT_PREFIX to the unpacked prefix}"
_multi=$KIT_PREFIX/usr/lib/x86_64-linux-gnu
export PATH=$KIT_PREFIX/usr/bin:$PATH
export LD_LIBRARY_PATH=$_multi:$_multi/openmpi/lib:$_multi/hdf5/openmpi:$_multi/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CMAKE_PREFIX_PATH=$KIT_PREFIX/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
# Open MPI derives its directories from OPAL_PREFIX; sysconfdir (/etc) is not
# under the prefix and is named apart.
export OPAL_PREFIX=$KIT_PREFIX/usr
export OPAL_SYSCONFDIR=$KIT_PREFIX/etc/openmpi
export OPAL_PKGDATADIR=$KIT_PREFIX/usr/share/openmpi
export OPAL_LIBDIR=$_multi/openmpi/lib
export OPAL_INCLUDEDIR=$_multi/openmpi/include
export PMIX_INSTALL_PREFIX=$KIT_PREFIX/usr
export PMIX_MCA_mca_base_component_path=$_multi/pmix2/lib/pmix
export OMPI_MCA_mca_base_component_path=$_multi/openmpi/lib/openmpi3
# A node with no InfiniBand, no fabric daemon: shared memory and TCP only.
export OMPI_MCA_btl=self,vader,tcp
export OMPI_MCA_pml=ob1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export HWLOC_HIDE_ERRORS=1
# h5pcc links HDF5's static libraries by default; the kit keeps the shared ones.
export HDF5_USE_SHLIB=yes
unset _multi
EOF
cp "$STAGE/MANIFEST" "$P/MANIFEST"

# --- Kokkos with the CUDA 13 changes ------------------------------------------
KSRC=$STAGE/kokkos
mkdir -p "$KSRC"
if [[ -d $KOKKOS_SRC ]]; then
  (cd "$KOKKOS_SRC" && tar --exclude=.git -cf - .) | tar -xf - -C "$KSRC"
else
  tar -xf "$KOKKOS_SRC" -C "$KSRC" --strip-components=1
fi
[[ -f $KSRC/core/src/Cuda/Kokkos_Cuda_Instance.hpp ]] ||
  { echo "gpu-kit: $KOKKOS_SRC is not a Kokkos source tree" >&2; exit 2; }
python3 "$ROOT/scripts/gpu-kit-patch.py" "$KSRC"
# Kokkos' unit and performance tests are not built on the node (its CMake adds
# those folders only with tests on; example/ it adds always).
rm -rf "$KSRC"/{docs,.github} "$KSRC"/*/unit_test "$KSRC"/*/unit_tests "$KSRC"/*/perf_test
for v in MAJOR MINOR PATCH; do
  sed -n "s/^set(Kokkos_VERSION_$v \([0-9]*\)).*/\1/p" "$KSRC/CMakeLists.txt"
done | paste -sd. >"$STAGE/kokkos-version"

# --- pack ---------------------------------------------------------------------
tar -C "$STAGE" -cf - prefix | xz -T0 -6 >"$KIT/prefix.tar.xz"
tar -C "$STAGE" -cf - kokkos | xz -T0 -6 >"$KIT/kokkos.tar.xz"
git -C "$ROOT" archive --prefix=isostencil/ HEAD | xz -T0 -6 >"$KIT/isostencil.tar.xz"
git -C "$ROOT" rev-parse HEAD >"$KIT/isostencil-commit"
cp "$ROOT/scripts/gpu-run.sh" "$KIT/gpu-run.sh"
cp "$STAGE/MANIFEST" "$KIT/MANIFEST"
cp "$STAGE/kokkos-version" "$KIT/kokkos-version"
rm -rf "$STAGE"

bytes=$(find "$KIT" -mindepth 1 -maxdepth 1 ! -name debs -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "gpu-kit: $KIT: $mib MiB ($bytes bytes; debs/ is a download cache, not part of the kit)"
ls -l "$KIT" | grep -v ' debs$'
if ((bytes > LIMIT_MIB * 1048576)); then
  echo "gpu-kit: the kit exceeds $LIMIT_MIB MiB" >&2; exit 1
fi
