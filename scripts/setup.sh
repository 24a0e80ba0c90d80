#!/usr/bin/env bash
# Installs what the project needs on Debian 12 (as root), configures and builds.
# Idempotent: a machine that has every package skips apt entirely, and an
# up-to-date build tree only re-checks. Quiet on success, full logs on failure.
#
# Environment:
#   BUILD_DIR      build directory (default: build)
#   CMAKE_ARGS     extra arguments for the CMake configure step
#   JOBS           parallel build jobs (default: 2)
#   SETUP_QUIET=1  print nothing on success
#   SETUP_VERBOSE=1  stream apt/CMake/compiler output instead of logging it
#   SETUP_PACKAGES_ONLY=1  install the packages, then stop (no configure/build)
#   ISOSTENCIL_MPI   openmpi (default) or mpich: the MPI library to build with;
#                    mpich also installs MPICH and its parallel HDF5 and
#                    builds in build-mpich unless BUILD_DIR says otherwise
#   ISOSTENCIL_KOKKOS  serial (default: Debian's Kokkos 3.4.1, Serial only) or
#                    openmp: builds Kokkos 3.4.1 with OpenMP once into a cache
#                    folder (scripts/kokkos.sh) and the project against it, in
#                    build-openmp unless BUILD_DIR says otherwise; where the
#                    Serial build's driver exists (SERIAL_BUILD_DIR, default
#                    build: build/apps/isostencil), its path goes to CMake as
#                    ISOSTENCIL_SERIAL_DRIVER (the backend comparison tests)
#   BUILD_TARGETS    build only these targets (space-separated; default: all)
#   SETUP_SLURM=0  do not install slurm-wlm and munge (optional, see below)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

ISOSTENCIL_MPI="${ISOSTENCIL_MPI:-openmpi}"
ISOSTENCIL_KOKKOS="${ISOSTENCIL_KOKKOS:-serial}"
case "$ISOSTENCIL_KOKKOS" in
  serial) ;;
  openmp) BUILD_DIR="${BUILD_DIR:-build-openmp}" ;;
  *) echo "setup: ISOSTENCIL_KOKKOS=$ISOSTENCIL_KOKKOS: expected serial or openmp" >&2; exit 2 ;;
esac
case "$ISOSTENCIL_MPI" in
  openmpi) BUILD_DIR="${BUILD_DIR:-build}" ;;
  mpich) BUILD_DIR="${BUILD_DIR:-build-mpich}" ;;
  *) echo "setup: ISOSTENCIL_MPI=$ISOSTENCIL_MPI: expected openmpi or mpich" >&2; exit 2 ;;
esac
JOBS="${JOBS:-2}"
SETUP_QUIET="${SETUP_QUIET:-0}"
SETUP_VERBOSE="${SETUP_VERBOSE:-0}"

PACKAGES=(
  build-essential cmake
  libopenmpi-dev openmpi-bin
  libtrilinos-kokkos-dev
  libhdf5-openmpi-dev hdf5-tools
  libgtest-dev
  libtomlplusplus-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  python3 python3-matplotlib python3-h5py
  iproute2  # ip netns: the emulated hosts of scripts/multihost.sh and apps.multihost.restart
)
# MPICH coexists with Open MPI (Debian alternatives keep Open MPI the default).
if [[ "$ISOSTENCIL_MPI" == mpich ]]; then PACKAGES+=(libmpich-dev mpich libhdf5-mpich-dev); fi

say() { [[ "$SETUP_QUIET" == 1 ]] || echo "setup: $*"; }
fail() { echo "setup: $*" >&2; exit 1; }

LOG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/isostencil-setup.XXXXXX")"
trap 'rm -rf "$LOG_DIR"' EXIT

# Runs a step with its output in a log; on failure prints the log (unless
# SETUP_QUIET_FAILURE=1, for a step that is retried).
run_logged() {
  local name="$1"; shift
  if [[ "$SETUP_VERBOSE" == 1 ]]; then
    "$@"
    return
  fi
  if "$@" >"$LOG_DIR/$name.log" 2>&1; then
    return 0
  fi
  [[ "${SETUP_QUIET_FAILURE:-0}" == 1 ]] && return 1
  cat "$LOG_DIR/$name.log" >&2
  return 1
}

# --- packages -----------------------------------------------------------------
missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == installed ]] || missing+=("$pkg")
done

