#!/usr/bin/env bash
# Deep halos measured: time per step of `isostencil run` against halo.depth
# k (one exchange per k steps), and what depth = "auto" picks, for Jacobi 3-D
# 7-point and 27-point and Life 2-D, at several cells per rank, on shared
# memory, over TCP loopback (Open MPI: --mca btl tcp,self) and across two
# emulated hosts (scripts/multihost.sh, TCP over veth links). Every row is
# one run's summary (timings.per_step_s, the maximum over ranks); the
# comparisons that matter are ratios within one invocation, on one machine.
#
#   scripts/bench_depth.sh [--out DIR] [--quick]
#
#   --out DIR   output folder (default bench-results/depth-<UTC date-time>):
#               depth.csv (kernel,transport,np,side,cells_per_rank,depth,
#               chosen,per_step_s), depth.md (per case: the best k and its
#               speed-up over k = 1, auto's pick and its ratio to the best)
#               and depth.png (scripts/plot_depth.py)
#   --quick     one case: Jacobi 3-D 7-point, 8^3 per rank, np 2, shared
#               memory, k = 1, 2, 4, 8 and auto
#
# Environment: BUILD_DIR (default build; needs its apps/isostencil),
# MATRIX (transport:ranks pairs, default "shm:2 shm:4 shm:8 tcp:2 tcp:4
# hosts:2"; hosts:N runs N/2 ranks on each of 2 emulated hosts and is left
# out with a note where they cannot be built), SIDES (cells per rank per
# dimension of the 3-D cases, default "4 8 16 32"; Life 2-D gets the same
# cells per rank), DEPTHS (default "1 2 3 4 6 8"), CASES (default
# "jacobi3d7 jacobi3d27 life2d"), STEPS (default: as many as make a depth-1
# run last about RUN_SECONDS, default 0.2, from a 100-step trial; 100..50000),
# REPEATS (runs of each point, default 3: the CSV keeps the fastest, and the
# slowest), MPIEXEC, MPIEXEC_NUMPROC_FLAG, MPIEXEC_PREFLAGS
# (scripts/mpi-launcher.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/mpi-launcher.sh
source scripts/mpi-launcher.sh

