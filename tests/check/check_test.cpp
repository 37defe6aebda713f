#include "llmprof/check/check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "llmprof/ab/stats.h"
#include "llmprof/error.h"
#include "llmprof/rundir/tables.h"
#include "support/test_support.h"

namespace llmprof::check {
namespace {

using test::ScratchDir;
using test::write_file;

// A run directory with the summary.json fields check reads and a steps.csv of three steps.
std::string make_run(const ScratchDir& dir, const std::string& name, double step_ms,
                     double val_loss, double params, double rss, double loss3) {
  const std::string run = dir.file(name);
  write_file(run + "/summary.json",
             "{\"schema_version\": 1, \"status\": \"completed\", \"parameters\": " +
                 std::to_string(params) + ", \"timing\": {\"step_ms\": {\"median\": " +
                 std::to_string(step_ms) + "}}, \"loss\": {\"final_val_loss\": " +
                 std::to_string(val_loss) + ", \"final_train_loss\": null}, \"memory\": " +
                 "{\"peak_rss_bytes\": " + std::to_string(rss) + "}, \"flops\": " +
                 "{\"analytic_per_step\": 1000}}");
  // steps.csv as the run directory writes it: every column, only loss filled in.
  std::string header = "step", empties;
  for (const auto& c : rundir::step_columns()) {
    header += "," + std::string(c.name);
    if (c.name != "loss") empties += ",";
  }
  std::string rows = header + "\n";
  for (const auto& [step, loss] : {std::pair{1, 4.0}, {2, 3.5}, {3, loss3}}) {
    rows += std::to_string(step) + "," + std::to_string(loss) + empties + "\n";
  }
  write_file(run + "/steps.csv", rows);
  return run;
}

TEST(CheckGate, ParsesRelativeAndAbsoluteAmounts) {
  const Gate a = parse_gate(Bound::kMax, "step_ms=+5%");
  EXPECT_EQ(a.figure.name, "step_ms");
  EXPECT_TRUE(a.relative);
  EXPECT_DOUBLE_EQ(a.amount, 0.05);
  const Gate b = parse_gate(Bound::kMax, "val_loss=0.02");
  EXPECT_FALSE(b.relative);
  EXPECT_DOUBLE_EQ(b.amount, 0.02);
}

TEST(CheckGate, UnsignedMinAmountIsTheAllowedDrop) {
  EXPECT_DOUBLE_EQ(parse_gate(Bound::kMin, "tokens_per_s=5%").amount, -0.05);
  EXPECT_DOUBLE_EQ(parse_gate(Bound::kMin, "tokens_per_s=-5%").amount, -0.05);
  EXPECT_DOUBLE_EQ(parse_gate(Bound::kMin, "tokens_per_s=+5%").amount, 0.05);  // must improve
}

TEST(CheckGate, UnknownFigureListsTheKnownOnes) {
  try {
    parse_gate(Bound::kMax, "step_time=+5%");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    test::expect_contains(e.what(), "no figure 'step_time'");
    test::expect_contains(e.what(), "step_ms, forward_ms");
  }
}

TEST(CheckGate, BadAmountDirectionAndToleranceAreUsageErrors) {
  EXPECT_THROW(parse_gate(Bound::kMax, "step_ms=5 percent"), UsageError);
  EXPECT_THROW(parse_gate(Bound::kMax, "step_ms"), UsageError);
  EXPECT_THROW(parse_gate(Bound::kMax, "step_ms=%"), UsageError);
  try {
    parse_gate(Bound::kMax, "tokens_per_s=+5%");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    test::expect_contains(e.what(), "better when higher: bound it with --min tokens_per_s");
  }
  EXPECT_THROW(parse_gate(Bound::kWithin, "loss@3=-1e-4"), UsageError);
}

TEST(CheckFigure, StepLossTakesAnyStepNumber) {
  EXPECT_EQ(find_figure("loss@20").name, "loss@20");
  EXPECT_EQ(find_figure("loss@20").kind, Kind::kLoss);
  EXPECT_THROW(find_figure("loss@0"), UsageError);
  EXPECT_THROW(find_figure("loss@x"), UsageError);
}

TEST(CheckDirs, DeterministicFiguresAreGatedTimingReported) {
  ScratchDir dir("check");
  const std::string a = make_run(dir, "a", 10.0, 3.00, 1000, 1e8, 3.0);
  const std::string b = make_run(dir, "b", 20.0, 3.05, 1000, 1.2e8, 3.0);
  const CheckResult r = check_dirs(a, b,
                                   {parse_gate(Bound::kMax, "step_ms=+5%"),
                                    parse_gate(Bound::kMax, "val_loss=+0.02"),
                                    parse_gate(Bound::kWithin, "parameters=0"),
                                    parse_gate(Bound::kMax, "peak_rss_bytes=+10%"),
                                    parse_gate(Bound::kWithin, "loss@3=1e-6")});
  ASSERT_EQ(r.results.size(), 5u);
  EXPECT_EQ(r.results[0].outcome, Outcome::kReported);  // 2x slower, but from two directories
  EXPECT_DOUBLE_EQ(*r.results[0].ratio, 2.0);
  EXPECT_EQ(r.results[1].outcome, Outcome::kFail);  // 3.05 > 3.00 + 0.02
  EXPECT_NEAR(*r.results[1].limit, 3.02, 1e-12);
  EXPECT_EQ(r.results[2].outcome, Outcome::kPass);
  EXPECT_EQ(r.results[3].outcome, Outcome::kFail);  // 1.2e8 > 1.1e8
  EXPECT_EQ(r.results[4].outcome, Outcome::kPass);
  EXPECT_EQ(exit_code_of(r), kExitRegression);
}

// Bytes read in MiB with the exact count beside them, and an exact gate's counts in full: never
// "1.82321e+08".
TEST(CheckDirs, ReasonsGiveBytesInMiBWithTheCountAndCountsInFull) {
  ScratchDir dir("check");
  const std::string a = make_run(dir, "a", 10.0, 3.0, 124439808, 182321152, 3.0);
  const std::string b = make_run(dir, "b", 10.0, 3.0, 124439808, 200000000, 3.0);
  CheckResult r = check_dirs(
      a, b,
      {parse_gate(Bound::kMax, "peak_rss_bytes=+10%"), parse_gate(Bound::kWithin, "parameters=0")});
  ASSERT_EQ(r.results.size(), 2u);
  // limit 182321152 x 1.1 = 200553267.2 bytes = 191.26 MiB
  EXPECT_EQ(r.results[0].reason,
            "baseline 173.9 MiB (182321152 bytes), candidate 190.7 MiB (200000000 bytes): within "
            "<= 191.3 MiB (200553267 bytes)");
  EXPECT_EQ(r.results[1].reason,
            "baseline 124439808, candidate 124439808: within |candidate - baseline| <= 0");
  const std::string text = render_text(r) + render_markdown(r) + render_junit(r);
  EXPECT_EQ(text.find("e+0"), std::string::npos) << text;
  test::expect_contains(render_markdown(r), "| 173.9 MiB (182321152 bytes) |");
}

TEST(CheckDirs, NullFigureIsInconclusiveWithTheReason) {
  ScratchDir dir("check");
  const std::string a = make_run(dir, "a", 10.0, 3.0, 1000, 1e8, 3.0);
  const CheckResult r = check_dirs(a, a, {parse_gate(Bound::kMax, "train_loss=+0.02"),
                                          parse_gate(Bound::kWithin, "loss@9=0")});
  EXPECT_EQ(r.results[0].outcome, Outcome::kInconclusive);
  test::expect_contains(r.results[0].reason, "/loss/final_train_loss is null");
  EXPECT_EQ(r.results[1].outcome, Outcome::kInconclusive);
  test::expect_contains(r.results[1].reason, "has no step 9 (the run has 3)");
  EXPECT_EQ(exit_code_of(r), kExitInconclusive);
}

TEST(CheckDirs, MissingDirectoryIsADataError) {
  ScratchDir dir("check");
  const std::string a = make_run(dir, "a", 10.0, 3.0, 1000, 1e8, 3.0);
  EXPECT_THROW(check_dirs(a, dir.file("nope"), default_gates(false)), DataError);
}

TEST(CheckHolm, StepDownStopsAtTheFirstKeptHypothesis) {
  // Sorted 0.01 <= 0.05/3 rejected; 0.03 > 0.05/2 kept, and so is everything after it.
  const std::vector<bool> r = holm_reject({0.01, 0.04, 0.03}, 0.05);
  EXPECT_EQ(r, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(holm_reject({0.01, 0.02}, 0.05), (std::vector<bool>{true, true}));  // 0.02 <= 0.05/1
}

// Paired repetitions: noise shared by the pair's round (a machine slower for a while) and its own.
void repetitions(double slowdown, uint64_t seed, std::vector<RepetitionFigures>& b,
                 std::vector<RepetitionFigures>& c) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> round_noise(0, 0.3), own(0, 0.03);
  for (int i = 0; i < 10; ++i) {
    const double base = 10 * round_noise(rng);
    b.push_back({{base * own(rng)}, ""});
    c.push_back({{base * slowdown * own(rng)}, ""});
  }
}

TEST(CheckRepetitions, SameCodePassesAndSlowerCodeFails) {
  const std::vector<Gate> gates{parse_gate(Bound::kMax, "step_ms=+10%")};
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::vector<RepetitionFigures> b, c;
    repetitions(1.0, seed, b, c);
    const GateResult same = judge_repetitions(gates, b, c)[0];
    EXPECT_NE(same.outcome, Outcome::kFail) << same.reason;
    std::vector<RepetitionFigures> b2, c2;
    repetitions(1.25, seed, b2, c2);
    const GateResult slower = judge_repetitions(gates, b2, c2)[0];
    EXPECT_EQ(slower.outcome, Outcome::kFail) << slower.reason;
    ASSERT_TRUE(slower.interval);
    EXPECT_GT(slower.interval->low, 1.10);
  }
}

// Seven pairs of 10 ms baselines, the candidate 1.5x in every round: against --max step_ms=+10%
// all 7 ratios lie above the bound, so the sign test's p of "not beyond the bound" is
// P(Binom(7, 1/2) >= 7) = 1/128 = 0.0078: below Holm's first level for two comparisons
// (0.025/2 = 0.0125), above it for four (0.025/4 = 0.00625).
PointRepetitions slower_point(const std::string& id, size_t gates) {
  PointRepetitions p{id, {}, {}};
  for (int k = 0; k < 7; ++k) {
    p.baseline.push_back({std::vector<std::optional<double>>(gates, 10.0), id + "/b"});
    p.candidate.push_back({std::vector<std::optional<double>>(gates, 15.0), id + "/c"});
  }
  return p;
}

PointRepetitions same_point(const std::string& id, size_t gates, int rounds = 7) {
  PointRepetitions p{id, {}, {}};
  for (int k = 0; k < rounds; ++k) {
    p.baseline.push_back({std::vector<std::optional<double>>(gates, 10.0 + k), id + "/b"});
    p.candidate.push_back({std::vector<std::optional<double>>(gates, 10.0 + k), id + "/c"});
  }
  return p;
}

// One round of seven at no change, six at 1.5x: 6 ratios above +10%, p = P(B >= 6) = 8/128, and
// the interval (k = 1 at 7 pairs: 1 - 2/128 = 98.4%) spans from 1.0 to 1.5: inconclusive.
TEST(CheckHolm, BorderlinePValueIsTheHandComputedOne) {
  PointRepetitions p = slower_point("a", 1);
  p.candidate[3].values[0] = 10.0;
  const GateResult r = judge_points({parse_gate(Bound::kMax, "step_ms=+10%")}, {p})[0];
  EXPECT_EQ(r.outcome, Outcome::kInconclusive) << r.reason;
  ASSERT_TRUE(r.interval);
  EXPECT_DOUBLE_EQ(r.interval->low, 1.0);
  EXPECT_DOUBLE_EQ(r.interval->high, 1.5);
  EXPECT_DOUBLE_EQ(r.interval->confidence, 126.0 / 128);
  EXPECT_DOUBLE_EQ(ab::sign_test_p(7, 6), 8.0 / 128);
  test::expect_contains(r.reason, "98.4% interval [1.000, 1.500]");
  test::expect_contains(r.reason, "p 0.99");  // of "inside": 1 - 1/128 (one ratio below 1.1)
}

TEST(CheckHolm, FamilyIsEveryPointTimesEveryTimingGate) {
  const Gate tight = parse_gate(Bound::kMax, "step_ms=+10%");
  const Gate loose = parse_gate(Bound::kMax, "step_ms=+60%");  // above every ratio: passes
  // Alone, and in a family of two (two points, one gate): 1/128 <= 0.025 / 2, a regression.
  const GateResult alone = judge_points({tight}, {slower_point("a", 1)})[0];
  EXPECT_EQ(alone.outcome, Outcome::kFail) << alone.reason;
  test::expect_contains(alone.reason, "p 0.0078");  // exact, never 0
  const auto two = judge_points({tight}, {slower_point("a", 1), same_point("b", 1)});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].outcome, Outcome::kFail) << two[0].reason;
  EXPECT_EQ(two[0].point, "a");
  EXPECT_EQ(two[1].outcome, Outcome::kPass) << two[1].reason;
  EXPECT_EQ(two[1].point, "b");
  // Two points x two gates: every p is 1/128 > 0.025 / 4, so Holm's step-down stops at once and
  // every gate is inconclusive, saying how many rounds could decide (2^-8 <= 0.00625). A Holm over
  // the two gates of one point only would have failed the first.
  const auto four = judge_points({tight, loose}, {slower_point("a", 2), same_point("b", 2)});
  ASSERT_EQ(four.size(), 4u);
  for (const GateResult& r : four) EXPECT_EQ(r.outcome, Outcome::kInconclusive) << r.reason;
  test::expect_contains(four[0].reason, "Holm over 4 comparisons: 2 points x timing gates");
  test::expect_contains(four[0].reason,
                        "7 pairs cannot reach Holm's first level 0.0063 (p >= 2^-7): 8 rounds can");
  EXPECT_EQ(four[0].point, "a");
  EXPECT_EQ(four[2].point, "b");
  // Eight rounds of the same: 2^-8 = 0.0039 reaches 0.00625, and the step-down goes on.
  const auto eight = judge_points({tight, loose}, {same_point("b", 2, 8), same_point("c", 2, 8)});
  for (const GateResult& r : eight) EXPECT_EQ(r.outcome, Outcome::kPass) << r.reason;
}

