// The sweep's side of its documents (rundir/sweep_doc.h): the plan, a point's record and
// sweep.json written by sweep and read back by it, the shared peak reused from sweep.json, and a
// damaged or missing file named in the error.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/sweep_doc.h"
#include "plan.h"
#include "record.h"
#include "results.h"
#include "support/test_support.h"

namespace llmprof::sweep {
namespace {

Plan two_point_plan(const std::string& dir) {
  Plan plan;
  plan.info.sweep_dir = dir;
  plan.info.launcher = config::Launcher::kSlurm;
  plan.info.grid = {{"optim.lr", {"0.001", "0.002"}, "--grid optim.lr=1e-3,2e-3"}};
  plan.info.peak_flops_per_s = 3e10;
  plan.info.peak_source = "measured once by the sweep: llmprof peak --threads 2 --precision fp32";
  plan.info.peak_measured_at = "2026-11-27T10:00:00+0000";
  plan.info.invocation = "2026-11-27T10:00:00+0000 pid 9";
  plan.runs_dir = rundir::path(dir, rundir::kSweepRuns);
  plan.threads_from_env = false;
  plan.points = expand_points(plan.info.grid, 1);
  return plan;
}

TEST(SweepDocuments, ThePlanReadsBackAsWritten) {
  test::ScratchDir dir("sweep-docs");
  const Plan plan = two_point_plan(dir.path());
  write_plan(plan);
  const Plan read = read_plan(dir.path());
  EXPECT_EQ(read.info.launcher, config::Launcher::kSlurm);
  EXPECT_EQ(read.info.peak_flops_per_s, 3e10);
  EXPECT_FALSE(read.threads_from_env);
  ASSERT_EQ(read.points.size(), 2u);
  EXPECT_EQ(read.points[1].id, plan.points[1].id);
  EXPECT_EQ(read.points[1].values, plan.points[1].values);
  EXPECT_EQ(read.runs_dir, plan.runs_dir);
}

TEST(SweepDocuments, AMissingPlanSaysTheDirectoryIsNoSweep) {
  test::ScratchDir dir("sweep-docs");
  try {
    read_plan(dir.path());
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a sweep directory made by llmprof sweep"),
              std::string::npos) << e.what();
  }
}

TEST(SweepDocuments, ARecordReadsBackAndADamagedOneIsNamed) {
  test::ScratchDir dir("sweep-docs");
  const Plan plan = two_point_plan(dir.path());
  const Point& p = plan.points[0];
  EXPECT_FALSE(read_record(plan, p).has_value());  // not started
  std::filesystem::create_directories(plan.runs_dir);
  PointResult r;
  r.status = config::PointStatus::kFailed;
  r.exit_code = 137;
  r.signal = 9;
  r.message = "killed by signal 9 (Killed)";
  r.host = "node7";
  r.slurm_job_id = "77";
  r.invocation = plan.info.invocation;
  r.reused = true;            // not in a record
  r.median_step_ms = 12.5;    // from summary.json, not in a record
  write_record(plan, p, r);
  const std::optional<PointResult> read = read_record(plan, p);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->status, config::PointStatus::kFailed);
  EXPECT_EQ(read->exit_code, std::optional<int>(137));
  EXPECT_EQ(read->host, "node7");
  EXPECT_EQ(read->invocation, plan.info.invocation);
  EXPECT_FALSE(read->reused);
  EXPECT_FALSE(read->median_step_ms.has_value());
  test::write_file(record_path(plan, p), "{\"schema_version\": 1, \"id\": \"p\", \"status\": 3}");
  try {
    read_record(plan, p);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(record_path(plan, p)), std::string::npos) << e.what();
  }
}

TEST(SweepDocuments, SweepJsonHoldsEachOutcomeAndTheSharedPeakIsReusedFromIt) {
  test::ScratchDir dir("sweep-docs");
  const Plan plan = two_point_plan(dir.path());
  EXPECT_FALSE(read_stored_peak(dir.path()).has_value());  // no sweep.json yet
  std::vector<PointResult> results(2);
  results[0].status = config::PointStatus::kCompleted;
  results[0].reused = true;
  results[1].status = config::PointStatus::kInterrupted;
  write_sweep_files(plan.info, plan.points, results);
  const rundir::SweepDoc doc =
      rundir::read_sweep_doc(rundir::path(dir.path(), rundir::kSweepJson));
  ASSERT_EQ(doc.points.size(), 2u);
  EXPECT_TRUE(doc.points[0].reused);
  EXPECT_EQ(doc.points[1].outcome.status, config::PointStatus::kInterrupted);
  EXPECT_EQ(doc.points[1].point.id, plan.points[1].id);
  const std::optional<StoredPeak> peak = read_stored_peak(dir.path());
  ASSERT_TRUE(peak.has_value());
  EXPECT_EQ(peak->flops_per_s, 3e10);
  EXPECT_EQ(peak->source, plan.info.peak_source);
  EXPECT_EQ(peak->measured_at, "2026-11-27T10:00:00+0000");
  // A damaged sweep.json holds no peak to reuse: the sweep measures it again.
  test::write_file(rundir::path(dir.path(), rundir::kSweepJson), "{\"schema_version\": 1,");
  EXPECT_FALSE(read_stored_peak(dir.path()).has_value());
}

}  // namespace
}  // namespace llmprof::sweep
