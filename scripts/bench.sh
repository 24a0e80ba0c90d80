#!/usr/bin/env bash
# The whole benchmark suite in one command, at 2 ranks (NP), in well under 15
# minutes on 2 cores: builds (scripts/setup.sh), runs every benchmark, writes
# CSVs, PNG plots and summary.md (every target -> measured ratio ->
# met/missed, in one table, with the load) into the output folder.
#
#   scripts/bench.sh [--out DIR] [--with-petsc] [--quick]
#
#   --out DIR      output folder (default bench-results/<UTC date-time>)
#   --with-petsc   install PETSc (Debian libpetsc-real-dev, Open MPI build) if
#                  missing and run the DMDA comparison; without it the PETSc
#                  benchmark runs only when PETSc is already installed
#   --quick        a smoke run of the same pipeline (tiny sizes, few reps)
#   --targets-only skip scripts/setup.sh (packages, full build): reconfigure an
#                  existing BUILD_DIR and build only the benchmark programs
#   --no-backends  skip the backends entry (below) and so the OpenMP build
#
# Backends (1 rank, whatever NP says): Jacobi 7-point at 128^3 and Life 2-D at
# 2048^2 on Serial (BUILD_DIR), OpenMP with 1 and with 2 threads (the OpenMP
# build, OPENMP_BUILD_DIR, default build-openmp: scripts/setup.sh with
# ISOSTENCIL_KOKKOS=openmp, only the two benchmark programs built); ratios in
# backends.md (also appended to summary.md), backends.csv, plots/backends.png.
#
# Ports: 3-D Moore r=1 and r=3 and shales, alltoall, at k = 1, 2, 4, 6 and no
# limit, on shared memory and over TCP (ports-shm.csv, ports-tcp.csv).
#
# Packed: the packed halo transport against datatypes at 1 and 2 ranks
# (packed/: scripts/bench_packed.sh). Tiles: Jacobi 7-point at depth 4 tile by
# tile against depth 1 at 128^3 and 256^3, 1 rank (tiles.csv).
#
# Autotune: auto and tune against the algorithms they choose from, 3-D Moore
# r=1 alltoall, 1 B .. 64 KiB, shared memory and TCP (autotune-shm.csv,
# autotune-tcp.csv, autotune.md, plots/ratios_*.png; appended to summary.md),
# then the same after one tuning (autotune-follow-*.csv, autotune-follow.md,
# plots-follow/): scripts/bench_autotune.sh, which also runs alone.
#
# Small messages: 3-D Moore r=1 alltoall and allgather of 1-64 B blocks,
# torus and direct with fresh and with persistent posting against their
# MPI_Sendrecv bounds, shared memory and TCP (small-messages/summary.md,
# appended to summary.md): scripts/bench_small.sh, which also runs alone.
#
# Deep halos: time per step against halo.depth k and auto's pick, Jacobi 3-D
# and Life 2-D at 8^3 and 32^3 cells per rank, shared memory and TCP
# (depth/depth.csv, depth/depth.md; appended to summary.md):
# scripts/bench_depth.sh, which also runs alone with the whole matrix.
#
# Environment: BUILD_DIR (default build), OPENMP_BUILD_DIR (default
# build-openmp), NP (default 2), JOBS (default 2), MPIEXEC (default mpirun),
# MPIEXEC_NUMPROC_FLAG (default -np; srun: -n), MPIEXEC_PREFLAGS.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bench-common.sh

OUT=""
WITH_PETSC=0
QUICK=0
TARGETS_ONLY=0
BACKENDS=1
while (($# > 0)); do
  case "$1" in
    --with-petsc) WITH_PETSC=1; shift ;;
    --quick) QUICK=1; shift ;;
    --targets-only) TARGETS_ONLY=1; shift ;;
    --no-backends) BACKENDS=0; shift ;;
    *) bench_option bench.sh 49 "$@"; shift "$bench_shift" ;;
  esac