TEST(CheckHolm, StepDownOverPointsTimesFiguresByHand) {
  // 2 points x 2 figures at family level 0.025: sorted 0.004 <= 0.025/4 and 0.006 <= 0.025/3
  // are rejected; 0.02 > 0.025/2 stops the step-down, though alone it would be rejected.
  EXPECT_EQ(holm_reject({0.004, 0.02, 0.006, 0.3}, 0.025),
            (std::vector<bool>{true, false, true, false}));
}

TEST(CheckSweepCommand, RecognisesLlmprofSweepOnly) {
  EXPECT_TRUE(is_sweep_command("build/llmprof sweep -c configs/tiny_test.yaml --grid a=1,2"));
  EXPECT_TRUE(is_sweep_command("env OMP_NUM_THREADS=1 '/opt/x/llmprof' sweep -c f.yaml"));
  EXPECT_FALSE(is_sweep_command("build/llmprof train -c sweep.yaml"));
  EXPECT_FALSE(is_sweep_command("sweep llmprof"));
  EXPECT_FALSE(is_sweep_command("build/llmprof-old sweep -c f.yaml"));
}

TEST(CheckRepetitions, PointMissingFromARoundIsInconclusive) {
  const Gate g = parse_gate(Bound::kMax, "step_ms=+10%");
  PointRepetitions p = same_point("a", 1);
  for (auto& rep : p.candidate) rep = RepetitionFigures{};  // the candidate never had the point
  const GateResult r = judge_points({g}, {p})[0];
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
  test::expect_contains(r.reason, "0 pairs with a value");
}

