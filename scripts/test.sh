#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (GoogleTest through ctest), then the fuzz targets.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# The `slurm` test starts a one-node Slurm (scripts/slurm/start-local.sh) from Debian's packages:
# installed here where possible; where not, that test says why and is skipped.
if ! command -v slurmctld >/dev/null 2>&1; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge ||
      echo "test.sh: slurm-wlm/munge not installable: the slurm test will be skipped" >&2
  else
    echo "test.sh: no Slurm and no root apt-get: the slurm test will be skipped" >&2
  fi
fi
# Chromium only for the tests (the HTML report in a browser); without it that test is skipped.
scripts/install_deps.sh chromium || echo "test.sh: chromium not installed: the browser test will be skipped"
# PyYAML for tests/faults/check_files.py (the fault tests); without it those tests are skipped.
scripts/install_deps.sh python3-yaml ||
  echo "test.sh: python3-yaml not installed: the fault tests will be skipped"
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 600)
# Every libFuzzer target of tests/fuzz for 10 s, after its kept regression inputs: a clang build
# of its own in build-fuzz/ (installs clang-14 when missing). LLMPROF_FUZZ_SECONDS=0 skips it.
fuzz_s=${LLMPROF_FUZZ_SECONDS:-10}
if [ "$fuzz_s" -gt 0 ]; then scripts/fuzz.sh "$fuzz_s"; fi
