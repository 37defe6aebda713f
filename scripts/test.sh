#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (GoogleTest through ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# Chromium only for the tests (the HTML report in a browser); without it that test is skipped.
scripts/install_deps.sh chromium || echo "test.sh: chromium not installed: the browser test will be skipped"
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600