TEST(CheckRepetitions, FewerPairsThanAnIntervalNeedsAreInconclusive) {
  const std::vector<Gate> gates{parse_gate(Bound::kMax, "step_ms=+5%")};
  const GateResult r =
      judge_repetitions(gates, {{{10.0}, "a"}}, {{{30.0}, "b"}})[0];
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
  test::expect_contains(r.reason, "1 pairs with a value: at least 6 are needed for a 95% interval");
  // Five pairs, the candidate 3x slower in each: still no verdict (93.75% at best).
  PointRepetitions p = slower_point("a", 1);
  p.baseline.resize(5);
  p.candidate.resize(5);
  EXPECT_EQ(judge_points(gates, {p})[0].outcome, Outcome::kInconclusive);
}

// check_ab refuses too few rounds before it runs anything (the commands here would fail).
TEST(CheckAb, TooFewRoundsAreAUsageErrorNamingTheMinimum) {
  AbCheckOptions o;
  o.baseline_command = o.candidate_command = "false";
  o.gates = {parse_gate(Bound::kMax, "step_ms=+5%")};
  o.rounds = 5;
  try {
    check_ab(o);
    FAIL() << "5 rounds were accepted";
  } catch (const UsageError& e) {
    test::expect_contains(e.what(), "--repetitions 5: at least 6 are needed");
    test::expect_contains(e.what(), "93.8% confidence at best");
  }
  // Two timing gates: Holm's first level 0.0125 needs 2^-n <= 0.0125, 7 rounds.
  o.gates.push_back(parse_gate(Bound::kMax, "forward_ms=+5%"));
  o.rounds = 6;
  try {
    check_ab(o);
    FAIL() << "6 rounds were accepted for two timing gates";
  } catch (const UsageError& e) {
    test::expect_contains(e.what(), "at least 7 are needed");
    test::expect_contains(e.what(), "2 timing gates need 7");
  }
}

