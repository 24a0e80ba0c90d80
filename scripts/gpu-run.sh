#!/usr/bin/env bash
# The whole GPU check on a bare, offline node, from a kit made by
# scripts/gpu-kit.sh (docs/building-kokkos.md#cuda):
#
#   bash KIT/gpu-run.sh KIT OUTDIR        (or scripts/gpu-run.sh KIT OUTDIR)
#
# The node needs the CUDA toolkit (nvcc) with its host g++, CMake (ninja if
# present) and coreutils; everything else comes from the kit. Steps, each
# time-boxed and recorded even when an earlier one failed:
#   unpack; Kokkos CUDA+Serial (Hopper 90) and Kokkos Serial; the project's GPU
#   subset against the first and its driver against the second (the Serial
#   reference, built on the node: a CUDA build runs every kernel on the GPU);
#   the kernel, grid, grid-transport (packed) and halo tests on CUDA at 1 and 2
#   ranks; the Jacobi 3-D and Life 2-D decks (halo validated every step) at 1
#   and 2 ranks on CUDA against Serial (Life exactly, Jacobi within
#   JACOBI_RTOL); Jacobi 7-point 256^3 and 512^3 on 1 rank against the copy
#   bound of the same run; the packed 27-point halo exchange at 64^3 and 128^3
#   on 2 ranks. OUTDIR gets summary.md, summary.json, logs/ and the CSVs.
# Without a GPU (no nvidia-smi, or it lists none) the GPU steps are skipped
# (exit 77 each) and the script exits 77 if nothing else failed.
# The limits fit 16 cores; GPU_RUN_TIME_FACTOR multiplies them (the gpu-kit
# test on 2 cores: 6).
# Environment: JOBS (default: all cores), GPU_RUN_SCALE (0.1: short steps for a
# smoke run without a GPU), ISOSTENCIL_GPU_ARCH (default HOPPER90).
# A second run into the same OUTDIR rebuilds incrementally in OUTDIR/work:
# Kokkos not at all while the kit's Kokkos is the same, the project where its
# files changed.
set -uo pipefail
if (($# != 2)); then echo "usage: gpu-run.sh KIT OUTDIR" >&2; exit 2; fi
KIT=$(cd "$1" && pwd) || { echo "gpu-run: no kit at $1" >&2; exit 2; }
for f in prefix.tar.xz kokkos.tar.xz isostencil.tar.xz; do
  [[ -f $KIT/$f ]] || { echo "gpu-run: $KIT/$f missing (make the kit with scripts/gpu-kit.sh)" >&2; exit 2; }
done
mkdir -p "$2" && OUT=$(cd "$2" && pwd)
LOGS=$OUT/logs WORK=$OUT/work
mkdir -p "$LOGS" "$WORK"
JOBS=${JOBS:-$(nproc)}
ARCH=${ISOSTENCIL_GPU_ARCH:-HOPPER90}
# nvcc contracts the Jacobi update into fused multiply-adds: each value may
# differ from the host's in its last bit. The summary's residuals are norms of
# differences of nearby values (u_new - u_old ~ 1e-3 u), which turns 1 ulp of u
# into up to ~1e-13 relative; 1e-10 leaves room for that and still fails on
# any real error (one step more changes them by 1e-2).
JACOBI_RTOL=1e-10
T0=$(date +%s)
: >"$OUT/steps.tsv"

# step NAME LIMIT_S CMD...: runs CMD with a time limit, output in logs/NAME.log;
# records name, exit code, seconds. 77 = skipped.
step() {
  local name=$1 limit=$(($2 * ${GPU_RUN_TIME_FACTOR:-1})); shift 2
  local t=$(date +%s) rc
  echo "== $name (limit ${limit}s)"
  timeout --kill-after=10 "$limit" "$@" >"$LOGS/$name.log" 2>&1; rc=$?
  local dt=$(($(date +%s) - t))
  printf '%s\t%d\t%d\n' "$name" "$rc" "$dt" >>"$OUT/steps.tsv"
  case $rc in
    0) echo "   ok (${dt}s)" ;;
    77) echo "   skipped (${dt}s): $(tail -1 "$LOGS/$name.log")" ;;
    124|137) echo "   TIMED OUT after ${dt}s (logs/$name.log)" ;;
    *) echo "   FAILED rc=$rc (${dt}s): logs/$name.log"; tail -5 "$LOGS/$name.log" | sed 's/^/   | /' ;;
  esac
  return 0
}
ok() { awk -F'\t' -v n="$1" '$1 == n && $2 == 0 { f = 1 } END { exit !f }' "$OUT/steps.tsv"; }
need() { for s in "$@"; do ok "$s" || { echo "SKIP: needs step $s, which did not succeed"; return 1; }; done; }

