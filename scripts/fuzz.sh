#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a
# bounded time: scripts/fuzz.sh [SECONDS per target, default 120] [TARGET...]
# (targets: schedule, deck; default both). Reports executions and findings
# and exits non-zero when any target found a crash, hang, leak or OOM.
#
# The working corpus grows in $BUILD_DIR/fuzz/corpus/<target>/ from run to
# run, seeded by tests/fuzz/corpus/<target>/ and tests/fuzz/regressions/<target>/;
# findings land in $BUILD_DIR/fuzz/findings/<target>/. A finding, once fixed,
# belongs in tests/fuzz/regressions/<target>/ (replayed by ctest's
# fuzz_replay.<target> in every build). MERGE=1 minimizes the working corpus
# into tests/fuzz/corpus/<target>/ afterwards.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECONDS_PER_TARGET="${1:-120}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(schedule deck)
BUILD_DIR="${BUILD_DIR:-build-fuzz}"
CC_FUZZ="${CC_FUZZ:-clang-14}"
CXX_FUZZ="${CXX_FUZZ:-clang++-14}"

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  echo "fuzz: configuring $BUILD_DIR with $CXX_FUZZ"
  cmake -S . -B "$BUILD_DIR" -DCMAKE_C_COMPILER="$CC_FUZZ" -DCMAKE_CXX_COMPILER="$CXX_FUZZ" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DISOSTENCIL_FUZZ=ON > "$BUILD_DIR.configure.log" 2>&1 \
    || { cat "$BUILD_DIR.configure.log"; exit 1; }
fi
echo "fuzz: building ${TARGETS[*]/#/fuzz_}"
cmake --build "$BUILD_DIR" -j"${JOBS:-2}" --target "${TARGETS[@]/#/fuzz_}" > "$BUILD_DIR/fuzz-build.log" 2>&1 \
  || { cat "$BUILD_DIR/fuzz-build.log"; exit 1; }

status=0
for target in "${TARGETS[@]}"; do
  work="$BUILD_DIR/fuzz/corpus/$target"
  findings="$BUILD_DIR/fuzz/findings/$target"
  log="$BUILD_DIR/fuzz/$target.log"
  mkdir -p "$work" "$findings"
  # crash-, timeout-, oom- and leak- files are findings; slow-unit- files
  # (over 10 s, usually machine load) are listed but fail nothing.
  count_findings() { find "$findings" -type f ! -name 'slow-unit-*' | wc -l; }
  before=$(count_findings)
  # -timeout: one input running 30 s (wall clock, on a loaded machine) is a hang; -rss_limit_mb: an OOM.
  "$BUILD_DIR/tests/fuzz/fuzz_$target" -max_total_time="$SECONDS_PER_TARGET" -timeout=30 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
      "$work" "tests/fuzz/corpus/$target" "tests/fuzz/regressions/$target" > "$log" 2>&1 || true
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  after=$(count_findings)
  slow=$(find "$findings" -type f -name 'slow-unit-*' -newer "$BUILD_DIR/fuzz-build.log" | wc -l)
  new=$((after - before))
  echo "fuzz: $target: ${execs:-0} executions in ${SECONDS_PER_TARGET} s (${rate:-0}/s), coverage ${cov:-?} edges, corpus $(ls "$work" | wc -l) files, $new new finding(s), $slow slow input(s)"
  if [ "$new" -gt 0 ] || grep -q "^SUMMARY: \|ERROR: " "$log"; then
    status=1
    echo "fuzz: $target: see $log and $findings/:"
    grep -E "INVARIANT VIOLATED|^SUMMARY:|ERROR: " "$log" | head -5 | sed 's/^/    /' || true
    find "$findings" -type f ! -name 'slow-unit-*' -newer "$BUILD_DIR/fuzz-build.log" | head -5 | sed 's/^/    /' || true
  fi
  if [ "${MERGE:-0}" = 1 ]; then
    "$BUILD_DIR/tests/fuzz/fuzz_$target" -merge=1 "tests/fuzz/corpus/$target" "$work" > "$log.merge" 2>&1
    echo "fuzz: $target: merged into tests/fuzz/corpus/$target ($(ls "tests/fuzz/corpus/$target" | wc -l) files)"
  fi
done
exit $status
