#!/usr/bin/env bash
# The gpu-kit test (ctest label gpu-kit, tests/gpukit): makes the kit from
# ISOSTENCIL_KOKKOS_SRC (a Kokkos 4.x tarball or tree) and runs gpu-run.sh on it
# in a clean environment, as on a bare node: env -i, PATH = the kit's prefix
# (env.sh), /usr/local/cuda/bin and a folder of links to the tools a bare node
# has (coreutils, bash, tar, xz, sed, awk, grep, cmake, ninja, gcc/g++,
# python3), so a program the kit lacks is not found. Libraries cannot be hidden
# that way: afterwards every built program's libraries must resolve into the
# kit, the CUDA toolkit or a base package (gpu-kit.sh's BASE rule).
# GPU_KIT_TEST_REUSE=1 (for work on the kit or gpu-run.sh, where each run would
# otherwise rebuild Kokkos with nvcc): keeps the kit of the previous run (its
# project archive and gpu-run.sh refreshed from this checkout) and its build
# folders; a full test is a run without it.
# Exit: 0 when the kit, the builds, the summary and the library check passed
# (the GPU steps skipped, exit 77, on a machine without a GPU: what this test
# is for); 77 when ISOSTENCIL_KOKKOS_SRC or nvcc is missing; 1 on a failure.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
if [[ -z ${ISOSTENCIL_KOKKOS_SRC:-} ]]; then
  echo "SKIP: set ISOSTENCIL_KOKKOS_SRC to a Kokkos 4.x tarball or tree"; exit 77
fi
[[ -x /usr/local/cuda/bin/nvcc ]] || { echo "SKIP: no /usr/local/cuda/bin/nvcc"; exit 77; }
W=${GPU_KIT_TEST_DIR:-$ROOT/gpu-kit-test}
mkdir -p "$W"
if [[ -z ${GPU_KIT_TEST_REUSE:-} || ! -f $W/kit/prefix.tar.xz ]]; then
  bash scripts/gpu-kit.sh "$ISOSTENCIL_KOKKOS_SRC" "$W/kit" || { echo "FAILED: gpu-kit.sh"; exit 1; }
elif [[ $(git rev-parse HEAD) != "$(cat "$W/kit/isostencil-commit" 2>/dev/null)" ]] ||
     ! cmp -s scripts/gpu-run.sh "$W/kit/gpu-run.sh"; then
  # Reuse: the kit's prefix and Kokkos stay; the project and gpu-run.sh are
  # brought to this checkout's HEAD (a new commit rebuilds the project only).
  echo "gpu-kit-test: reusing $W/kit, project and gpu-run.sh refreshed from HEAD"
  git archive --prefix=isostencil/ HEAD | xz -T0 -6 >"$W/kit/isostencil.tar.xz"
  git rev-parse HEAD >"$W/kit/isostencil-commit"
  cp scripts/gpu-run.sh "$W/kit/gpu-run.sh"
fi
TOOLS=$W/tools
rm -rf "$TOOLS"; mkdir -p "$TOOLS"
for t in bash sh env cat cp mv rm ln ls mkdir rmdir chmod touch head tail tr cut sort uniq paste wc \
    date sleep timeout nproc readlink cmp dirname basename uname id tee printf test expr true false \
    tar xz gzip sed awk gawk mawk grep find xargs cmake ctest ninja make gcc g++ cc c++ cpp ld as ar ranlib \
    python3 which hostname du stat; do
  p=$(command -v "$t") && ln -s "$p" "$TOOLS/$t"
done
OUT=$W/out
# Reuse keeps the previous run's build folders: gpu-run.sh rebuilds in them
# incrementally (Kokkos is not rebuilt while the kit's Kokkos is unchanged).
[[ -n ${GPU_KIT_TEST_REUSE:-} ]] || rm -rf "$OUT"
env -i HOME="$W" PATH="$TOOLS:/usr/local/cuda/bin" JOBS="${JOBS:-2}" GPU_RUN_SCALE="${GPU_RUN_SCALE:-0.1}" \
  GPU_RUN_TIME_FACTOR="${GPU_RUN_TIME_FACTOR:-6}" \
  "$TOOLS/bash" "$W/kit/gpu-run.sh" "$W/kit" "$OUT"
rc=$?
echo "gpu-run.sh exit $rc"
cat "$OUT/summary.md" 2>/dev/null

# Libraries of the built programs: kit, CUDA, or a base package of this machine.
bad=0
base_ok() {  # library path outside the kit
  local pkg prio
  [[ $1 == /usr/local/cuda* ]] && return 0
  pkg=$(dpkg -S "$1" 2>/dev/null | awk -F: 'NR == 1 { print $1 }')
  [[ -z $pkg ]] && pkg=$(dpkg -S "$(readlink -f "$1")" 2>/dev/null | awk -F: 'NR == 1 { print $1 }')
  prio=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | awk '/^Priority:/ && !p { print $2; p = 1 }')
  [[ $prio == required || $prio == important ]] && return 0
  grep -qx "$pkg" <<<"$BUILD_ESSENTIAL"
}
# (a list, not a pipe into grep -q: with pipefail an early grep exit fails the pipe)
BUILD_ESSENTIAL=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances build-essential 2>/dev/null | grep '^[a-z0-9]')
if [[ -d $OUT/work/build-cuda ]]; then
  libs=$(find "$OUT/work/build-cuda" "$OUT/work/build-serial" -type f -perm -u+x \
           \( -name 'isostencil' -o -name 'test_*' -o -name 'isostencil-bench-*' \) 2>/dev/null |
         while read -r f; do
           env -i LD_LIBRARY_PATH="$(KIT_PREFIX=$OUT/work/prefix bash -c "source $OUT/work/prefix/env.sh; echo \$LD_LIBRARY_PATH")" ldd "$f"
         done | awk '$2 == "=>" { print $1, $3 }' | sort -u)
  while read -r name l; do
    [[ -z $name ]] && continue
    # The CUDA driver's library (Kokkos links it): on every GPU node, with the
    # driver, and on a machine without one nowhere.
    [[ $name == libcuda.so.1 ]] && { echo "libcuda.so.1: the CUDA driver's (${l/#not/not found here})"; continue; }
    [[ $l == not ]] && { echo "FAILED: $name is not found"; bad=1; continue; }
    [[ $l == "$OUT/work/prefix"* ]] && continue
    base_ok "$l" || { echo "FAILED: $l comes from neither the kit nor a base package"; bad=1; }
  done <<<"$libs"
  echo "libraries checked: $(grep -c . <<<"$libs")"
else
  echo "FAILED: no CUDA build to check"; bad=1
fi
[[ -s $OUT/summary.md && -s $OUT/summary.json ]] || { echo "FAILED: gpu-run.sh wrote no summary"; bad=1; }
((bad)) && exit 1
if ((rc == 77)); then
  echo "PASSED: kit, builds, summary and libraries; the GPU steps skipped (no GPU here)"; exit 0
fi
exit "$rc"