done

bench_settings "$(date -u +%Y%m%dT%H%M%SZ)"
LOG="$OUT/bench.log"
: >"$LOG"
START=$(date +%s)

say() { echo "bench: $*" | tee -a "$LOG"; }
fail() { echo "bench: $*" >&2; echo "bench: $*" >>"$LOG"; exit 1; }

source scripts/mpi-launcher.sh

# --- PETSc (optional, benchmark only) ----------------------------------------
petsc_found() { pkg-config --exists PETSc 2>/dev/null || pkg-config --exists petsc 2>/dev/null; }
if ((WITH_PETSC)) && ! petsc_found; then
  say "installing libpetsc-real-dev (benchmark-only dependency)"
  SUDO=()
  [[ "$(id -u)" == 0 ]] || SUDO=(sudo)
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y \
    --no-install-recommends libpetsc-real-dev >>"$LOG" 2>&1 ||
    { "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=300 update >>"$LOG" 2>&1 &&
      "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y \
        --no-install-recommends libpetsc-real-dev >>"$LOG" 2>&1; } ||
    fail "could not install libpetsc-real-dev (log: $LOG)"
fi
PETSC_NOTE=""
if petsc_found; then
  # PETSc must use the MPI library the project uses (Open MPI): one libmpi.
  petsc_lib="$(pkg-config --variable=libdir PETSc 2>/dev/null || pkg-config --variable=libdir petsc)"
  petsc_so="$(ls "$petsc_lib"/libpetsc*.so 2>/dev/null | head -n 1 || true)"
  if [[ -n "$petsc_so" ]] && ! ldd "$petsc_so" | grep -q 'libmpi\.so\.40'; then
    PETSC_NOTE="PETSc at $petsc_so is not built on Open MPI (libmpi.so.40): DMDA comparison skipped"
  fi
else
  PETSC_NOTE="PETSc not installed: DMDA comparison skipped (scripts/bench.sh --with-petsc installs it)"
fi
[[ -z "$PETSC_NOTE" ]] || say "$PETSC_NOTE"

# --- build --------------------------------------------------------------------
if ((TARGETS_ONLY)); then
  [[ -f "$BUILD_DIR/CMakeCache.txt" ]] || fail "--targets-only needs a configured $BUILD_DIR"
  say "building the benchmark programs in $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" >>"$LOG" 2>&1 || fail "configure failed (log: $LOG)"
else
  say "building in $BUILD_DIR (scripts/setup.sh)"
  BUILD_DIR="$BUILD_DIR" JOBS="$JOBS" SETUP_QUIET=1 bash scripts/setup.sh >>"$LOG" 2>&1 ||
    fail "build failed (log: $LOG)"
fi
TARGETS=(iso-bench isostencil-bench-stencil isostencil-bench-life isostencil-bench-halo)
if [[ -z "$PETSC_NOTE" ]]; then
  grep -q "isostencil-bench-petsc" "$BUILD_DIR/benchmarks/Makefile" 2>/dev/null ||
    cmake "$BUILD_DIR" >>"$LOG" 2>&1
  TARGETS+=(isostencil-bench-petsc)
fi
cmake --build "$BUILD_DIR" -j"$JOBS" --target "${TARGETS[@]}" >>"$LOG" 2>&1 || fail "build failed (log: $LOG)"
OPENMP_BUILD_DIR="${OPENMP_BUILD_DIR:-build-openmp}"
if ((BACKENDS)); then
  say "building the stencil and Life benchmarks with OpenMP in $OPENMP_BUILD_DIR"
  ISOSTENCIL_KOKKOS=openmp BUILD_DIR="$OPENMP_BUILD_DIR" JOBS="$JOBS" SETUP_QUIET=1 \
    BUILD_TARGETS="isostencil-bench-stencil isostencil-bench-life" bash scripts/setup.sh >>"$LOG" 2>&1 ||
    fail "OpenMP build failed (log: $LOG)"
fi
BUILT=$(date +%s)
say "built in $((BUILT - START)) s; running at $NP ranks; load: $(cut -d' ' -f1-3 /proc/loadavg)"

run() {  # name, command...
  local name="$1"; shift
  local t0=$(date +%s)
  say "$name: $*"
  if ! "$@" >"$OUT/$name.txt" 2>&1; then
    tail -n 20 "$OUT/$name.txt" >&2
    fail "$name failed (output: $OUT/$name.txt)"
  fi
  say "$name: done in $(($(date +%s) - t0)) s"
}
mpi_launcher "$NP"
MPIRUN=("${launcher[@]}")
B="$BUILD_DIR"

if ((QUICK)); then
  A2A_SIZES=1,64,4096; W_SIZES=2,8; OTHER_SIZES=1,64; REPS=10; LAUNCHES=1
  STENCIL_SIZES=(--size 16); LIFE=(--dims 2 --extent 64 --dims 3 --extent 16)
  HALO=(--size3 8 --size3 16 --size2 64 --reps 5); PETSC=(--size 8 --reps 5 --setup-reps 3)
  SETUP=(--dims 2,3 --radii 1,2 --reps 5 --launches 1)
else
  A2A_SIZES=1,2,4,8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K; W_SIZES=2,4,8,16,32,64,128
  OTHER_SIZES=1,64,4K; REPS=100; LAUNCHES=3
  STENCIL_SIZES=(--size 64 --size 128); LIFE=()
  HALO=(--reps 12); PETSC=()
  SETUP=(--dims 2,3,4 --radii 1,2,3 --reps 20 --launches 3)
fi

# Collectives: 3-D Moore r=1 in full (the targets; contenders in turns of 10
# calls, so auto's ratios are taken turn by turn), the others on a subset.
run a2a-moore3 "${MPIRUN[@]}" "$B/apps/bench/iso-bench" collectives -q -o alltoall,allgather -n moore:3:1 \
  -s "$A2A_SIZES" -r "$REPS" -l "$LAUNCHES" --interleave 10 --csv "$OUT/collectives-moore3.csv"
run a2aw-moore3 "${MPIRUN[@]}" "$B/apps/bench/iso-bench" collectives -q -o alltoallw -n moore:3:1 \
  -s "$W_SIZES" -r "$REPS" -l "$LAUNCHES" --csv "$OUT/collectives-moore3-w.csv"
run a2a-others "${MPIRUN[@]}" "$B/apps/bench/iso-bench" collectives -q -o alltoall,allgather \
  -n moore:2:1 moore:2:3 moore:4:1 octant shales -s "$OTHER_SIZES" -r "$((REPS / 4 > 5 ? REPS / 4 : 5))" -l 1 \
  --csv "$OUT/collectives-others.csv"
run setup "${MPIRUN[@]}" "$B/apps/bench/iso-bench" setup -q "${SETUP[@]}" --csv "$OUT/setup.csv"
run stencil "${MPIRUN[@]}" "$B/benchmarks/isostencil-bench-stencil" "${STENCIL_SIZES[@]}" --csv "$OUT/stencil.csv"
run life "${MPIRUN[@]}" "$B/benchmarks/isostencil-bench-life" "${LIFE[@]}" --csv "$OUT/life.csv"
run halo "${MPIRUN[@]}" "$B/benchmarks/isostencil-bench-halo" "${HALO[@]}" --csv "$OUT/halo.csv"
if [[ -z "$PETSC_NOTE" ]]; then
  run petsc "${MPIRUN[@]}" "$B/benchmarks/isostencil-bench-petsc" "${PETSC[@]}" --csv "$OUT/petsc.csv"
fi

# Backends: one rank, so the threads are the only parallelism. Open MPI binds
# a rank of a small job to one core, where two threads would share it.
if ((BACKENDS)); then
  mpi_launcher 1
  MPIRUN1=("${launcher[@]}")
  if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI"; then MPIRUN1+=(--bind-to none); fi
  if ((QUICK)); then JACOBI_N=32; LIFE_N=256; else JACOBI_N=128; LIFE_N=2048; fi
  for variant in serial openmp1 openmp2; do
    dir="$B"
    env_vars=()
    case "$variant" in
      openmp1) dir="$OPENMP_BUILD_DIR"; env_vars=(OMP_NUM_THREADS=1 OMP_PROC_BIND=false) ;;
      openmp2) dir="$OPENMP_BUILD_DIR"; env_vars=(OMP_NUM_THREADS=2 OMP_PROC_BIND=false) ;;
    esac
    run "backends-stencil-$variant" env "${env_vars[@]}" "${MPIRUN1[@]}" \
      "$dir/benchmarks/isostencil-bench-stencil" --size "$JACOBI_N" --kernels jacobi7 \
      --csv "$OUT/backends-stencil-$variant.csv"
    run "backends-life-$variant" env "${env_vars[@]}" "${MPIRUN1[@]}" \
      "$dir/benchmarks/isostencil-bench-life" --dims 2 --extent "$LIFE_N" \
      --csv "$OUT/backends-life-$variant.csv"
  done
