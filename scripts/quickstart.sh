#!/usr/bin/env bash
# The quick start on a fresh Debian 12 machine: installs the packages, builds in Release, trains
# the quick-start GPT on the generated corpus (no download, no GPU) and prints the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
LLMPROF_BUILD_TARGET=llmprof scripts/build.sh  # the executable alone, not the tests
build/llmprof train --config configs/quickstart.yaml "$@"
