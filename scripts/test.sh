#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (GoogleTest through ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600