fi
# Ports (OperationOptions::ports, iso-bench's "torus:pK"): k = 1, 2, 4 and 2d
# = 6 against no limit and MPI_Neighbor_alltoall, on shared memory and on
# Open MPI's TCP transport (loopback: the transport between nodes).
PORT_CONTENDERS=torus,torus:p1,torus:p2,torus:p4,torus:p6,direct,direct:p1,direct:p2,basis,basis:p1
PORT_CONTENDERS+=,linear,linear:p1,linear:p4,mpi-adjacent
if ((QUICK)); then PORT_SIZES=8; PORT_REPS=10; else PORT_SIZES=8,512,8K; PORT_REPS=50; fi
run ports-shm "${MPIRUN[@]}" "$B/apps/bench/iso-bench" collectives -q -o alltoall -n moore:3:1 moore:3:3 shales \
  -c "$PORT_CONTENDERS" -s "$PORT_SIZES" -r "$PORT_REPS" -l 1 --csv "$OUT/ports-shm.csv"
if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI"; then
  run ports-tcp "${MPIRUN[@]}" --mca btl tcp,self "$B/apps/bench/iso-bench" collectives -q -o alltoall \
    -n moore:3:1 moore:3:3 shales -c "$PORT_CONTENDERS" -s "$PORT_SIZES" -r "$PORT_REPS" -l 1 \
    --csv "$OUT/ports-tcp.csv"