OUT=""
QUICK=0
while (($# > 0)); do
  case "$1" in
    --out) OUT="${2:?--out needs a folder}"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_depth.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
BUILD_DIR="${BUILD_DIR:-build}"
EXE="$BUILD_DIR/apps/isostencil"
[[ -x "$EXE" ]] || { echo "bench_depth.sh: no $EXE (build it: scripts/setup.sh)" >&2; exit 1; }
OUT="${OUT:-bench-results/depth-$(date -u +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT/runs"
MATRIX="${MATRIX:-shm:2 shm:4 shm:8 tcp:2 tcp:4 hosts:2}"
SIDES="${SIDES:-4 8 16 32}"
DEPTHS="${DEPTHS:-1 2 3 4 6 8}"
STEPS="${STEPS:-}"
RUN_SECONDS="${RUN_SECONDS:-0.2}"
REPEATS="${REPEATS:-3}"
read -r -a CASES <<<"${CASES:-jacobi3d7 jacobi3d27 life2d}"
if ((QUICK)); then
  MATRIX=shm:2; SIDES=8; DEPTHS="1 2 4 8"; CASES=("jacobi3d7")
fi

# The process grid of n ranks in d dimensions, as MPI_Dims_create would
# (balanced, larger first), for the global extent.
procs_of() {  # ranks dims
  python3 - "$1" "$2" <<'EOF'
import sys
n, d = int(sys.argv[1]), int(sys.argv[2])
dims = [1] * d
f, p = n, 2
factors = []
while f > 1:
    while f % p == 0:
        factors.append(p); f //= p
    p += 1
for q in sorted(factors, reverse=True):
    dims[dims.index(min(dims))] *= q
print(" ".join(str(x) for x in sorted(dims, reverse=True)))
EOF
}

echo "kernel,transport,np,side,cells_per_rank,depth,chosen,per_step_s,slowest_repeat_s,picks,steps,load" >"$OUT/depth.csv"
# One run; prints "cells chosen per_step_s" (nothing when it failed).
run_once() {  # kernel transport np side depth steps tag
  local kernel="$1" transport="$2" np="$3" side="$4" depth="$5" steps="$6" tag="$7"
  local deck dims extent=() procs kernel_sets=()
  # Periodic everywhere: Jacobi then needs source 0 (no steady state else), a
  # random start and no tolerance (a constant field has converged at step 0).
  case "$kernel" in
    jacobi3d7) deck=inputs/jacobi_3d_7pt.toml; dims=3; kernel_sets=(--set kernel.source=0.0 --set run.tolerance=0 --set init.type=\"random\") ;;
    jacobi3d27) deck=inputs/jacobi_3d_27pt.toml; dims=3; kernel_sets=(--set kernel.source=0.0 --set run.tolerance=0 --set init.type=\"random\") ;;
    life2d) deck=inputs/life_2d_soup.toml; dims=2 ;;
  esac
  local per_dim="$side"
  # Life 2-D: the same cells per rank as side^3.
  if [[ "$dims" == 2 ]]; then per_dim=$(python3 -c "print(round(($side**3)**0.5))"); fi
  read -r -a procs <<<"$(procs_of "$np" "$dims")"
  for p in "${procs[@]}"; do extent+=("$((p * per_dim))"); done
  local name="$kernel-$transport-np$np-s$side-k$depth-$tag"
  local flags=()
  case "$transport" in
    shm) mpi_launcher "$np" ;;
    tcp) mpi_launcher "$np"; flags=(--mca btl tcp,self) ;;
    hosts) launcher=(bash scripts/multihost.sh -n 2 -r "$((np / 2))" -t 300 --) ;;
  esac
  local depth_value="$depth"
  [[ "$depth" == auto ]] && depth_value='"auto"'
  if ! "${launcher[@]}" "${flags[@]}" "$EXE" run "$deck" --quiet \
      --set "grid.extent=[$(IFS=,; echo "${extent[*]}")]" --set "grid.procs=[$(IFS=,; echo "${procs[*]}")]" \
      --set grid.periodic=true "${kernel_sets[@]}" --set run.steps="$steps" --set run.residual_every="$steps" \
      --set run.check_finite_every=0 --set halo.validate_every=0 --set output.format=none --set "halo.depth=$depth_value" \
      --set output.dir="$OUT/runs/$name" >"$OUT/runs/$name.txt" 2>&1; then
    echo "bench_depth.sh: $name failed (refused depth?): $(tail -n 2 "$OUT/runs/$name.txt" | tr '\n' ' ')" >&2
    return 0
  fi
  local summary
  summary=$(ls "$OUT/runs/$name"/*.summary.json 2>/dev/null | head -n 1)
  python3 - "$summary" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
cells = 1
for e, p in zip(j["extent"], j["procs"]):
    cells *= e // p
print(cells, j["halo"]["depth"], f"{j['timings']['per_step_s']:.9g}")
EOF
}

# One case (kernel, transport, ranks, size) over every depth and auto: the
# step count from a trial at depth 1, then REPEATS rounds over the depths
# (interleaved, so a burst of load hits one run of each, not every run of
# one depth); each depth's fastest run is its row.
run_case() {  # kernel transport np side
  local kernel="$1" transport="$2" np="$3" side="$4" steps="$STEPS" trial
  if [[ -z "$steps" ]]; then
    trial=$(run_once "$kernel" "$transport" "$np" "$side" 1 100 trial) || true
    [[ -n "$trial" ]] || return 0
    steps=$(python3 -c "import sys; print(max(100, min(50000, round($RUN_SECONDS / float(sys.argv[1])))))" \
      "$(awk '{print $3}' <<<"$trial")")
  fi
  local -A best=() worst=() chosen=() picks=() cells=()
  local rep depth result c k t
  for ((rep = 1; rep <= REPEATS; ++rep)); do
    for depth in $DEPTHS auto; do
      result=$(run_once "$kernel" "$transport" "$np" "$side" "$depth" "$steps" "r$rep") || true
      [[ -n "$result" ]] || continue
      read -r c k t <<<"$result"
      cells[$depth]=$c
      # auto's picks, one per repeat ("4/4/2"); `chosen` is the fastest run's.
      picks[$depth]="${picks[$depth]:+${picks[$depth]}/}$k"
      if [[ -z "${best[$depth]:-}" ]] || awk -v a="$t" -v b="${best[$depth]}" 'BEGIN { exit !(a + 0 < b + 0) }'; then
        best[$depth]=$t chosen[$depth]=$k
      fi
      if [[ -z "${worst[$depth]:-}" ]] || awk -v a="$t" -v b="${worst[$depth]}" 'BEGIN { exit !(a + 0 > b + 0) }'; then worst[$depth]=$t; fi
    done
  done
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  for depth in $DEPTHS auto; do
    [[ -n "${best[$depth]:-}" ]] || continue
    echo "$kernel,$transport,$np,$side,${cells[$depth]},$depth,${chosen[$depth]},${best[$depth]},${worst[$depth]},${picks[$depth]},$steps,$load" >>"$OUT/depth.csv"
  done
}

for pair in $MATRIX; do
  transport="${pair%%:*}" np="${pair#*:}"
  if [[ "$transport" == hosts ]] && ! bash scripts/multihost.sh -n 2 --check >"$OUT/runs/hosts-check.txt" 2>&1; then
    echo "bench_depth.sh: emulated hosts left out: $(tail -n 1 "$OUT/runs/hosts-check.txt")" | tee -a "$OUT/notes.txt" >&2
    continue
  fi
  for kernel in "${CASES[@]}"; do
    for side in $SIDES; do
      run_case "$kernel" "$transport" "$np" "$side"
    done
  done
done

# The halo that reaches two processes away (depth 6 of a 7-point stencil
# over 4^3 subdomains, 8 ranks), validated against the naive exchange at
# every step; the matrix above timed it without validation.
if ((!QUICK)); then
  mpi_launcher 8
  if "${launcher[@]}" "$EXE" run inputs/jacobi_3d_7pt.toml --quiet --set "grid.extent=[8,8,8]" \
      --set "grid.procs=[2,2,2]" --set grid.periodic=true --set run.steps=60 --set halo.depth=6 \
      --set halo.validate_every=1 --set output.format=none --set output.dir="$OUT/runs/wide-validated" \
      >"$OUT/runs/wide-validated.txt" 2>&1; then
    echo "wide halo (7-point, depth 6 over 4^3 subdomains, np 8, reach 2 processes): 60 steps validated at every step" >>"$OUT/notes.txt"
  else
    echo "wide halo validation FAILED: see $OUT/runs/wide-validated.txt" | tee -a "$OUT/notes.txt" >&2
  fi
fi

python3 - "$OUT/depth.csv" >"$OUT/depth.md" <<'EOF'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
cases = defaultdict(dict)
tally = {}
for r in rows:
    cases[(r["kernel"], r["transport"], r["np"], r["side"])][r["depth"]] = r
# "auto vs best": auto's own run (its fastest) over the best fixed k; "pick vs
# best": the fixed-k time of each depth auto picked over the best (its choice
# judged without its own run's noise; "-" where the pick was not a fixed
# depth of the matrix).
print("| kernel | transport | np | cells/rank | k=1 s/step | best k | best vs k=1 | auto picks | auto vs best | pick vs best |")
print("|---|---|---|---|---|---|---|---|---|---|")
for key, by in sorted(cases.items()):
    fixed = {d: float(r["per_step_s"]) for d, r in by.items() if d != "auto"}
    if "1" not in fixed:
        continue
    best = min(fixed, key=fixed.get)
    auto = by.get("auto")
    if auto:
        picks = auto["picks"].split("/")
        judged = "/".join(f"{fixed[p] / fixed[best]:.2f}" if p in fixed else "-" for p in picks)
        auto_text = f"{auto['picks']} | {float(auto['per_step_s']) / fixed[best]:.2f} | {judged}"
    else:
        auto_text = "- | - | -"
    cells = next(iter(by.values()))["cells_per_rank"]
    print(f"| {key[0]} | {key[1]} | {key[2]} | {cells} | {fixed['1']:.3g} | {best} | "
          f"{fixed['1'] / fixed[best]:.2f}x | {auto_text} |")
    if auto:
        group = (key[1], key[2])
        runs = tally.setdefault(group, [0, 0, 0, 0])
        runs[0] += float(auto["per_step_s"]) <= 1.10 * fixed[best]
        runs[1] += 1
        known = [p for p in auto["picks"].split("/") if p in fixed]
        if known:
            runs[2] += all(fixed[p] <= 1.10 * fixed[best] for p in known)
            runs[3] += 1
print()
print("auto within 10 % of the best k (its own run; its picks timed at that fixed k):")
print()
for (transport, np), (run_ok, run_n, pick_ok, pick_n) in sorted(tally.items()):
    print(f"- {transport} np {np}: {run_ok} of {run_n} cases; picks {pick_ok} of {pick_n}")
EOF
if [[ -f "$OUT/notes.txt" ]]; then { echo; sed 's/^/- /' "$OUT/notes.txt"; } >>"$OUT/depth.md"; fi
cat "$OUT/depth.md"
python3 scripts/plot_depth.py "$OUT/depth.csv" -o "$OUT/depth.png" || echo "bench_depth.sh: no plot (plot_depth.py failed)" >&2
echo "bench_depth.sh: $OUT/depth.csv, $OUT/depth.md, $OUT/depth.png"