// A command that exits 0 but writes no run directory is bad input (exit 2), not inconclusive.
TEST(CheckAb, ACommandThatWritesNoRunIsAUsageError) {
  ScratchDir dir("check");
  AbCheckOptions o;
  o.baseline_command = "echo hi";
  o.candidate_command = "echo ho";
  o.gates = {parse_gate(Bound::kMax, "step_ms=+5%")};
  o.rounds = 6;
  o.scratch_dir = dir.path();
  try {
    check_ab(o);
    FAIL() << "echo was accepted as a run";
  } catch (const UsageError& e) {
    test::expect_contains(e.what(), "the baseline command `echo hi` exited 0 but wrote no run");
  }
}

TEST(CheckRender, JunitCarriesBothValuesAndValidates) {
  ScratchDir dir("check");
  const std::string a = make_run(dir, "a", 10.0, 3.00, 1000, 1e8, 3.0);
  const std::string b = make_run(dir, "b<&>", 20.0, 3.05, 1000, 1e8, 3.0);
  CheckResult r = check_dirs(a, b, {parse_gate(Bound::kMax, "val_loss=+0.02"),
                                    parse_gate(Bound::kMax, "train_loss=+0.02"),
                                    parse_gate(Bound::kMax, "step_ms=+5%")});
  r.command = "llmprof check a b --max val_loss=+0.02";
  const std::string xml = render_junit(r);
  test::expect_contains(xml, "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\"");
  test::expect_contains(xml, "baseline value: 3");
  test::expect_contains(xml, "candidate value: 3.05");
  test::expect_contains(xml, "b&lt;&amp;&gt;");
  write_file(dir.file("check.xml"), xml);
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "xmllint not installed (Debian: libxml2-utils): the schema check is skipped";
  }
  const std::string cmd = "xmllint --noout --schema " + std::string(LLMPROF_SOURCE_DIR) +
                          "/tests/check/junit.xsd " + dir.file("check.xml") + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST(CheckRender, JsonAndMarkdownNameTheVerdict) {
  ScratchDir dir("check");
  const std::string a = make_run(dir, "a", 10.0, 3.00, 1000, 1e8, 3.0);
  const CheckResult r = check_dirs(a, a, {parse_gate(Bound::kWithin, "parameters=0")});
  test::expect_contains(render_json(r), "\"verdict\": \"pass\"");
  test::expect_contains(render_markdown(r), "| `--within parameters=0` |  | **pass** |");
}

}  // namespace
}  // namespace llmprof::check
