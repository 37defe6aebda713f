#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (GoogleTest through ctest).
#   scripts/test.sh                     Release build in build/, every test (the fuzz targets' kept
#                                       regression inputs and seeds replayed as FuzzReplay.<target>)
#   scripts/test.sh --sanitize [ARG..]  AddressSanitizer + UndefinedBehaviorSanitizer build in
#                                       build-asan/ (LLMPROF_SANITIZE), every test; ARGs go to
#                                       ctest, e.g. `-L sanitize_ci` for the part CI runs
# Under --sanitize every process a test starts (the llmprof binary, custom_loop) reports into
# build-asan/sanitizer/; the run fails when any report is there, even from a process whose exit
# code a test expected to be non-zero. Suppressions: scripts/sanitize/*.supp, each with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
if [[ ${1:-} == --sanitize ]]; then
  sanitize=1
  shift
fi
scripts/install_deps.sh ccache  # ccache: a rebuild compiles only what changed (scripts/build.sh)
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
# Python's `regex` (\p{L}) for scripts/hf/tokenizer_reference.py, the independent tokenizer.json
# implementation the hf tokenizer tests compare ids with; without it those comparisons are skipped.
scripts/install_deps.sh python3-regex ||
  echo "test.sh: python3-regex not installed: the tokenizer.json reference comparisons will be skipped"
# numpy for scripts/hf/make_llama_fixtures.py, which the Llama-folder script test runs.
scripts/install_deps.sh python3-numpy ||
  echo "test.sh: python3-numpy not installed: the Llama fixture script test will be skipped"
# mkdocs builds the user guide (mkdocs.yml) with --strict: the ctest Docs.SiteBuildsStrict and
# .ci/run's site stage; without it that test is skipped (and .ci/run's stage fails).
scripts/install_deps.sh mkdocs || echo "test.sh: mkdocs not installed: the docs site test will be skipped"
# xmllint validates llmprof check's JUnit output against tests/check/junit.xsd; without it skipped.
scripts/install_deps.sh libxml2-utils ||
  echo "test.sh: libxml2-utils not installed: the JUnit schema check will be skipped"

if [[ $sanitize == 0 ]]; then
  scripts/build.sh
  (cd build && ctest --output-on-failure -j "$(nproc)" --timeout 600)
  exit 0
fi

# -- Sanitizers --------------------------------------------------------------------------------
# gcc's ASan + UBSan (the compiler the Release build uses). -O1 -g1: ASan's usual level, line
# tables in the reports; the fastest of the levels to compile. NDEBUG stays defined (CMakeLists:
# LibTorch's headers need it to match the library's layout).
supp=$PWD/scripts/sanitize
reports=$PWD/build-asan/sanitizer
CXX=g++ LLMPROF_BUILD_DIR=build-asan scripts/build.sh -DLLMPROF_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
rm -rf "$reports"
mkdir -p "$reports"
common="halt_on_error=1:print_stacktrace=1:log_path=$reports/report"
asan="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export ASAN_OPTIONS="$common:$asan:suppressions=$supp/asan.supp"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="$common:suppressions=$supp/ubsan.supp"
status=0
(cd build-asan && ctest --output-on-failure -j "$(nproc)" --timeout 1800 "$@") || status=$?
if compgen -G "$reports/report.*" >/dev/null; then
  echo "test.sh: sanitizer reports (build-asan/sanitizer/):" >&2
  for f in "$reports"/report.*; do
    echo "---- $f" >&2
    cat "$f" >&2
  done
  status=1
fi
exit "$status"
