#!/usr/bin/env bash
# What compiling the test code at -Og (tests/CMakeLists.txt) saves against the build type's -O3:
# every test object of a configured Ninja build folder compiled twice, one level right after the
# other (so both see the same load), the user+sys CPU seconds of each summed. Nothing in the
# build folder changes: the objects go to a temporary file.
#   scripts/bench/test_opt_cost.sh [BUILD_DIR [OBJECT_REGEX]]   (default: build, every test object)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
[ -f "$build/build.ninja" ] || { echo "test_opt_cost.sh: $build is not a configured Ninja build" >&2; exit 2; }
tmp=$(mktemp -d /tmp/llmprof-test-opt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
(cd "$build" && ninja -t commands) | grep -E -- ' -o tests/[^ ]+\.o ' | sed 's|^[^ ]*ccache ||' |
  grep -E -- "${2:-.}" | sort -u >"$tmp/cmds"
[ -s "$tmp/cmds" ] || { echo "test_opt_cost.sh: no test objects in $build" >&2; exit 2; }
cpu() { /usr/bin/time -o "$tmp/t" -f '%U %S' bash -c "$1" >/dev/null 2>&1 || { echo "test_opt_cost.sh: failed: $1" >&2; exit 1; }; awk '{print $1 + $2}' "$tmp/t"; }
o3_sum=0 og_sum=0 n=0
while read -r cmd; do
  # The build type's flags alone, then the same with -Og last (the last -O wins).
  base=$(echo "$cmd" | sed -E 's/ -Og( -Wno-maybe-uninitialized)?//; s| -MD -MT [^ ]+ -MF [^ ]+| |; s| -o [^ ]+| -o '"$tmp"'/x.o|')
  a=$(cd "$build" && cpu "$base")
  b=$(cd "$build" && cpu "${base/ -c / -Og -Wno-maybe-uninitialized -c }")
  o3_sum=$(awk -v s="$o3_sum" -v a="$a" 'BEGIN {print s + a}')
  og_sum=$(awk -v s="$og_sum" -v b="$b" 'BEGIN {print s + b}')
  n=$((n + 1))
done <"$tmp/cmds"
echo "command: scripts/bench/test_opt_cost.sh $build${2:+ $2}"
awk -v n="$n" -v a="$o3_sum" -v b="$og_sum" 'BEGIN {
  printf "  %d test objects: %.1f CPU-s at the build type'\''s flags, %.1f at -Og (x%.2f)\n", n, a, b, b / a }'