if ((${#missing[@]} > 0)); then
  say "installing ${missing[*]}"
  SUDO=()
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null || fail "packages missing (${missing[*]}) and not root; install them or run as root"
    SUDO=(sudo)
  fi
  apt_update() { run_logged apt-update "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=300 update; }
  apt_install() {
    run_logged apt-install "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}"
  }
  # A fresh machine has no package lists; fetch them once before installing.
  if ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then
    apt_update || fail "apt-get update failed"
  fi
  if ! SETUP_QUIET_FAILURE=1 apt_install; then
    say "install failed ($(tail -n 1 "$LOG_DIR/apt-install.log" 2>/dev/null)); refreshing package lists and retrying once"
    apt_update || fail "apt-get update failed"
    apt_install || fail "could not install ${missing[*]}"
  fi
fi

# --- optional: Slurm -------------------------------------------------------------
# slurm-wlm and munge let apps.signal.slurm start a one-node cluster on this
# machine (about 30 s to install); without them that test is skipped. Never
# fatal and capped at 120 s; as root only. Debian starts the daemons' services
# where systemd runs (unconfigured they fail harmlessly): SETUP_SLURM=0 on a
# workstation that should not have them.
if [[ "${SETUP_SLURM:-1}" == 1 && "$(id -u)" == 0 ]] && ! command -v slurmctld >/dev/null; then
  say "installing slurm-wlm munge (optional: the Slurm signal test)"
  SETUP_QUIET_FAILURE=1 run_logged apt-install-slurm timeout 120 env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=60 install -y --no-install-recommends slurm-wlm munge ||
    say "slurm-wlm/munge not installed ($(tail -n 1 "$LOG_DIR/apt-install-slurm.log" 2>/dev/null)); apps.signal.slurm will be skipped"
fi

# --- default MPI ----------------------------------------------------------------
# mpicc, mpirun, mpi.h and hdf5.pc are Debian alternatives; an MPICH install
# must not make them MPICH's: put any that moved back to Open MPI. MPICH
# builds name MPICH's own wrappers (cmake/IsostencilMpiFlavor.cmake).
keep_openmpi_default() {
  local name target current
  for pair in mpi:/usr/bin/mpicc.openmpi mpirun:/usr/bin/mpirun.openmpi \
              mpi-x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu/openmpi/include; do
    name="${pair%%:*}" target="${pair#*:}"
    [[ -e "$target" ]] || continue
    current="$(update-alternatives --query "$name" 2>/dev/null | sed -n 's/^Value: //p')"
    if [[ -n "$current" && "$current" != "$target" ]]; then
      say "alternative $name was $current; setting it back to $target"
      run_logged alternatives "${SUDO[@]}" update-alternatives --set "$name" "$target" ||
        fail "could not set alternative $name to $target"
    fi
  done
}
if dpkg-query -W -f='${db:Status-Status}' mpich 2>/dev/null | grep -qx installed; then
  SUDO=()
  [[ "$(id -u)" == 0 ]] || SUDO=(sudo)
  keep_openmpi_default
fi
[[ "${SETUP_PACKAGES_ONLY:-0}" == 1 ]] && exit 0

# --- configure ----------------------------------------------------------------
# Always configure (a few seconds when nothing changed): test areas are found
# with if(EXISTS), which a plain rebuild would not notice.
# Warnings are errors in the project's own builds (off by default for others).
configure=(cmake -S . -B "$BUILD_DIR" -DISOSTENCIL_WERROR=ON)
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  configure+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
  say "configuring and building $BUILD_DIR (from scratch: about 15 minutes on 2 cores)"
fi
if [[ "$ISOSTENCIL_MPI" == mpich ]]; then configure+=(-DISOSTENCIL_MPI=mpich); fi
if [[ "$ISOSTENCIL_KOKKOS" == openmp ]]; then
  kokkos_prefix="$(JOBS="$JOBS" SETUP_QUIET="$SETUP_QUIET" bash scripts/kokkos.sh openmp)" ||
    fail "could not build Kokkos with OpenMP (scripts/kokkos.sh)"
  configure+=(-DKokkos_ROOT="$kokkos_prefix")
  serial_driver="$(pwd)/${SERIAL_BUILD_DIR:-build}/apps/isostencil"
  if [[ -x "$serial_driver" ]]; then configure+=(-DISOSTENCIL_SERIAL_DRIVER="$serial_driver"); fi
fi
# shellcheck disable=SC2206  # CMAKE_ARGS is a word list by design
configure+=(${CMAKE_ARGS:-})
run_logged configure "${configure[@]}" || fail "configure failed: ${configure[*]}"

# --- build --------------------------------------------------------------------
build=(cmake --build "$BUILD_DIR" -j"$JOBS")
# shellcheck disable=SC2206  # BUILD_TARGETS is a word list by design
if [[ -n "${BUILD_TARGETS:-}" ]]; then build+=(--target ${BUILD_TARGETS}); fi
run_logged build "${build[@]}" || fail "build failed: ${build[*]}"
say "built in $BUILD_DIR${BUILD_TARGETS:+ (targets: $BUILD_TARGETS)}"
