// Point outcomes: metrics read from a hand-written summary.json (nulls stay empty), failures
// without a summary described by exit code or signal and the log's last error line, sweep.csv.
#include "results.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <string>

#include "llmprof/output/csv.h"
#include "support/test_support.h"

namespace llmprof::sweep {
namespace {

// A wait status as waitpid reports it: exited with code, or killed by sig.
int exited(int code) { return code << 8; }
int killed(int sig) { return sig; }

const char* kSummary = R"({
  "schema_version": 1, "status": "completed", "message": null,
  "timing": {"step_ms": {"median": 12.5}},
  "throughput": {"tokens_per_s": {"median": 10240}},
  "mfu": {"value": {"median": null}},
  "loss": {"final_train_loss": 2.5, "final_val_loss": 2.75,
           "final_val_perplexity": 15.642631884188171},
  "memory": {"peak_rss_bytes": 123456789},
  "energy": {"total_j": 42.5}
})";

TEST(CountPoints, SortsOutcomesAndLeavesPendingAndRunningOut) {
  std::vector<PointResult> results(7);
  const char* statuses[] = {"completed",   "completed", "diverged", "failed",
                            "interrupted", "pending",   "running"};
  for (size_t i = 0; i < results.size(); ++i)
    results[i].status = config::parse_enum<config::PointStatus>(statuses[i]);
  PointCounts c = count_points(results);
  EXPECT_EQ(c.completed, 2);
  EXPECT_EQ(c.diverged, 1);
  EXPECT_EQ(c.failed, 1);
  EXPECT_EQ(c.interrupted, 1);
  EXPECT_EQ(c.done(), 3);
}

TEST(ReadSummary, ReadsMetricsAndLeavesNullsEmpty) {
  test::ScratchDir dir;
  test::write_file(dir.file("run/summary.json"), kSummary);
  PointResult r;
  ASSERT_TRUE(read_summary(dir.file("run"), r));
  EXPECT_EQ(config::name(r.status), "completed");
  EXPECT_EQ(r.median_step_ms, 12.5);
  EXPECT_EQ(r.tokens_per_s, 10240);
  EXPECT_FALSE(r.mfu.has_value());
  EXPECT_EQ(r.final_val_loss, 2.75);
  EXPECT_EQ(r.peak_rss_bytes, 123456789);
  EXPECT_EQ(r.energy_j, 42.5);
  EXPECT_FALSE(read_summary(dir.file("nothing"), r));
}

TEST(FinishedResult, SummaryStatusWinsOverExitCode) {
  test::ScratchDir dir;
  test::write_file(dir.file("run/summary.json"),
                   R"({"schema_version": 1, "status": "diverged", "message": "loss became nan at step 3"})");
  PointResult r = finished_result(dir.file("run"), dir.file("run.log"), exited(1));
  EXPECT_EQ(config::name(r.status), "diverged");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.message, "loss became nan at step 3");
  EXPECT_EQ(r.run_dir, dir.file("run"));
}

TEST(FinishedResult, NoSummaryIsFailedWithExitCodeAndLastErrorLine) {
  test::ScratchDir dir;
  test::write_file(dir.file("p.log"),
                   "[12:00:00] warning something\nllmprof: error: data file '/nope.txt' not "
                   "found (data.path)\n\n");
  PointResult r = finished_result(dir.file("p"), dir.file("p.log"), exited(2));
  EXPECT_EQ(config::name(r.status), "failed");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.signal.has_value());
  EXPECT_EQ(r.message, "exit code 2: data file '/nope.txt' not found (data.path)");
  EXPECT_EQ(r.run_dir, "");
}

TEST(FinishedResult, SignalsAreFailedOrInterruptedByKind) {
  test::ScratchDir dir;
  PointResult k = finished_result(dir.file("p"), dir.file("p.log"), killed(SIGKILL));
  EXPECT_EQ(config::name(k.status), "failed");
  EXPECT_EQ(k.exit_code, 128 + SIGKILL);
  EXPECT_EQ(k.signal, SIGKILL);
  EXPECT_NE(k.message.find("killed by signal 9"), std::string::npos) << k.message;
  EXPECT_EQ(config::name(finished_result(dir.file("p"), dir.file("p.log"), killed(SIGINT)).status),
            "interrupted");
  EXPECT_EQ(config::name(finished_result(dir.file("p"), dir.file("p.log"), exited(130)).status),
            "interrupted");
}

TEST(SweepCsv, OneRowPerFinishedPointWithEmptyUnknowns) {
  test::ScratchDir dir;
  test::write_file(dir.file("run/summary.json"), kSummary);
  Grid grid{{"train.batch_size", {"8", "16"}, ""}};
  std::vector<Point> points = expand_points(grid, 1);
  std::vector<PointResult> results(2);
  ASSERT_TRUE(read_summary(dir.file("run"), results[0]));
  results[0].exit_code = 0;
  results[0].run_dir = "runs/x";  // results[1] is still pending: no row
  auto rows = output::parse_csv(sweep_csv(grid, points, results));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"train.batch_size",
                                               "repeat",
                                               "point_id",
                                               "status",
                                               "exit_code",
                                               "median_step_ms",
                                               "tokens_per_s",
                                               "mfu",
                                               "final_train_loss",
                                               "final_val_loss",
                                               "final_val_perplexity",
                                               "peak_rss_bytes",
                                               "energy_j",
                                               "energy_estimated",
                                               "run_dir",
                                               "host",
                                               "slurm_job_id",
                                               "slurm_task_id",
                                               "start_time",
                                               "end_time",
                                               "ranks",
                                               "exposed_comm_ms",
                                               "overlap",
                                               "busbw_gb_per_s"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"8",
                                               "1",
                                               "p001-train.batch_size=8-r1",
                                               "completed",
                                               "0",
                                               "12.5",
                                               "10240",
                                               "",
                                               "2.5",
                                               "2.75",
                                               "15.642631884188171",
                                               "123456789",
                                               "42.5",
                                               "0",
                                               "runs/x",
                                               "",
                                               "",
                                               "",
                                               "",
                                               "",
                                               "1",
                                               "",
                                               "",
                                               ""}));  // one rank: no comm
}

}  // namespace
}  // namespace llmprof::sweep
