#!/usr/bin/env bash
# Starts the isostencil driver under mpirun with a sensible number of ranks:
# NP if set, else one rank per core (nproc), at most 8 and at least 1. It does
# not build (scripts/run.sh does); it finds the driver in BUILD_DIR (default
# build) or on PATH. Arguments go to the driver; without any it runs the
# built-in default deck (`isostencil run`).
#   scripts/isostencil-run.sh                                   # run, default deck
#   scripts/isostencil-run.sh run inputs/life_2d_gun.toml --set run.steps=300
#   NP=3 scripts/isostencil-run.sh run --restart output/jacobi_2d_5pt.checkpoint.h5
#   scripts/isostencil-run.sh halo-check --ranks-note
#   MPIEXEC=srun MPIEXEC_NUMPROC_FLAG=-n NP=64 scripts/isostencil-run.sh run deck.toml
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$root/build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$root/$BUILD_DIR"

driver="$BUILD_DIR/apps/isostencil"
[[ -d "$driver" ]] && driver="$driver/isostencil"
if [[ ! -x "$driver" ]]; then
  driver="$(command -v isostencil || true)"
  [[ -n "$driver" ]] || { echo "isostencil-run: no driver in $BUILD_DIR/apps (build first: scripts/setup.sh) or on PATH" >&2; exit 1; }
fi

if [[ -z "${NP:-}" ]]; then
  NP="$(nproc 2>/dev/null || echo 2)"
  ((NP > 8)) && NP=8
  ((NP < 1)) && NP=1
fi

(($# > 0)) || set -- run

# mpirun -np NP, or MPIEXEC / MPIEXEC_NUMPROC_FLAG (e.g. srun -n); Open MPI
# gets --oversubscribe only for more ranks than cores (scripts/mpi-launcher.sh).
source "$root/scripts/mpi-launcher.sh"
mpi_launcher "$NP"
exec "${launcher[@]}" "$driver" "$@"