fi
# The fixed cost of a small exchange: torus and direct of 1-64 B blocks
# against their MPI_Sendrecv bounds, fresh against persistent posting, shared
# memory and TCP (scripts/bench_small.sh, which also runs alone).
# --first-run: auto with the model a new user's first run calibrates (an
# empty cache under the output folder), as issue 32's part 1 asks.
SMALL_ARGS=(--out "$OUT/small-messages" --first-run)
if ((QUICK)); then SMALL_ARGS+=(--quick); fi
run small-messages env BUILD_DIR="$B" NP="$NP" JOBS="$JOBS" bash scripts/bench_small.sh "${SMALL_ARGS[@]}"
# auto and tune against the fastest contender at each size, both transports,
# with the model the small-messages entry's first run calibrated (its cache)
# unless ISO_COST_MODEL names one.
AUTOTUNE=(--out "$OUT" --no-build)
if ((QUICK)); then AUTOTUNE+=(--quick); fi
run autotune env BUILD_DIR="$B" NP="$NP" XDG_CACHE_HOME="$OUT/small-messages/first-run-cache" \
  bash scripts/bench_autotune.sh "${AUTOTUNE[@]}"
# The same after one tuning per size: auto follows the tune cache's entries
# where they contradict the model (docs/design/cost-model.md#auto-follows-measurements).
run autotune-follow env BUILD_DIR="$B" NP="$NP" XDG_CACHE_HOME="$OUT/small-messages/first-run-cache" \
  bash scripts/bench_autotune.sh "${AUTOTUNE[@]}" --follow-tune
