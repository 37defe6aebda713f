// tune.svg and tune.md: the winner marked, a candidate that does not fit on the axis, the speed
// as the objective reads (tokens/s: the start's time over the candidate's).
#include <gtest/gtest.h>

#include "llmprof/tune/tune.h"
#include "support/test_support.h"

namespace llmprof::tune {
namespace {

rundir::TuneDoc two() {
  rundir::TuneDoc d;
  d.inputs.objective = "tokens_per_s";
  d.inputs.steps = 20;
  rundir::TuneCandidate w;
  w.id = 1;
  w.sets = {"threads=2"};
  w.planned_peak_bytes = 100 << 20;
  w.ratio = 0.5;  // half the time per token: 2x tokens/s
  w.ci_low = 0.4;
  w.ci_high = 0.625;
  w.loss_difference = 0.004;
  w.outcome = "winner";
  rundir::TuneCandidate big;
  big.id = 2;
  big.sets = {"train.batch_size=4096"};
  big.planned_peak_bytes = int64_t{50} << 30;
  big.planned_fits = false;
  big.outcome = "does_not_fit";
  d.candidates = {w, big};
  d.winner = 1;
  return d;
}

TEST(TuneChart, MarksTheWinnerAndPutsWhatDoesNotFitOnTheAxis) {
  const std::string svg = tune_chart_svg(two());
  test::expect_contains(svg, "r=\"7\" fill=\"#d60\"><title>1: threads=2 winner</title>");
  test::expect_contains(svg, ">x<title>2: train.batch_size=4096 does_not_fit</title>");
  test::expect_contains(svg, "start (1.0)");
}

TEST(TuneTable, GivesTheSpeedUpWithItsIntervalAndTheLossDifference) {
  const rundir::TuneDoc d = two();
  EXPECT_EQ(speed_text(d, d.candidates[0]), "2.00x tokens/s [1.60, 2.50]");
  const std::string md = tune_table_markdown(d);
  test::expect_contains(md, "| 2.00x tokens/s [1.60, 2.50] | +0.40% |");
  test::expect_contains(md, "50.00 GiB (does not fit)");
}

TEST(TuneBudget, ParsesDurationsAndRefusesOthers) {
  EXPECT_DOUBLE_EQ(parse_budget_s("20m"), 1200);
  EXPECT_DOUBLE_EQ(parse_budget_s("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(parse_budget_s("90s"), 90);
  EXPECT_DOUBLE_EQ(parse_budget_s("45"), 45);
  for (const char* bad : {"", "m", "1h30", "20x", "0s"}) {
    EXPECT_THROW(parse_budget_s(bad), UsageError) << bad;
  }
}

}  // namespace
}  // namespace llmprof::tune
