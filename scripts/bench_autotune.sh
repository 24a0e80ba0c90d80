#!/usr/bin/env bash
# auto and tune against every algorithm they choose from: 3-D Moore r=1
# alltoall at NP ranks (default 2), block sizes 1 B .. 64 KiB (every power of
# two), one iso-bench run per transport: shared memory (autotune-shm.csv) and
# Open MPI's TCP transport, `--mca btl tcp,self` (autotune-tcp.csv; skipped
# with another MPI library). Then scripts/plot_bench.py --ratios: per
# transport each contender's time over the fastest's (plots/ratios_*.png),
# ratios.md with the auto/fastest and tune/fastest tables, and a verdict line
# per transport for auto and tune (worst ratio, where, within 5 % or not).
# scripts/bench.sh runs it as its `autotune` entry; alone:
#
#   scripts/bench_autotune.sh [--out DIR] [--quick] [--no-build] [--follow-tune]
#
#   --out DIR       output folder (default bench-results/autotune-<UTC date-time>)
#   --quick         a smoke run (sizes 1, 64, 4 KiB; 10 reps, 1 launch)
#   --no-build      use BUILD_DIR's iso-bench as it is (default: build that target)
#   --follow-tune   auto after one tuning: per transport, first a run of tune
#                   alone fills a tune cache of its own ($OUT/tune_cache.txt,
#                   emptied first), then the contenders run with it, so auto
#                   follows tune's entries and tune reads them
#                   (docs/design/cost-model.md#auto-follows-measurements).
#                   Files autotune-follow-*.csv, autotune-follow.md,
#                   plots-follow/.
#
# The cost model auto uses is whatever ISO_COST_MODEL says: unset, the cached
# calibration (~/.cache/isostencil); ISO_COST_MODEL=defaults for the built-in
# figures. ISO_TUNE_CACHE defaults to off here (without --follow-tune), so
# that tune measures at every init and auto is the model's alone.
# Environment as bench.sh: BUILD_DIR (default build), NP, JOBS, MPIEXEC,
# MPIEXEC_NUMPROC_FLAG, MPIEXEC_PREFLAGS; REPS and LAUNCHES override the
# repetitions per launch (default 100) and launches (default 5). The
# contenders are timed in turns of INTERLEAVE calls each (default 10;
# iso-bench --interleave): the VM's speed drifts by 2x within a run, and
# ratios of medians taken at different moments would measure the drift.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bench-common.sh

OUT=""
QUICK=0
BUILD=1
FOLLOW=0
while (($# > 0)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --follow-tune) FOLLOW=1; shift ;;
    --no-build) BUILD=0; shift ;;
    *) bench_option bench_autotune.sh 34 "$@"; shift "$bench_shift" ;;
  esac
done

bench_settings "autotune-$(date -u +%Y%m%dT%H%M%SZ)"
if ((FOLLOW)); then
  TAG=autotune-follow; PLOTS="$OUT/plots-follow"
  export ISO_TUNE_CACHE="$OUT/tune_cache.txt"
  rm -f "$ISO_TUNE_CACHE" "$ISO_TUNE_CACHE.lock"
else
  TAG=autotune; PLOTS="$OUT/plots"
  export ISO_TUNE_CACHE="${ISO_TUNE_CACHE:-off}"
fi

say() { echo "bench_autotune: $*"; }

if ((BUILD)); then bench_build "$OUT/autotune-build.log" iso-bench; fi
BENCH="$BUILD_DIR/apps/bench/iso-bench"
[[ -x "$BENCH" ]] || { say "$BENCH is missing" >&2; exit 1; }

source scripts/mpi-launcher.sh
mpi_launcher "$NP"
MPIRUN=("${launcher[@]}")

CONTENDERS=linear,torus,torus:p1,torus:p2,direct,basis,auto,tune,mpi-adjacent
if ((QUICK)); then
  SIZES=1,64,4K; REPS="${REPS:-10}"; LAUNCHES="${LAUNCHES:-1}"
else
  SIZES=1,2,4,8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K; REPS="${REPS:-100}"; LAUNCHES="${LAUNCHES:-5}"
fi
COMMON=(collectives -o alltoall -n moore:3:1 -c "$CONTENDERS" -s "$SIZES" -r "$REPS" -l "$LAUNCHES"
  --interleave "${INTERLEAVE:-10}")
MODEL="${ISO_COST_MODEL:-cached calibration in ${XDG_CACHE_HOME:-$HOME/.cache}/isostencil}"
say "cost model: $MODEL; ISO_TUNE_CACHE=$ISO_TUNE_CACHE; load: $(cut -d' ' -f1-3 /proc/loadavg)"

CSVS=()
measure() {  # transport, extra launcher flags...
  local transport="$1"; shift
  local t0
  t0=$(date +%s)
  if ((FOLLOW)); then  # one tuning per size into the cache the contenders then read
    say "$transport: tuning into $ISO_TUNE_CACHE"
    "${MPIRUN[@]}" "$@" "$BENCH" collectives -o alltoall -n moore:3:1 -c tune -s "$SIZES" -r 1 -l 1 \
      >"$OUT/$TAG-$transport-tuning.txt" 2>&1 ||
      { tail -n 20 "$OUT/$TAG-$transport-tuning.txt" >&2; say "$transport: the tuning failed" >&2; exit 1; }
  fi
  say "$transport: ${MPIRUN[*]} $* $BENCH ${COMMON[*]}"
  if ! "${MPIRUN[@]}" "$@" "$BENCH" "${COMMON[@]}" --csv "$OUT/$TAG-$transport.csv" \
      >"$OUT/$TAG-$transport.txt" 2>&1; then
    tail -n 20 "$OUT/$TAG-$transport.txt" >&2
    say "$transport failed (output: $OUT/$TAG-$transport.txt)" >&2
    exit 1
  fi
  say "$transport: done in $(($(date +%s) - t0)) s; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  CSVS+=("$OUT/$TAG-$transport.csv")
}
measure shm
if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI"; then
  measure tcp --mca btl tcp,self
else
  say "tcp: skipped ($MPIEXEC is not Open MPI's launcher)"
fi

python3 scripts/plot_bench.py --ratios "${CSVS[@]}" -o "$PLOTS" >"$OUT/$TAG-plots.txt" 2>&1 ||
  { cat "$OUT/$TAG-plots.txt" >&2; say "plot_bench.py --ratios failed" >&2; exit 1; }
{
  if ((FOLLOW)); then
    echo "## auto and tune against the fastest contender, after one tuning"
    echo
    echo "Tune ran once per size first (its own cache, $ISO_TUNE_CACHE); then auto followed its entries and tune read them."
  else
    echo "## auto and tune against the fastest contender"
  fi
  echo
  echo "cost model: $MODEL; $NP ranks; $REPS reps x $LAUNCHES launches; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  cat "$PLOTS/ratios.md"
} >"$OUT/$TAG.md"
grep -v '^/' "$OUT/$TAG-plots.txt" || true
say "done: $OUT/$TAG.md, plots in $PLOTS"
