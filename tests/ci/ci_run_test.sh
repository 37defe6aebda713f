#!/usr/bin/env bash
# .ci/run's stages in dry run (LLMPROF_CI_DRY_RUN=1: each stage's command printed, not run): all
# four run in order within the budget; past it, the sanitize_ci stage is not run and CI exits 1
# naming it, never 0 (a stage that did not run is a failure, not a silent pass).
set -uo pipefail
src=${1:?usage: ci_run_test.sh SOURCE_DIR}
fail() { echo "ci_run_test: $*" >&2; exit 1; }
out=$(LLMPROF_CI_DRY_RUN=1 bash "$src/.ci/run" 2>&1); rc=$?
[ "$rc" -eq 0 ] || fail "within the budget: exit $rc, expected 0: $out"
for want in "would run: bash scripts/test.sh" "would run: mkdocs build --strict" \
  "would run: bash scripts/ci_gate.sh" \
  "bash scripts/fuzz.sh 10" "LLMPROF_BUILD_TARGET=sanitize_ci bash scripts/test.sh --sanitize -L sanitize_ci"; do
  grep -qF -- "$want" <<<"$out" || fail "within the budget: no '$want' in: $out"
done
out=$(LLMPROF_CI_DRY_RUN=1 LLMPROF_CI_SANITIZE_AFTER_S=-1 bash "$src/.ci/run" 2>&1); rc=$?
[ "$rc" -eq 1 ] || fail "past the budget: exit $rc, expected 1: $out"
grep -qF "the sanitize_ci stage cannot fit CI's hour: it did not run" <<<"$out" ||
  fail "past the budget: the stage not named: $out"
grep -qF -- "--sanitize -L sanitize_ci" <<<"$(grep 'would run' <<<"$out")" &&
  fail "past the budget: the sanitize_ci stage ran: $out"
echo "ci_run_test: ok"
