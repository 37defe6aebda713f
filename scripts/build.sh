#!/usr/bin/env bash
# Configures and builds llmprof in Release into build/ (or $LLMPROF_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${LLMPROF_BUILD_DIR:-build}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@"
cmake --build "$build_dir" -j "$(nproc)"