if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  GPU=1; nvidia-smi -L >"$OUT/gpu.txt"
else
  GPU=0; echo "no GPU (nvidia-smi missing or lists no device)" >"$OUT/gpu.txt"
fi
gpu_or_skip() { ((GPU)) || { echo "no GPU: skipped"; exit 77; }; }
export -f gpu_or_skip need ok
export GPU OUT

# --- unpack -------------------------------------------------------------------
unpack() {
  rm -rf "$WORK"/{prefix,kokkos} "$WORK/new"
  for t in prefix kokkos; do tar -xJf "$KIT/$t.tar.xz" -C "$WORK" || return 1; done
  # The project: after a previous run into this OUTDIR, a file unchanged since
  # keeps that run's time stamp and a changed one gets the present time, so
  # the builds there redo what changed alone (git archive stamps every file
  # with the commit's time, which may be older than that run's objects).
  mkdir "$WORK/new" && tar -xJf "$KIT/isostencil.tar.xz" -C "$WORK/new" || return 1
  if [[ -d $WORK/isostencil ]]; then
    (cd "$WORK/new/isostencil" && find . -type f) | while read -r f; do
      if cmp -s "$WORK/new/isostencil/$f" "$WORK/isostencil/$f"; then
        touch -r "$WORK/isostencil/$f" "$WORK/new/isostencil/$f"
      else
        touch "$WORK/new/isostencil/$f"
      fi
    done
  fi
  rm -rf "$WORK/isostencil" && mv "$WORK/new/isostencil" "$WORK/isostencil" && rmdir "$WORK/new" || return 1
  # h5pcc is a script naming /usr paths: point it at the prefix
  sed -i "s|/usr/|$WORK/prefix/usr/|g; s|^prefix=\"/usr\"|prefix=\"$WORK/prefix/usr\"|" \
    "$WORK/prefix/usr/bin/h5pcc.openmpi"
  # Open MPI's wrapper data names /usr too; OPAL_PREFIX relocates what it
  # derives, the env file sets the rest.
  KIT_PREFIX=$WORK/prefix bash -c "source $WORK/prefix/env.sh && mpicxx --showme:version && mpirun --version"
}
step unpack 120 bash -c "$(declare -f unpack); WORK=$WORK KIT=$KIT unpack"
export KIT_PREFIX=$WORK/prefix
# shellcheck disable=SC1091
[[ -f $KIT_PREFIX/env.sh ]] && source "$KIT_PREFIX/env.sh"
export PATH=/usr/local/cuda/bin:$PATH
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
KSRC=$WORK/kokkos

# --- builds -------------------------------------------------------------------
kokkos_cuda() {
  need unpack || return 1
  cmake -S "$KSRC" -B "$WORK/kokkos-cuda-build" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$KSRC/bin/nvcc_wrapper" -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_CXX_FLAGS=-arch=sm_90 -DCMAKE_INSTALL_PREFIX="$WORK/kokkos-cuda" \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_CUDA=ON "-DKokkos_ARCH_$ARCH=ON" &&
  cmake --build "$WORK/kokkos-cuda-build" -j"$JOBS" && cmake --install "$WORK/kokkos-cuda-build"
}
kokkos_serial() {
  need unpack || return 1
  cmake -S "$KSRC" -B "$WORK/kokkos-serial-build" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$WORK/kokkos-serial" \
    -DKokkos_ENABLE_SERIAL=ON &&
  cmake --build "$WORK/kokkos-serial-build" -j"$JOBS" && cmake --install "$WORK/kokkos-serial-build"
}
GPU_TARGETS="isostencil test_update test_jacobi test_life_patterns test_life_reference test_user_kernel"
GPU_TARGETS+=" test_grid test_grid_transport test_collectives isostencil-bench-stencil isostencil-bench-halo"
project() {  # build dir, Kokkos prefix, targets
  local b=$1 k=$2; shift 2
  need unpack || return 1
  cmake -S "$WORK/isostencil" -B "$b" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc -DKokkos_ROOT="$k" \
    -DMPI_C_COMPILER="$KIT_PREFIX/usr/bin/mpicc" -DMPI_CXX_COMPILER="$KIT_PREFIX/usr/bin/mpicxx" \
    -DHDF5_C_COMPILER_EXECUTABLE="$KIT_PREFIX/usr/bin/h5pcc" \
    -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DCMAKE_BUILD_RPATH="$LD_LIBRARY_PATH" &&
  cmake --build "$b" -j"$JOBS" --target "$@"
}
export -f kokkos_cuda kokkos_serial project
export WORK KSRC JOBS ARCH KIT_PREFIX LOGS
export GEN_NINJA=${GEN[*]:-}
step kokkos-cuda 420 bash -c "GEN=(\$GEN_NINJA); kokkos_cuda"
step kokkos-serial 300 bash -c "GEN=(\$GEN_NINJA); kokkos_serial"
step build-cuda 600 bash -c "GEN=(\$GEN_NINJA); need kokkos-cuda && project $WORK/build-cuda $WORK/kokkos-cuda $GPU_TARGETS"
step build-serial 420 bash -c "GEN=(\$GEN_NINJA); need kokkos-serial && project $WORK/build-serial $WORK/kokkos-serial isostencil"

