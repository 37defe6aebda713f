# Shared by the fault tests: arguments, the file checker and fail(). Sourced after `set -euo
# pipefail`; sets llmprof, src, work and check. Exits 77 (skipped) without python3 and PyYAML.
if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "SKIPPED: python3 with PyYAML is needed to check the files (apt-get install python3-yaml)"
  exit 77
fi

llmprof=$1
src=$2
work=$3
check="python3 $src/tests/faults/check_files.py"
fail_prefix=${fail_prefix:-FAIL}

fail() {
  echo "$fail_prefix: $*" >&2
  exit 1
}
