#!/usr/bin/env bash
# The collectives library under SimGrid SMPI (docs/simulating.md): installs
# Debian's libsimgrid-dev when smpicxx is missing, builds the library and its
# MPI-only programs in build-smpi/ (tests/smpi/CMakeLists.txt), and with
# `test` runs the differential check and the collectives' C and C++ examples
# at the given simulated rank counts.
#   bash scripts/smpi.sh                 # install if needed, build
#   bash scripts/smpi.sh test [N ...]    # build the check and the examples, run them at N ranks (default 64)
# Environment: BUILD_DIR (build-smpi), JOBS (2), CASES (differential cases, 6).
# Quiet on success; the build's and each run's output go to BUILD_DIR/*.log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
build=${BUILD_DIR:-build-smpi}
jobs=${JOBS:-2}

if ! command -v smpicxx >/dev/null 2>&1; then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q libsimgrid-dev; } \
    >/tmp/isostencil-smpi-apt.log 2>&1 || { cat /tmp/isostencil-smpi-apt.log >&2; echo "smpi.sh: installing libsimgrid-dev failed" >&2; exit 1; }
fi

mkdir -p "$build"
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S tests/smpi -B "$build" -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx \
    -DISOSTENCIL_WERROR=ON ${CMAKE_ARGS:-} >"$build/configure.log" 2>&1 \
    || { cat "$build/configure.log" >&2; exit 1; }
fi
# `test` builds only what it runs (CI's time: iso-bench and CLI11 alone
# take minutes on 2 cores); a plain call builds everything.
targets=()
[[ ${1:-} != test ]] || targets=(--target smpi_differential c_collectives cpp_collectives)
cmake --build "$build" -j"$jobs" "${targets[@]}" >"$build/build.log" 2>&1 || { tail -50 "$build/build.log" >&2; exit 1; }

[[ ${1:-} == test ]] || exit 0
shift
ranks=("$@")
[[ ${#ranks[@]} -gt 0 ]] || ranks=(64)
for n in "${ranks[@]}"; do
  # One host a rank on a small fat tree (tests/smpi/platform-small.xml).
  hostfile=$build/hosts-$n.txt
  for ((i = 0; i < n; i++)); do echo "node-$i.smpi"; done >"$hostfile"
  log=$build/differential-np$n.log
  start=$(date +%s)
  if ! ISO_COST_MODEL=defaults smpirun -np "$n" -platform tests/smpi/platform-small.xml -hostfile "$hostfile" \
      --cfg=smpi/display-timing:no --log=root.thres:error \
      "$build/smpi_differential" "${CASES:-6}" >"$log" 2>&1; then
    cat "$log" >&2
    echo "smpi.sh: the differential check failed at $n simulated ranks ($log)" >&2
    exit 1
  fi
  grep -q "smpi_differential: $n ranks, .* 0 failing cases" "$log" \
    || { cat "$log" >&2; echo "smpi.sh: no passing summary at $n ranks ($log)" >&2; exit 1; }
  # The examples check their own blocks and say so.
  for example in c_collectives cpp_collectives; do
    smpirun -np "$n" -platform tests/smpi/platform-small.xml -hostfile "$hostfile" --cfg=smpi/display-timing:no \
      --log=root.thres:error "$build/$example" >"$build/$example-np$n.log" 2>&1 \
      && grep -q "verified over 3 rounds" "$build/$example-np$n.log" \
      || { cat "$build/$example-np$n.log" >&2; echo "smpi.sh: $example failed at $n simulated ranks" >&2; exit 1; }
  done
  echo "smpi: differential check and examples at $n simulated ranks passed ($(( $(date +%s) - start )) s wall)" >>"$build/test.log"
done
