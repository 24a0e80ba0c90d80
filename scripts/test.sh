#!/usr/bin/env bash
# Builds the project (scripts/setup.sh) and runs every test. Extra arguments go
# to ctest, e.g. `scripts/test.sh -L np2` or `scripts/test.sh -R harness`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${BUILD_DIR:-build}"

bash scripts/setup.sh
exec ctest --test-dir "$BUILD_DIR" --output-on-failure -j"${JOBS:-2}" --timeout 600 "$@"
