// Comparing two runs: the noise threshold from per-step spreads, a large change flagged and a
// noise-level one not (fixture run_b doubles forward and shifts backward by 0.1 ms).
#include "llmprof/report/compare.h"

#include <gtest/gtest.h>

#include "report/fixture_paths.h"

namespace llmprof::report {
namespace {

using test::report_fixture;

const Table& find_table(const std::vector<Table>& tables, const std::string& id) {
  for (const auto& t : tables) {
    if (t.id == id) return t;
  }
  throw std::runtime_error("no table " + id);
}

const std::vector<Cell>& find_row(const Table& t, const std::string& first) {
  for (const auto& r : t.rows) {
    if (r[0].text == first) return r;
  }
  throw std::runtime_error("no row " + first + " in " + t.id);
}

TEST(MedianStandardError, FollowsTheSpreadFormula) {
  Stats s;
  s.n = 10;
  s.p10 = 3.09;
  s.p90 = 3.91;
  // sigma = 0.82 / 3.29 = 0.249240; se = sigma * sqrt(pi/2) / sqrt(10) = 0.0987820.
  EXPECT_NEAR(median_standard_error(s), 0.0987820178, 1e-9);
  EXPECT_NEAR(median_noise_threshold(s, s), 0.4190966077, 1e-9);  // 3 * sqrt(2) * se
}

TEST(SignificantChange, FlagsAShiftAboveThreeStandardErrors) {
  Stats a, b;
  a.n = b.n = 10;
  a.p10 = 2.99, a.median = 3.0, a.p90 = 3.01;
  b.p10 = 5.98, b.median = 6.0, b.p90 = 6.02;
  EXPECT_NEAR(median_noise_threshold(a, b), 0.0161621932, 1e-9);
  EXPECT_TRUE(significant_change(a, b));
}

TEST(SignificantChange, IgnoresAShiftWithinNoise) {
  Stats a, b;
  a.n = b.n = 10;
  a.p10 = 3.09, a.median = 3.5, a.p90 = 3.91;
  b.p10 = 3.19, b.median = 3.6, b.p90 = 4.01;
  EXPECT_FALSE(significant_change(a, b));  // 0.1 < 0.419
}

TEST(CompareTables, FlagsForwardDoublingButNotBackwardNoise) {
  auto a = rundir::load_run(report_fixture("run_a"));
  auto b = rundir::load_run(report_fixture("run_b"));
  auto tables = compare_tables(a, compute_metrics(a), b, compute_metrics(b));
  const Table& phases = find_table(tables, "compare.phases");
  const auto& fwd = find_row(phases, "forward ms");
  EXPECT_DOUBLE_EQ(*fwd[1].value, 3.0);
  EXPECT_DOUBLE_EQ(*fwd[2].value, 6.0);
  EXPECT_NEAR(*fwd[3].value, 2.0, 1e-12);  // B/A
  EXPECT_NEAR(*fwd[5].value, 0.0161621932, 1e-9);
  EXPECT_EQ(fwd[6].text, "yes");
  const auto& bwd = find_row(phases, "backward ms");
  EXPECT_NEAR(*bwd[4].value, 0.1, 1e-9);
  EXPECT_NEAR(*bwd[5].value, 0.4190966077, 1e-9);
  EXPECT_EQ(bwd[6].text, "no");
  EXPECT_EQ(find_row(phases, "step ms")[6].text, "yes");   // 10 -> 16 ms, threshold 0.56
  EXPECT_EQ(find_row(phases, "energy J")[6].text, "n/a");  // measured in B only
}

// A 2-rank run against a 1-rank one: the ranks and the scaling efficiency, (B's global tokens/s /
// A's) / (2 / 1). run_b's rows are given 1.5x run_a's tokens/s: 75% efficiency.
TEST(CompareTables, RunsOfDifferentWorldSizesShowTheScalingEfficiency) {
  auto a = rundir::load_run(report_fixture("run_a"));
  auto b = rundir::load_run(report_fixture("run_a"));
  b.label = "two_ranks";
  b.world_size = 2;
  for (auto& row : b.steps) {
    if (row.tokens_per_s) row.tokens_per_s = *row.tokens_per_s * 1.5;
  }
  auto tables = compare_tables(a, compute_metrics(a), b, compute_metrics(b));
  const Table& phases = find_table(tables, "compare.phases");
  const auto& ranks = find_row(phases, "ranks");
  EXPECT_DOUBLE_EQ(*ranks[1].value, 1);
  EXPECT_DOUBLE_EQ(*ranks[2].value, 2);
  EXPECT_NEAR(*find_row(phases, "scaling efficiency")[3].value, 0.75, 1e-12);
  // The same world size: no such rows.
  auto same = compare_tables(a, compute_metrics(a), a, compute_metrics(a));
  EXPECT_THROW(find_row(find_table(same, "compare.phases"), "ranks"), std::runtime_error);
}

TEST(CompareTables, RatiosPerScopeAndOp) {
  auto a = rundir::load_run(report_fixture("run_a"));
  auto b = rundir::load_run(report_fixture("run_b"));
  auto tables = compare_tables(a, compute_metrics(a), b, compute_metrics(b));
  const auto& core = find_row(find_table(tables, "compare.modules"), "attn.core fwd");
  EXPECT_NEAR(*core[3].value, 1.6 / 0.4, 1e-9);
  const auto& bmm = find_row(find_table(tables, "compare.ops"), "aten::bmm");
  EXPECT_NEAR(*bmm[3].value, 3.0, 1e-12);
  const auto& addmm = find_row(find_table(tables, "compare.ops"), "aten::addmm");
  EXPECT_NEAR(*addmm[3].value, 1.0, 1e-12);
}

}  // namespace
}  // namespace llmprof::report
