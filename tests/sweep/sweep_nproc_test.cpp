// A sweep over the number of ranks: `--grid nproc=1,2` runs its nproc=2 point as
// `llmprof train --nproc 2` (a data-parallel run directory: rank0/, rank1/ and the merged
// documents), the nproc=1 point as a plain run; nproc is a sweep.csv column, no config key; a
// bad nproc value exits 2 before anything runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/csv_rows.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof {
namespace {

using test::expect_contains;
using test::ScratchDir;

TEST(SweepNproc, EachPointTrainsOnItsNumberOfRanks) {
  ScratchDir dir("llmprof_sweep_nproc");
  const std::vector<std::string> args = {"sweep", "--config", test::kTinyConfig, "--out",
                                         dir.path(), "--name", "s", "--quiet", "--grid",
                                         "nproc=1,2", "--set", "schedule.max_steps=4", "--set",
                                         "threads=2"};
  const auto r = test::run_llmprof(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = test::csv_rows(dir.file("s/sweep.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("nproc"), "1");
  EXPECT_EQ(rows[1].at("nproc"), "2");
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "completed") << row.at("point_id");
    EXPECT_FALSE(row.at("median_step_ms").empty()) << row.at("point_id");
  }
  const std::string one = rows[0].at("run_dir"), two = rows[1].at("run_dir");
  EXPECT_FALSE(fs::exists(one + "/rank0"));
  ASSERT_TRUE(fs::exists(two + "/rank1/steps.csv")) << two;
  const auto summary = nlohmann::json::parse(test::read_file(two + "/summary.json"));
  EXPECT_EQ(summary["distributed"]["world_size"], 2) << summary.dump();
  // The 2-rank point's tokens/s is global (the top summary's), beside its communication; the
  // one-rank point has no communication (empty, not 0).
  EXPECT_EQ(rows[0].at("ranks"), "1");
  EXPECT_EQ(rows[1].at("ranks"), "2");
  EXPECT_EQ(std::stod(rows[1].at("tokens_per_s")),
            summary["throughput"]["tokens_per_s"]["median"].get<double>());
  for (const char* c : {"exposed_comm_ms", "overlap", "busbw_gb_per_s"}) {
    EXPECT_EQ(rows[0].at(c), "") << c;
    EXPECT_FALSE(rows[1].at(c).empty()) << c;
  }
  EXPECT_EQ(std::stod(rows[1].at("exposed_comm_ms")),
            summary["distributed"]["comm"]["exposed_comm_ms_median"].get<double>());
  const auto report = test::run_llmprof({"report", dir.file("s")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  expect_contains(report.output, "exposed comm ms");
  expect_contains(report.output, "busbw GB/s");
  // Each rank got its share of the point's 2 threads, and no --set nproc reached train.
  expect_contains(test::read_file(two + "/rank0/config.yaml"), "threads: 1");
  // The same command again finds both points finished with their config: nothing runs again.
  const auto before = fs::last_write_time(two + "/rank1/steps.csv");
  const auto again = test::run_llmprof(args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(fs::last_write_time(two + "/rank1/steps.csv"), before) << again.output;
}

TEST(SweepNproc, BadValueExitsTwoNamingIt) {
  ScratchDir dir("llmprof_sweep_nproc_bad");
  const auto r = test::run_llmprof({"sweep", "--config", test::kTinyConfig, "--out", dir.path(),
                                    "--name", "s", "--quiet", "--grid", "nproc=1,zero"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "nproc=zero is not a number of ranks");
  EXPECT_FALSE(fs::exists(dir.file("s/runs")));
}

}  // namespace
}  // namespace llmprof
