#!/usr/bin/env bash
# Builds if needed, then runs the isostencil driver on NP ranks (default 2).
# With no arguments it runs `run`: the sample solver of the built-in default
# deck (inputs/default.toml), output in output/. `demo` stays available.
#   scripts/run.sh                      # isostencil run on 2 ranks
#   scripts/run.sh demo                 # the collectives demo
#   NP=4 scripts/run.sh plan --moore 3:1 --procs 2,2,1
#   MPIEXEC=srun MPIEXEC_NUMPROC_FLAG=-n NP=8 scripts/run.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${BUILD_DIR:-build}"
NP="${NP:-2}"

# Quiet once a build tree exists; the first run says what it installs and builds.
if [[ -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  SETUP_QUIET=1 bash scripts/setup.sh
else
  bash scripts/setup.sh
fi

(($# > 0)) || set -- run

# mpirun -np NP, or MPIEXEC / MPIEXEC_NUMPROC_FLAG (e.g. srun -n); Open MPI
# gets --oversubscribe only for more ranks than cores (scripts/mpi-launcher.sh).
source scripts/mpi-launcher.sh
mpi_launcher "$NP"
driver="$BUILD_DIR/apps/isostencil"
[[ -d "$driver" ]] && driver="$driver/isostencil"
[[ -x "$driver" ]] || { echo "run: $driver was not built" >&2; exit 1; }
exec "${launcher[@]}" "$driver" "$@"