# --- 1. tests on the GPU ------------------------------------------------------
TESTS='^((update|jacobi|life_patterns|life_reference|user_kernel|grid|grid_transport|collectives)|grid_transport\.deck_[a-z0-9_]+)\.np[12]$'
step tests-cuda 300 bash -c "gpu_or_skip; need build-cuda || exit 1; ctest --test-dir $WORK/build-cuda -R '$TESTS' --output-on-failure --timeout 240"

# --- 2. decks: CUDA against Serial --------------------------------------------
SCALE=${GPU_RUN_SCALE:-1}
deck() {  # deck, ranks, steps
  local d=$1 np=$2 steps=$3 kind
  gpu_or_skip; need build-cuda build-serial || exit 1
  for kind in cuda serial; do
    local dir=$OUT/decks/$d-np$np-$kind
    rm -rf "$dir"; mkdir -p "$dir"
    (cd "$dir" && mpirun --oversubscribe -np "$np" "$WORK/build-$kind/apps/isostencil" run \
      "$WORK/isostencil/inputs/$d.toml" --set run.steps="$steps" --set halo.validate_every=1 \
      --set output.dir=out) || { echo "FAILED: the $kind run"; exit 1; }
  done
  local j1 j2
  j1=$(ls "$OUT/decks/$d-np$np-cuda"/out/*summary*.json) && j2=$(ls "$OUT/decks/$d-np$np-serial"/out/*summary*.json) || exit 1
  if [[ $d == life* ]]; then rtol=0; else rtol=$JACOBI_RTOL; fi
  python3 "$WORK/isostencil/scripts/gpu-compare.py" --rtol "$rtol" "$j1" "$j2"
}
export -f deck; export JACOBI_RTOL
jsteps=$(awk -v s="$SCALE" 'BEGIN { n = int(400 * s); print (n < 4 ? 4 : n) }')
lsteps=$(awk -v s="$SCALE" 'BEGIN { n = int(600 * s); print (n < 4 ? 4 : n) }')
for np in 1 2; do
  step "deck-jacobi_3d_7pt-np$np" 120 bash -c "deck jacobi_3d_7pt $np $jsteps"
  step "deck-life_2d_gun-np$np" 120 bash -c "deck life_2d_gun $np $lsteps"
done

# --- 3. performance -----------------------------------------------------------
step perf-jacobi7 150 bash -c "gpu_or_skip; need build-cuda || exit 1; mpirun -np 1 --bind-to none \
  $WORK/build-cuda/benchmarks/isostencil-bench-stencil --kernels jacobi7 --size 256 --size 512 --csv $OUT/perf-jacobi7.csv"
step perf-halo-packed 150 bash -c "gpu_or_skip; need build-cuda || exit 1; mpirun --oversubscribe -np 2 \
  $WORK/build-cuda/benchmarks/isostencil-bench-halo --cases jacobi27 --size3 64 128 \
  --contenders packed-torus packed-linear packed-auto --reps 20 --phases --csv $OUT/perf-halo-packed.csv"

# --- 4. summary ---------------------------------------------------------------
TOTAL=$(($(date +%s) - T0))
{
  echo "kit_commit=$(cat "$KIT/isostencil-commit" 2>/dev/null)"
  echo "kokkos=$(cat "$KIT/kokkos-version" 2>/dev/null)"
  echo "nvcc=$(nvcc --version 2>/dev/null | tail -2 | head -1)"
  echo "gxx=$(g++ --version 2>/dev/null | head -1)"
  echo "cmake=$(cmake --version | head -1)"
  echo "mpi=$(mpirun --version 2>/dev/null | head -1)"
  echo "gpu=$(head -1 "$OUT/gpu.txt")"
  echo "driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "jobs=$JOBS"
  echo "total_s=$TOTAL"
} >"$OUT/versions.txt"
python3 "$WORK/isostencil/scripts/gpu-summary.py" "$OUT" 2>"$LOGS/summary.log" ||
  { echo "gpu-run: python3 missing or summary failed; raw results in steps.tsv, versions.txt, *.csv"; }
echo "gpu-run: ${TOTAL}s in all; summary in $OUT/summary.md"
cat "$OUT/steps.tsv"
# Exit: 1 if a step failed, 77 if every non-passing step was a skip, else 0.
awk -F'\t' '$2 != 0 && $2 != 77 { bad = 1 } $2 == 77 { skip = 1 } END { exit bad ? 1 : (skip ? 77 : 0) }' "$OUT/steps.tsv"
