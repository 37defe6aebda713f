// A comparison names every config key that differs, shows achieved GFLOP/s beside MFU and flags an
// MFU ratio whose two peaks differ (fixtures: run_a 25 GFLOP/s median after warm-up, run_b 45;
// both configured at a 100 GFLOP/s peak).
#include <gtest/gtest.h>

#include "llmprof/report/compare.h"
#include "report/fixture_paths.h"

namespace llmprof::report {
namespace {

using test::report_fixture;

const Table& table(const std::vector<Table>& tables, const std::string& id) {
  for (const auto& t : tables) {
    if (t.id == id) return t;
  }
  throw std::runtime_error("no table " + id);
}

const std::vector<Cell>& row(const Table& t, const std::string& first) {
  for (const auto& r : t.rows) {
    if (r[0].text == first) return r;
  }
  throw std::runtime_error("no row " + first + " in " + t.id);
}

bool has_note(const Table& t, const std::string& part) {
  for (const auto& n : t.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

std::vector<Table> tables_of(const Run& a, const Run& b) {
  return compare_tables(a, compute_metrics(a), b, compute_metrics(b));
}

TEST(CompareConfig, NamesEveryKeyThatDiffersInKeyOrder) {
  const rundir::Run a = rundir::load_run(report_fixture("run_a"));
  rundir::Run b = rundir::load_run(report_fixture("run_b"));
  b.config["train.precision"] = "bf16";  // only in b
  const std::vector<Table> tables = tables_of(a, b);
  const Table& t = table(tables, "compare.config");
  std::vector<std::string> keys;
  for (const auto& r : t.rows) keys.push_back(r[0].text);
  EXPECT_EQ(keys, (std::vector<std::string>{"data.num_workers", "model.block_size", "profile.level",
                                            "runtime.malloc_tuning", "train.batch_size",
                                            "train.precision"}));
  EXPECT_EQ(row(t, "train.batch_size")[1].text, "4");
  EXPECT_EQ(row(t, "train.batch_size")[2].text, "16");
  EXPECT_EQ(row(t, "train.precision")[1].text, "(absent)");
  EXPECT_EQ(row(t, "train.precision")[2].text, "bf16");
  EXPECT_TRUE(has_note(table(tables, "compare.phases"),
                       "Config keys that differ (compare.config): data.num_workers, "
                       "model.block_size, profile.level, runtime.malloc_tuning, "
                       "train.batch_size, train.precision."));
}

TEST(CompareConfig, SameConfigSaysSo) {
  const rundir::Run a = rundir::load_run(report_fixture("run_a"));
  const std::vector<Table> tables = tables_of(a, a);
  const Table& t = table(tables, "compare.config");
  EXPECT_TRUE(t.rows.empty());
  EXPECT_TRUE(has_note(t, "hold the same values"));
}

TEST(ComparePhases, AchievedGflopsBesideMfuWhenPeaksAgree) {
  const rundir::Run a = rundir::load_run(report_fixture("run_a"));
  const rundir::Run b = rundir::load_run(report_fixture("run_b"));
  const std::vector<Table> tables = tables_of(a, b);
  const Table& t = table(tables, "compare.phases");
  const auto& g = row(t, "achieved GFLOP/s");
  EXPECT_NEAR(*g[1].value, 25, 1e-9);  // median of steps 1-10 of run_a's flops_per_s, / 1e9
  EXPECT_NEAR(*g[2].value, 45, 1e-9);
  EXPECT_NEAR(*g[3].value, 1.8, 1e-9);
  const auto& mfu = row(t, "MFU");
  EXPECT_EQ(mfu[6].text, "yes");  // the same 100 GFLOP/s peak: MFU is tested like the rest
  EXPECT_EQ(row(t, "MFU peak GFLOP/s")[6].text, "n/a");
  EXPECT_FALSE(has_note(t, "different peaks"));
}

// An fp32 run against a bf16 one: each MFU divides by its own peak.
TEST(ComparePhases, FlagsMfuRatioWhenPeaksDiffer) {
  const rundir::Run a = rundir::load_run(report_fixture("run_a"));
  rundir::Run b = rundir::load_run(report_fixture("run_b"));
  b.peak_flops_per_s = 2e11;
  const std::vector<Table> tables = tables_of(a, b);
  const Table& t = table(tables, "compare.phases");
  EXPECT_EQ(row(t, "MFU")[6].text, "n/a: peaks differ");
  const auto& peak = row(t, "MFU peak GFLOP/s");
  EXPECT_NEAR(*peak[1].value, 100, 1e-9);
  EXPECT_NEAR(*peak[2].value, 200, 1e-9);
  EXPECT_NEAR(*peak[3].value, 2, 1e-12);
  EXPECT_EQ(peak[6].text, "differ");
  EXPECT_TRUE(has_note(t,
                       "MFU divides by different peaks (env.json peak_flops: A 100.0 GFLOP/s, "
                       "B 200.0 GFLOP/s, 2.00x)"));
  EXPECT_NEAR(*row(t, "achieved GFLOP/s")[3].value, 1.8, 1e-9);  // still comparable
}

TEST(ComparePhases, PeaksWithinTwoPercentAreTheSamePeak) {
  const rundir::Run a = rundir::load_run(report_fixture("run_a"));
  rundir::Run b = rundir::load_run(report_fixture("run_b"));
  b.peak_flops_per_s = 1.015e11;  // two measurements of one peak
  const std::vector<Table> tables = tables_of(a, b);
  EXPECT_EQ(row(table(tables, "compare.phases"), "MFU")[6].text, "yes");
}

}  // namespace
}  // namespace llmprof::report
