#!/usr/bin/env bash
# Configures and builds llmprof in Release into build/ (or $LLMPROF_BUILD_DIR). Arguments go to
# the configure step. LLMPROF_BUILD_TARGET picks what to build (default: everything, tests too;
# the quick start builds only the llmprof executable, a fraction of the whole).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${LLMPROF_BUILD_DIR:-build}
target=${LLMPROF_BUILD_TARGET:-all}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@"
cmake --build "$build_dir" -j "$(nproc)" --target "$target"
