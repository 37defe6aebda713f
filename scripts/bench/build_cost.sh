#!/usr/bin/env bash
# CPU cost of a build, per object and per target: user+sys CPU seconds of each compiler process,
# far less sensitive than wall time to whatever else runs on the machine.
#   As the compiler launcher (records one line per object into $BUILD_COST_LOG, default
#   build_cost.log in the build folder; no ccache, so every object is really compiled):
#     cmake -S . -B build-cost -G Ninja -DCMAKE_BUILD_TYPE=Release \
#       -DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/scripts/bench/build_cost.sh
#     cmake --build build-cost -j2 --target test_rundir
#   The totals: scripts/bench/build_cost.sh --report build-cost/build_cost.log [TARGET_REGEX]
# A log line: CPU seconds, target, object (tab-separated). The target is read from the object's
# path (CMakeFiles/<target>.dir/...); the precompiled header counts under its own target.
set -euo pipefail
if [[ ${1:-} == --report ]]; then
  log=${2:?usage: build_cost.sh --report LOG [TARGET_REGEX]}
  awk -F'\t' -v re="${3:-.}" '$2 ~ re { cpu[$2] += $1; n[$2]++; all += $1; objs++ }
    END {
      for (t in cpu) printf "%9.1f s  %3d objects  %s\n", cpu[t], n[t], t | "sort -rn"
      close("sort -rn")
      printf "%9.1f s  %3d objects  total (CPU seconds, user+sys)\n", all, objs
    }' "$log"
  exit 0
fi
log=${BUILD_COST_LOG:-$PWD/build_cost.log}
object=unknown
args=("$@")
for ((i = 0; i < ${#args[@]} - 1; i++)); do
  [[ ${args[i]} == -o ]] && object=${args[i + 1]}
done
target=$object
if [[ $object =~ CMakeFiles/([^/]+)\.dir/ ]]; then
  target=${BASH_REMATCH[1]}
fi
status=0
"$@" || status=$?
# `times` prints this shell's user/sys, then its children's (the compiler): "XmY.YYYs XmY.YYYs".
# Run in this shell (a pipe or $(...) would run it in a fresh subshell, which has no children).
times_file=${TMPDIR:-/tmp}/build_cost.$$
times > "$times_file"
cpu=$(awk 'NR == 2 {
  s = 0
  for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] }
  printf "%.2f", s }' "$times_file")
rm -f "$times_file"
printf '%s\t%s\t%s\n' "$cpu" "$target" "$object" >> "$log"
exit "$status"
