#!/usr/bin/env bash
# The fixed cost of a small exchange: 3-D Moore r=1 alltoall (26 blocks) and
# allgather with self (27 blocks) of 1..64 B per block (28 and 29 B: the two
# sides of the inline-send limit for alltoall's 9-block messages; 4 KiB to
# show where posting stops mattering), at NP ranks (default 2), on shared
# memory and over TCP loopback (--mca btl tcp,self). Contenders: torus and
# direct with the default posting (automatic: fresh requests up to 256 B per
# message) and with persistent requests forced (@persistent), auto, the
# MPI_Sendrecv bounds of both schedules, MPI_Neighbor_alltoall/allgather.
# About 80 s in all on the project's 2-core VM under load.
#
#   scripts/bench_small.sh [--out DIR] [--quick]
#
# Writes small-shm.csv, small-tcp.csv (iso-bench collectives rows) and
# summary.md (each target -> measured ratio, scripts/small_summary.py), with
# the load average before and after. BUILD_DIR, NP, JOBS, MPIEXEC as for
# scripts/bench.sh; builds iso-bench in BUILD_DIR.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bench-common.sh

QUICK=0
while (($# > 0)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    *) bench_option bench_small.sh 17 "$@"; shift "$bench_shift" ;;
  esac
done
bench_settings "small-$(date -u +%Y%m%dT%H%M%SZ)"
LOG="$OUT/bench.log"
: >"$LOG"
say() { echo "bench_small: $*" | tee -a "$LOG"; }

bench_build "$LOG" iso-bench
source scripts/mpi-launcher.sh
mpi_launcher "$NP"

SIZES=1,2,4,8,16,28,29,32,64,4K; REPS=200; LAUNCHES=3
((QUICK)) && SIZES=1,64 && REPS=20 && LAUNCHES=1
# The 27 offsets of 3-D Moore r=1 with the process itself.
SELF="$OUT/moore-d3-r1-self.txt"
for x in -1 0 1; do for y in -1 0 1; do for z in -1 0 1; do echo "$x $y $z"; done; done; done >"$SELF"
CONTENDERS=torus,direct,auto,torus@persistent,direct@persistent,mpi-adjacent,bound-torus,bound-direct

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
say "load before: $LOAD_BEFORE"
TRANSPORTS=(shm)
# TCP through Open MPI's --mca btl tcp,self only (other launchers: shared memory alone).
if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI"; then TRANSPORTS+=(tcp); fi
for transport in "${TRANSPORTS[@]}"; do
  MCA=()
  [[ "$transport" == tcp ]] && MCA=(--mca btl tcp,self)
  for what in "alltoall moore:3:1" "allgather file:$SELF"; do
    set -- $what
    say "$transport $1 $2"
    "${launcher[@]}" "${MCA[@]}" "$BUILD_DIR/apps/bench/iso-bench" collectives -q -o "$1" -n "$2" -s "$SIZES" \
      -c "$CONTENDERS" -r "$REPS" -l "$LAUNCHES" --csv "$OUT/small-$transport-$1.csv" >>"$LOG" 2>&1 ||
      { tail -n 20 "$LOG" >&2; say "iso-bench failed (log: $LOG)"; exit 1; }
  done
  # One CSV per transport: the alltoall rows, then the allgather rows.
  { cat "$OUT/small-$transport-alltoall.csv"; tail -n +2 "$OUT/small-$transport-allgather.csv"; } >"$OUT/small-$transport.csv"
  rm -f "$OUT/small-$transport-alltoall.csv" "$OUT/small-$transport-allgather.csv"
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
say "load after: $LOAD_AFTER"
CSVS=("$OUT/small-shm.csv")
[[ -f "$OUT/small-tcp.csv" ]] && CSVS+=("$OUT/small-tcp.csv")
python3 scripts/small_summary.py "${CSVS[@]}" \
  --load "before $LOAD_BEFORE, after $LOAD_AFTER" >"$OUT/summary.md"
cat "$OUT/summary.md"
