#!/usr/bin/env bash
# The network targets in one run, at 2 ranks over TCP, on the 3-D Moore r=1
# neighbourhood: either loopback on this machine (--transport tcp, Open MPI's
# `--mca btl tcp,self`) or across 2 emulated hosts (--transport hosts:
# scripts/multihost.sh, one rank in each network namespace). It writes the
# CSVs and targets.md (each target -> measured ratio -> met/missed) into the
# output folder.
#
#   scripts/bench_network.sh [--transport tcp|hosts] [--out DIR] [--quick] [--no-build]
#
# Steps, each under the same launcher:
#   1. `isostencil plan --predict --model calibrate --save-model model.txt`:
#      the cost model calibrated on this transport, and its predictions for
#      linear, torus, direct and basis at 8 B, 512 B and 8 KiB (predict.json);
#   2. iso-bench alltoall and allgather, 1 B .. 64 KiB, with torus, linear,
#      direct, auto (that calibration: ISO_COST_MODEL=model.txt), basis and
#      mpi-adjacent (collectives.csv);
#   3. isostencil-bench-halo, the 27-point Jacobi halo at 16^3 with auto,
#      naive and mpi-neighbor (halo.csv).
# Environment: BUILD_DIR (default build), REPS (default 100), LAUNCHES
# (default 5), JOBS (default 2), MPIEXEC (as scripts/mpi-launcher.sh). Exit
# status 77: the hosts cannot be built, or the launcher is not Open MPI's
# (the reason is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-common.sh

TRANSPORT=tcp
OUT=""
QUICK=0
BUILD=1
while (($#)); do
  case "$1" in
    --transport) TRANSPORT="${2:?--transport needs tcp or hosts}"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --no-build) BUILD=0; shift ;;
    *) bench_option bench_network 22 "$@"; shift "$bench_shift" ;;
  esac
done
[[ "$TRANSPORT" == tcp || "$TRANSPORT" == hosts ]] ||
  { echo "bench_network: --transport is tcp or hosts, not '$TRANSPORT'" >&2; exit 2; }

bench_settings "network-$TRANSPORT-$(date -u +%Y%m%dT%H%M%SZ)"
export ISO_TUNE_CACHE="${ISO_TUNE_CACHE:-off}"
say() { echo "bench_network: $*"; }

if ((BUILD)); then bench_build "$OUT/build.log" iso-bench isostencil-bench-halo isostencil; fi
B="$(cd "$BUILD_DIR" && pwd)"
for program in apps/bench/iso-bench benchmarks/isostencil-bench-halo apps/isostencil; do
  [[ -x "$B/$program" ]] || { say "$B/$program is missing" >&2; exit 1; }
done

if [[ "$TRANSPORT" == hosts ]]; then
  set +e
  scripts/multihost.sh --check
  status=$?
  set -e
  ((status == 0)) || exit "$status"
  LAUNCH=(scripts/multihost.sh -n 2 -r 1 --)
else
  source scripts/mpi-launcher.sh
  mpi_launcher 2
  "${launcher[0]}" --version 2>&1 | grep -q "Open MPI\|OpenRTE" ||
    { say "SKIP: ${launcher[0]} is not Open MPI's launcher (--mca btl tcp,self selects TCP there)" >&2; exit 77; }
  LAUNCH=("${launcher[@]}" --mca btl tcp,self)
fi

if ((QUICK)); then
  SIZES=1,8K; REPS="${REPS:-10}"; LAUNCHES="${LAUNCHES:-1}"; HALO_REPS=5
else
  SIZES=1,8,64,512,8K,64K; REPS="${REPS:-100}"; LAUNCHES="${LAUNCHES:-5}"; HALO_REPS=100
fi

run() {  # name, command...
  local name="$1"; shift
  local t0
  t0=$(date +%s)
  say "$name: $*"
  if ! "$@" >"$OUT/$name.txt" 2>&1; then
    tail -n 20 "$OUT/$name.txt" >&2
    say "$name failed (output: $OUT/$name.txt)" >&2
    exit 1
  fi
  say "$name: done in $(($(date +%s) - t0)) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
}

say "transport $TRANSPORT; load $(cut -d' ' -f1-3 /proc/loadavg)"
run predict "${LAUNCH[@]}" "$B/apps/isostencil" plan --moore 3:1 --procs 2,1,1 --predict -b 8,512,8192 \
  --model calibrate --save-model "$OUT/model.txt" --json
# The JSON is rank 0's only output on stdout.
python3 - "$OUT/predict.txt" "$OUT/predict.json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
start = text.index("{")
data, _ = json.JSONDecoder().raw_decode(text[start:])
json.dump(data, open(sys.argv[2], "w"), indent=1)
EOF
export ISO_COST_MODEL="$OUT/model.txt"
run collectives "${LAUNCH[@]}" "$B/apps/bench/iso-bench" collectives -q -o alltoall -o allgather -n moore:3:1 \
  -s "$SIZES" -c torus,linear,direct,basis,auto,mpi-adjacent -r "$REPS" -l "$LAUNCHES" --csv "$OUT/collectives.csv"
run halo "${LAUNCH[@]}" "$B/benchmarks/isostencil-bench-halo" --cases jacobi27 --size3 16 \
  --contenders auto naive mpi-neighbor --reps "$HALO_REPS" --csv "$OUT/halo.csv"

python3 scripts/network_targets.py --transport "$TRANSPORT" --dir "$OUT" >"$OUT/targets.md"
cat "$OUT/targets.md"
say "done: $OUT/targets.md"
