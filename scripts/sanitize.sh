#!/usr/bin/env bash
# Builds the project with AddressSanitizer + UBSan (g++, build-asan) and runs
# the whole test suite under them: scripts/sanitize.sh [ctest arguments...]
# (e.g. -L '^np2$', -R deck, -LE scale). Leaks are reported except those of Open MPI and its
# libraries (tests/sanitize/lsan.supp; sanitize.leak_canary.np2 checks that a
# leak of ours is still reported); UBSan stops at the first error.
# Prints the build and test wall times; exits non-zero on any failure.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${BUILD_DIR:-build-asan}"
JOBS="${JOBS:-2}"
start=$(date +%s)

SETUP_PACKAGES_ONLY=1 bash scripts/setup.sh  # the Debian packages, if missing
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  echo "sanitize: configuring $BUILD_DIR (g++, -fsanitize=address,undefined)"
  # Warnings stay visible in the log but are not errors here: instrumentation
  # changes what gcc's flow-based warnings see, and a warning that only the
  # sanitized build gives should not hide the sanitizers' own findings.
  # Instrumented tests run 2-5x slower: the sanitized build multiplies every
  # test's timeout and asserted wall-clock limit by ISOSTENCIL_TEST_TIME_SCALE
  # (4 unless CMAKE_ARGS sets it; cmake/IsostencilSanitizers.cmake).
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DISOSTENCIL_SANITIZE=address,undefined -DISOSTENCIL_WERROR=OFF \
        ${CMAKE_ARGS:-} > "$BUILD_DIR.configure.log" 2>&1 || { cat "$BUILD_DIR.configure.log"; exit 1; }
fi
echo "sanitize: building $BUILD_DIR"
cmake --build "$BUILD_DIR" -j"$JOBS" > "$BUILD_DIR/sanitize-build.log" 2>&1 \
  || { tail -50 "$BUILD_DIR/sanitize-build.log"; exit 1; }
built=$(date +%s)
echo "sanitize: built in $((built - start)) s"

# The sanitizers' options, the Open MPI leak suppressions and the preloaded
# module keeper travel with each test (cmake/IsostencilTesting.cmake), so
# `ctest --test-dir build-asan` alone runs the tests the same way.
rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" --timeout 900 "$@" || rc=$?
end=$(date +%s)
echo "sanitize: tests took $((end - built)) s; total $((end - start)) s; ctest exit $rc"
exit $rc
