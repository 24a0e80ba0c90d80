#!/usr/bin/env bash
# valgrind memcheck on small 2-rank runs of one Jacobi and one Life deck:
#   scripts/valgrind.sh [ISOSTENCIL binary, default build/apps/isostencil]
# Needs a build without sanitizers (the default build/). Errors inside the MPI
# library are suppressed (Open MPI's own file plus tests/sanitize/valgrind-mpi.supp);
# every other error, and every definite leak, fails the run. Logs per rank go
# to $VG_DIR (default build-vg-logs/). Exits non-zero on any error.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN="${1:-build/apps/isostencil}"
VG_DIR="${VG_DIR:-build-vg-logs}"
[ -x "$BIN" ] || { echo "valgrind: $BIN not found; build first (scripts/setup.sh)" >&2; exit 2; }
rm -rf "$VG_DIR"
mkdir -p "$VG_DIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Shared-memory single copy (CMA) reads the peer's memory behind valgrind's back.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

supps=(--suppressions="$PWD/tests/sanitize/valgrind-mpi.supp")
[ -f /usr/share/openmpi/openmpi-valgrind.supp ] && supps+=(--suppressions=/usr/share/openmpi/openmpi-valgrind.supp)

status=0
run_case() {
  local name="$1"; shift
  local start end rc=0
  start=$(date +%s)
  mpirun -np 2 valgrind --tool=memcheck --error-exitcode=97 --leak-check=full \
      --show-leak-kinds=definite --errors-for-leak-kinds=definite --track-origins=yes \
      --num-callers=30 --gen-suppressions=all "${supps[@]}" \
      --log-file="$VG_DIR/$name.rank%q{OMPI_COMM_WORLD_RANK}.log" \
      "$BIN" run "$@" --set output.dir="$VG_DIR/$name-output" -q > "$VG_DIR/$name.out" 2>&1 || rc=$?
  end=$(date +%s)
  local errors
  errors=$(grep -h "ERROR SUMMARY" "$VG_DIR/$name".rank*.log | sed 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/' | paste -sd+ | bc)
  local definite
  definite=$(grep -h "definitely lost:" "$VG_DIR/$name".rank*.log | sed 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/' | tr -d , | paste -sd+ | bc)
  echo "valgrind: $name: exit $rc, $errors error(s), ${definite:-0} bytes definitely lost (2 ranks, $((end - start)) s)"
  if [ "$rc" -ne 0 ] || [ "${errors:-1}" -ne 0 ]; then
    status=1
    echo "valgrind: $name: see $VG_DIR/$name.rank*.log and $VG_DIR/$name.out"
    tail -5 "$VG_DIR/$name.out" | sed 's/^/    /'
  fi
}

run_case jacobi inputs/jacobi_2d_5pt.toml --set grid.extent=32,32 --set run.steps=60 \
    --set run.residual_every=20 --set halo.validate_every=20 --set output.every=30 \
    --set output.checkpoint_every=30
run_case life inputs/life_2d_soup.toml --set grid.extent=32,32 --set run.steps=40 \
    --set run.residual_every=10 --set halo.validate_every=10 --set output.every=20 \
    --set output.checkpoint_every=20
exit $status
