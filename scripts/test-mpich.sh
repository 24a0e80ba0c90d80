#!/usr/bin/env bash
# Builds the project with MPICH instead of Open MPI and runs every test there:
# installs MPICH and its parallel HDF5 next to Open MPI if missing (Open MPI
# stays the system default), configures build-mpich with -DISOSTENCIL_MPI=mpich,
# builds, and runs ctest. Extra arguments go to ctest (e.g. -R hygiene).
#
# Environment: BUILD_DIR (default build-mpich), JOBS (default 2), CMAKE_ARGS,
# SETUP_VERBOSE=1 (as for scripts/setup.sh), ISOSTENCIL_TEST_TIME_SCALE (default 3).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export ISOSTENCIL_MPI=mpich
export BUILD_DIR="${BUILD_DIR:-build-mpich}"
# MPICH's ranks busy-poll while they wait (Open MPI yields when oversubscribed,
# MPIR_CVAR_POLLS_BEFORE_YIELD changed nothing here): 8 ranks on 2 cores run
# several times slower, so every test's time limit is tripled.
export CMAKE_ARGS="-DISOSTENCIL_TEST_TIME_SCALE=${ISOSTENCIL_TEST_TIME_SCALE:-3} ${CMAKE_ARGS:-}"

bash scripts/setup.sh
exec ctest --test-dir "$BUILD_DIR" --output-on-failure -j"${JOBS:-2}" --timeout 1800 "$@"
