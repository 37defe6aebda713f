// The Communication section and its findings on a hand-built two-rank run: rank 1's forward
// 20 ms longer, 12 of 60 ms of each step exposed communication.
#include <gtest/gtest.h>

#include "llmprof/report/findings.h"
#include "tables.h"

namespace llmprof::report {
namespace {

// Steps 1..4 (1 = first layout, left out), ranks 0 and 1: step 60 ms = compute 40 + exposed 12
// + other 8; rank 1 forward 30 (rank 0: 10) and launching 20 ms after rank 0, last on 3 of 3
// buckets.
rundir::Run comm_run(bool overlap) {
  rundir::Run run;
  run.label = "ddp";
  run.config = {{"ddp.overlap", overlap ? "true" : "false"},
                {"ddp.bucket_mb", "25"},
                {"train.grad_accum_steps", "1"}};
  for (int64_t step = 1; step <= 4; ++step) {
    for (int64_t rank = 0; rank < 2; ++rank) {
      rundir::CommStepRow r;
      r.step = step;
      r.rank = rank;
      r.first_layout = step == 1;
      r.step_ms = 60;
      r.compute_ms = 40;
      r.exposed_comm_ms = step == 1 ? 50 : 12;
      r.other_ms = 8;
      r.comm_ms = 20;
      r.hidden_comm_ms = 8;
      r.overlap = 0.4;
      r.data_ms = 1;
      r.forward_ms = rank == 1 ? 30 : 10;
      r.backward_compute_ms = 25;
      r.optimizer_ms = 5;
      r.launch_lag_ms = rank == 1 ? 20.0 : 0.0;
      r.last_launches = rank == 1 ? 3 : 0;
      r.buckets = 3;
      run.comm_steps.push_back(r);
    }
  }
  return run;
}

TEST(CommFindings, ExposedCommunicationAboveTenPercentSuggestsSmallerBucketsOrAccumulation) {
  const rundir::Run run = comm_run(true);
  const auto f = rule_exposed_comm(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 12.0 / 60.0, 1e-12);  // step 1 (50 ms exposed) left out
  EXPECT_NE(f->suggestion.find("`--set ddp.bucket_mb=12.5`"), std::string::npos) << f->suggestion;
  EXPECT_NE(f->suggestion.find("`--set train.grad_accum_steps=2`"), std::string::npos)
      << f->suggestion;
}

TEST(CommFindings, OverlapOffSuggestsTurningItOn) {
  const rundir::Run run = comm_run(false);
  const auto f = rule_exposed_comm(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->suggestion.find("`--set ddp.overlap=true`"), std::string::npos) << f->suggestion;
}

TEST(CommFindings, NamesTheStragglerAndThePhaseOfItsExtraTime) {
  const rundir::Run run = comm_run(true);
  const auto f = rule_straggler(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 20.0 / 60.0, 1e-12);
  EXPECT_NE(f->title.find("rank 1"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("forward"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("forward takes 20.00 ms more"), std::string::npos) << f->evidence;
}

TEST(CommFindings, SilentWithoutDataParallelRecords) {
  const rundir::Run run;
  EXPECT_FALSE(rule_exposed_comm(run, compute_metrics(run)).has_value());
  EXPECT_FALSE(rule_straggler(run, compute_metrics(run)).has_value());
  EXPECT_FALSE(detail::comm_breakdown_table(run).has_value());
}

TEST(CommTables, BreakdownPerRankFromTheStepsAfterTheFirstLayout) {
  const auto t = detail::comm_breakdown_table(comm_run(true));
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*t->rows[0][3].value, 12);            // exposed comm ms, step 1 left out
  EXPECT_NEAR(*t->rows[0][7].value, 8.0 / 20.0, 1e-12);  // overlap
  const auto s = detail::comm_straggler_table(comm_run(true));
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(*s->rows[1][1].value, 1.0);  // rank 1 launched last on every bucket
  EXPECT_DOUBLE_EQ(*s->rows[1][2].value, 20);
}

}  // namespace
}  // namespace llmprof::report