# Deep halos: time per step against halo.depth and auto's pick (a reduced
# matrix of scripts/bench_depth.sh, which also runs alone with every case).
DEPTH_ARGS=(--out "$OUT/depth")
if ((QUICK)); then DEPTH_ARGS+=(--quick); fi
run depth env BUILD_DIR="$B" MATRIX="shm:$NP" SIDES="8 32" bash scripts/bench_depth.sh "${DEPTH_ARGS[@]}"
# The packed halo transport against the datatype one, 1 and 2 ranks, rep by
# rep beside it (scripts/bench_packed.sh, which also runs alone).
if ((QUICK)); then PACKED_REPS=5; else PACKED_REPS=40; fi
run packed env BUILD_DIR="$B" REPS="$PACKED_REPS" bash scripts/bench_packed.sh --out "$OUT/packed"
# Past the memory bound: Jacobi 7-point at depth 4 run tile by tile in cache
# against depth 1, on 1 rank, with the copy bound of the same run.
mpi_launcher 1
if ((QUICK)); then TILES=(--size 32 --sweeps 4 --repeats 1 --warmup 1); else
  TILES=(--size 128 --size 256 --sweeps 8 --repeats 3 --warmup 4); fi
run tiles "${launcher[@]}" "$B/benchmarks/isostencil-bench-stencil" "${TILES[@]}" --kernels jacobi7 \
  --depth 1 --depth 4 --tiles on --overlap off --csv "$OUT/tiles.csv"
RAN=$(date +%s)

# --- plots and summary --------------------------------------------------------
say "plots"
python3 scripts/plot_bench.py "$OUT"/collectives-*.csv "$OUT/setup.csv" -o "$OUT/plots" --summary \
  >>"$LOG" 2>&1 || say "plot_bench.py failed (see $LOG)"
PLOT_ARGS=(--halo "$OUT/halo.csv" --collectives "$OUT"/collectives-*.csv --setup "$OUT/setup.csv"
  --stencil "$OUT/stencil.csv" --life "$OUT/life.csv" -o "$OUT" --elapsed "$((RAN - BUILT))"
  --packed "$OUT"/packed/halo-packed-np*.csv --tiles "$OUT/tiles.csv"
  --load "$(cut -d' ' -f1-3 /proc/loadavg)")
if [[ -z "$PETSC_NOTE" ]]; then PLOT_ARGS+=(--petsc "$OUT/petsc.csv"); else PLOT_ARGS+=(--petsc-note "$PETSC_NOTE"); fi
python3 scripts/plot_stencil.py "${PLOT_ARGS[@]}" >>"$LOG" 2>&1 || fail "plot_stencil.py failed (see $LOG)"
if ((BACKENDS)); then
  python3 scripts/plot_backends.py "$OUT" >>"$LOG" 2>&1 || fail "plot_backends.py failed (see $LOG)"
  { echo; cat "$OUT/backends.md"; } >>"$OUT/summary.md"
fi
{ echo; cat "$OUT/autotune.md"; echo; cat "$OUT/autotune-follow.md"; } >>"$OUT/summary.md"
{ echo; echo "## Deep halos (halo.depth)"; echo; cat "$OUT/depth/depth.md"; } >>"$OUT/summary.md"
{ echo; sed 's/^#/##/' "$OUT/small-messages/summary.md"; } >>"$OUT/summary.md"
END=$(date +%s)
say "done: benchmarks $((RAN - BUILT)) s, whole run $((END - START)) s; $OUT/summary.md, plots in $OUT/plots"
