#!/usr/bin/env bash
# The fixed cost of a small exchange: 3-D Moore r=1 alltoall (26 blocks) and
# allgather with self (27 blocks) of 1..64 B per block (28 and 29 B: the two
# sides of the inline-send limit for alltoall's 9-block messages; 4 KiB to
# show where posting stops mattering), at NP ranks (default 2), on shared
# memory and over TCP loopback (--mca btl tcp,self). Contenders: torus and
# direct with the default posting (automatic: fresh requests up to 256 B per
# message) and with persistent requests forced (@persistent), auto, the
# MPI_Sendrecv bounds of both schedules, MPI_Neighbor_alltoall/allgather.
# Linear too, where auto weighs it against combining. About 100 s in all on
# the project's 2-core VM under load.
#
#   scripts/bench_small.sh [--out DIR] [--quick] [--sizes LIST] [--first-run]
#
# --sizes LIST   block sizes instead of the default (iso-bench -s syntax).
# --first-run    auto as a new user's first run gets it: an empty calibration
#                cache (XDG_CACHE_HOME under DIR), so the first iso-bench run
#                of each transport calibrates and the later one reuses it;
#                the calibrated models are kept as model-<transport>.txt.
#                Without it auto uses the caller's cache or ISO_COST_MODEL.
#
# Contenders are timed in turns of INTERLEAVE calls (default 10; iso-bench
# --interleave), so that ratios compare the same moments of the machine.
#
# Writes small-shm.csv, small-tcp.csv (iso-bench collectives rows) and
# summary.md (each target -> measured ratio, scripts/small_summary.py), with
# the load average before and after. BUILD_DIR, NP, JOBS, MPIEXEC as for
# scripts/bench.sh; builds iso-bench in BUILD_DIR.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bench-common.sh

QUICK=0 FIRST_RUN=0 SIZES=""
while (($# > 0)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --first-run) FIRST_RUN=1; shift ;;
    --sizes) SIZES="${2:?--sizes needs a list}"; shift 2 ;;
    *) bench_option bench_small.sh 25 "$@"; shift "$bench_shift" ;;
  esac
done
bench_settings "small-$(date -u +%Y%m%dT%H%M%SZ)"
LOG="$OUT/bench.log"
: >"$LOG"
say() { echo "bench_small: $*" | tee -a "$LOG"; }

bench_build "$LOG" iso-bench
source scripts/mpi-launcher.sh
mpi_launcher "$NP"

DEFAULT_SIZES=1,2,4,8,16,28,29,32,64,4K; REPS=200; LAUNCHES=3
((QUICK)) && DEFAULT_SIZES=1,64 && REPS=20 && LAUNCHES=1
SIZES="${SIZES:-$DEFAULT_SIZES}"
if ((FIRST_RUN)); then
  unset ISO_COST_MODEL
  export XDG_CACHE_HOME="$OUT/first-run-cache"
  rm -rf "$XDG_CACHE_HOME"
  mkdir -p "$XDG_CACHE_HOME"
  say "first run: empty calibration cache $XDG_CACHE_HOME"
fi
# The 27 offsets of 3-D Moore r=1 with the process itself.
SELF="$OUT/moore-d3-r1-self.txt"
for x in -1 0 1; do for y in -1 0 1; do for z in -1 0 1; do echo "$x $y $z"; done; done; done >"$SELF"
CONTENDERS=linear,torus,direct,auto,torus@persistent,direct@persistent,mpi-adjacent,bound-torus,bound-direct

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
      -c "$CONTENDERS" -r "$REPS" -l "$LAUNCHES" --interleave "${INTERLEAVE:-10}" --csv "$OUT/small-$transport-$1.csv" >>"$LOG" 2>&1 ||
      { tail -n 20 "$LOG" >&2; say "iso-bench failed (log: $LOG)"; exit 1; }
  done
  if ((FIRST_RUN)); then
    # The model the first run calibrated (one new file per transport).
    model="$(ls -t "$XDG_CACHE_HOME"/isostencil/cost_model-*.txt 2>/dev/null | head -n 1)"
    [[ -n "$model" ]] && cp "$model" "$OUT/model-$transport.txt" && say "calibrated model: model-$transport.txt"
  fi
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
