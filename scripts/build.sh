#!/usr/bin/env bash
# Configures and builds llmprof in Release into build/ (or $LLMPROF_BUILD_DIR). Arguments go to
# the configure step. LLMPROF_BUILD_TARGET picks what to build (default: everything, tests too;
# the quick start builds only the llmprof executable, a fraction of the whole).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${LLMPROF_BUILD_DIR:-build}
target=${LLMPROF_BUILD_TARGET:-all}
# ccache, where installed (scripts/test.sh installs it): a rebuild in another build folder or
# checkout of the same sources compiles nothing twice. The torch objects use a precompiled header,
# which ccache caches only with this sloppiness; paths under the checkout's parent are hashed
# relative, so sibling checkouts (git worktrees) share the cache.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$PWD")}
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@"
cmake --build "$build_dir" -j "$(nproc)" --target "$target"
