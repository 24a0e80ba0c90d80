#!/usr/bin/env bash
# Builds the project (scripts/setup.sh) and runs every test. Extra arguments go
# to ctest, e.g. `scripts/test.sh -L '^np2$'` or `scripts/test.sh -R harness`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${ISOSTENCIL_KOKKOS:-serial}" in
  openmp)
    BUILD_DIR="${BUILD_DIR:-build-openmp}"
    # Two threads per rank, not pinned: ranks and threads share 2 cores.
    export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
    # Idle threads sleep instead of spinning: with several ranks of 2 threads
    # on 2 cores a spinning barrier waits for descheduled threads (minutes).
    export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
    ;;
  *) BUILD_DIR="${BUILD_DIR:-build}" ;;
esac
export BUILD_DIR

bash scripts/setup.sh
rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"${JOBS:-2}" --timeout 600 "$@" || rc=$?
# ctest keeps a skipped test's output only in its log: print each skip's
# reason (the tests that skip print it on a line starting "SKIP: " or
# "SKIPPED: ").
log="$BUILD_DIR/Testing/Temporary/LastTest.log"
if [[ -f "$log" ]]; then
  awk '/^[0-9]+\/[0-9]+ Testing: / { name = $3 }
       /^SKIP(PED)?: / { sub(/^SKIP(PED)?: /, ""); print "skipped " name ": " $0 }' "$log"
fi
exit "$rc"
