#!/usr/bin/env bash
# The packed halo transport against the datatype transport, in one short run
# (well under a minute): isostencil-bench-halo's 27-point halo (jacobi27) at
# 16^3 and 64^3 cells per rank, on 1 and on 2 ranks, each packed-X contender
# timed beside X (torus, linear, auto) rep by rep, so the ratios compare
# times taken under the same load. The target (issue 32, part 4): halo time
# packed / datatypes <= 1.2 everywhere.
#
#   scripts/bench_packed.sh [--out DIR]
#
#   --out DIR   output folder (default bench-results/packed): halo-packed-np1.csv,
#               halo-packed-np2.csv (the benchmark's rows, halo_vs_datatypes
#               the ratio of medians, halo_min_vs_datatypes of fastest reps),
#               packed.md (the ratios as a table, with the load before and after)
#
# Environment: BUILD_DIR (default build; needs benchmarks/isostencil-bench-halo),
# REPS (default 40), MPIEXEC, MPIEXEC_NUMPROC_FLAG, MPIEXEC_PREFLAGS
# (scripts/mpi-launcher.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/mpi-launcher.sh
source scripts/mpi-launcher.sh

OUT="bench-results/packed"
while (($# > 0)); do
  case "$1" in
    --out) OUT="${2:?--out needs a folder}"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_packed.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
BUILD_DIR="${BUILD_DIR:-build}"
REPS="${REPS:-40}"
BENCH="$BUILD_DIR/benchmarks/isostencil-bench-halo"
[[ -x "$BENCH" ]] || { echo "bench_packed.sh: no $BENCH (cmake --build $BUILD_DIR --target isostencil-bench-halo)" >&2; exit 1; }
mkdir -p "$OUT"

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for np in 1 2; do
  mpi_launcher "$np"
  "${launcher[@]}" "$BENCH" --cases jacobi27 --size3 16 64 \
    --contenders torus packed-torus linear packed-linear auto packed-auto --reps "$REPS" \
    --csv "$OUT/halo-packed-np$np.csv" >"$OUT/halo-packed-np$np.txt" 2>&1 ||
    { tail -n 20 "$OUT/halo-packed-np$np.txt" >&2; echo "bench_packed.sh: np $np failed" >&2; exit 1; }
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$OUT" "$load_before" "$load_after" <<'EOF'
import csv, sys
out, before, after = sys.argv[1:4]
rows, halo = [], {}
for np in (1, 2):
    with open(f"{out}/halo-packed-np{np}.csv") as f:
        for r in csv.DictReader(f):
            halo[(r["np"], r["local_n"], r["contender"])] = float(r["halo_us"])
            if r["contender"].startswith("packed-"): rows.append(r)
lines = ["| np | cells per rank | algorithm (chosen) | datatypes halo us | packed halo us | packed / datatypes (median) | (fastest rep) |",
         "|---|---|---|---|---|---|---|"]
worst = worst_fastest = 0.0
for r in rows:
    ratio, best = float(r["halo_vs_datatypes"]), float(r["halo_min_vs_datatypes"])
    worst, worst_fastest = max(worst, ratio), max(worst_fastest, best)
    datatypes = halo[(r["np"], r["local_n"], r["contender"][len("packed-"):])]
    lines.append(f"| {r['np']} | {r['local_n']}^3 | {r['contender'][7:]} ({r['chosen']}) | {datatypes:.2f} | "
                 f"{float(r['halo_us']):.2f} | {ratio:.3f} | {best:.3f} |")
lines.append("")
lines.append(f"- target: packed / datatypes <= 1.2 (median) everywhere: worst {worst:.3f}, "
             + ("met" if worst <= 1.2 else "missed") + f"; of the fastest reps: worst {worst_fastest:.3f}")
lines.append(f"- load average (1, 5, 15 min) before: {before}; after: {after}")
with open(f"{out}/packed.md", "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
