// The Communication section and its findings on a hand-built two-rank run: rank 1's forward
// 20 ms longer, 12 of 60 ms of each step exposed communication.
#include <gtest/gtest.h>

#include "llmprof/report/findings.h"
#include "llmprof/rundir/comm_ranks.h"
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

// The steady-steps rule (rundir::steady_steps), the one every communication figure uses: the
// steps after the first bucket layout, every step when there are none; another table of the run
// may decide it (collectives.csv by comm_steps.csv).
TEST(SteadySteps, AfterTheFirstLayoutOrEveryStepWhenThereAreNoOthers) {
  const rundir::Run run = comm_run(true);
  const auto steady = rundir::steady_steps(run.comm_steps);
  ASSERT_EQ(steady.size(), 6u) << "steps 2..4 of 2 ranks";
  for (const auto* r : steady) EXPECT_FALSE(r->first_layout);
  std::vector<rundir::CommStepRow> first(run.comm_steps.begin(), run.comm_steps.begin() + 2);
  EXPECT_FALSE(rundir::after_first_layout(first));
  EXPECT_EQ(rundir::steady_steps(first).size(), 2u) << "only the first layout: every step";
  std::vector<rundir::CollectiveRow> coll(2);
  coll[0].first_layout = true;
  coll[1].first_layout = true;
  EXPECT_EQ(rundir::steady_steps(coll).size(), 2u);
  EXPECT_TRUE(rundir::steady_steps(coll, run.comm_steps).empty())
      << "comm_steps.csv has later steps: the first layout's collectives are left out";
}

// Without collectives.csv the bucket layout is unknown: no bucket size is suggested, only more
// accumulation (whose mechanism always applies).
TEST(CommFindings, ExposedCommunicationWithoutABucketLayoutSuggestsAccumulation) {
  const rundir::Run run = comm_run(true);
  const auto f = rule_exposed_comm(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 12.0 / 60.0, 1e-12);  // step 1 (50 ms exposed) left out
  EXPECT_EQ(f->suggestion.find("bucket_mb"), std::string::npos) << f->suggestion;
  EXPECT_NE(f->suggestion.find("`--set train.grad_accum_steps=2`"), std::string::npos)
      << f->suggestion;
  EXPECT_NE(f->evidence.find("No bucket layout in this run's inputs (collectives.csv)"),
            std::string::npos)
      << f->evidence;
}

// comm_run with rank 0's and rank 1's all-reduces of the given buckets (bytes by index) at
// steps 2..4 (the layout after the first), nothing of them hidden when `hidden` is false.
rundir::Run layout_run(bool overlap, const std::vector<int64_t>& buckets, bool hidden) {
  rundir::Run run = comm_run(overlap);
  for (auto& r : run.comm_steps) r.hidden_comm_ms = hidden ? r.hidden_comm_ms : 0;
  for (int64_t step = 2; step <= 4; ++step) {
    for (int64_t rank = 0; rank < 2; ++rank) {
      for (size_t b = 0; b < buckets.size(); ++b) {
        rundir::CollectiveRow c;
        c.step = step;
        c.rank = rank;
        c.bucket = static_cast<int64_t>(b);
        c.bytes = buckets[b];
        c.world_size = 2;
        run.collectives.push_back(c);
      }
    }
  }
  return run;
}

// The tiny_test case: 111.5 KiB of gradients, one bucket under the 1 MiB first bucket:
// no smaller ddp.bucket_mb can change anything; the evidence says why overlap is 0%, and the
// suggestion splits the first bucket (114176 / 2 bytes = 0.0544 MiB).
TEST(CommFindings, OneBucketSaysWhyOverlapIsZeroAndSplitsTheFirstBucket) {
  const rundir::Run run = layout_run(true, {114176}, false);
  const auto f = rule_exposed_comm(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->evidence.find("Overlap 0.0%: the 111.5 KiB of gradients are one bucket (at most "
                             "ddp.first_bucket_mb = 1 MiB), so its all-reduce can only start "
                             "after the whole backward."),
            std::string::npos)
      << f->evidence;
  EXPECT_EQ(f->suggestion.find("ddp.bucket_mb"), std::string::npos) << f->suggestion;
  EXPECT_NE(f->suggestion.find("`--set ddp.first_bucket_mb=0.0544` (the first bucket, the last "
                               "layers' gradients, closes at half of them: two buckets"),
            std::string::npos)
      << f->suggestion;
  EXPECT_NE(f->suggestion.find("`--set train.grad_accum_steps=2`"), std::string::npos);
  // Overlap off: turning it on alone changes nothing with one bucket, so it is no --set.
  const rundir::Run off = layout_run(false, {114176}, false);
  const auto g = rule_exposed_comm(off, compute_metrics(off));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->suggestion.find("`--set ddp.overlap=true`"), std::string::npos) << g->suggestion;
  EXPECT_NE(g->suggestion.find("ddp.overlap=true with a ddp.first_bucket_mb below 0.0544"),
            std::string::npos)
      << g->suggestion;
}

// The quick-start case: 3.2 MB in two buckets (1056768 and 2182144 bytes) under
// ddp.bucket_mb 25: halving it to 12.5 splits nothing; half of the larger bucket after the first
// (2182144 / 2 bytes = 1.04 MiB) does.
TEST(CommFindings, TwoBucketsBelowHalfTheCapSuggestHalfTheLargestNotHalfTheCap) {
  const rundir::Run run = layout_run(true, {1056768, 2182144}, true);
  const auto f = rule_exposed_comm(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->suggestion.find("ddp.bucket_mb=12.5"), std::string::npos) << f->suggestion;
  EXPECT_NE(f->suggestion.find("`--set ddp.bucket_mb=1.04` (the buckets after the first close "
                               "at 1.04 MiB: the largest, 2.08 MiB, splits"),
            std::string::npos)
      << f->suggestion;
  EXPECT_NE(f->suggestion.find("2 buckets now; halving ddp.bucket_mb = 25 MiB would change "
                               "nothing, no bucket after the first is above 12.5 MiB"),
            std::string::npos)
      << f->suggestion;
}

// A bucket after the first above half the cap (4000000 bytes = 3.81 MiB > 4 / 2): halving it
// applies.
TEST(CommFindings, ABucketAboveHalfTheCapSuggestsHalvingIt) {
  rundir::Run run = layout_run(true, {1000, 4000000}, true);
  run.config["ddp.bucket_mb"] = "4";
  const auto f = rule_exposed_comm(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->suggestion.find("`--set ddp.bucket_mb=2` (the buckets after the first close at 2 "
                               "MiB: the largest, 3.81 MiB, splits"),
            std::string::npos)
      << f->suggestion;
  EXPECT_EQ(f->suggestion.find("would change nothing"), std::string::npos) << f->suggestion;
}

TEST(CommFindings, OverlapOffSuggestsTurningItOn) {
  const rundir::Run run = comm_run(false);
  const auto f = rule_exposed_comm(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->suggestion.find("`--set ddp.overlap=true`"), std::string::npos) << f->suggestion;
  const rundir::Run two = layout_run(false, {1056768, 2182144}, true);
  const auto g = rule_exposed_comm(two, compute_metrics(two));
  ASSERT_TRUE(g.has_value());
  EXPECT_NE(g->suggestion.find("`--set ddp.overlap=true` (each of the 2 buckets all-reduced as "
                               "backward fills it)"),
            std::string::npos)
      << g->suggestion;
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
  // The straggler first, marked: rank 1 launched last on every bucket, 20 ms behind.
  EXPECT_DOUBLE_EQ(*s->rows[0][0].value, 1);
  EXPECT_EQ(s->rows[0][1].text, "yes");
  EXPECT_DOUBLE_EQ(*s->rows[0][2].value, 1.0);
  EXPECT_DOUBLE_EQ(*s->rows[0][3].value, 20);
  EXPECT_EQ(s->rows[1][1].text, "");
}

// The straggler is defined once (rundir::straggler_rank: the largest median launch lag): where the
// rank that launched last most often is another (rank 1 here: last on 2 of 3 buckets by a hair,
// rank 0 last once by 9 ms), the table and the finding still name the same rank as summary.json.
TEST(CommStraggler, TableAndFindingNameTheRankOfTheLargestMedianLaunchLag) {
  rundir::Run run = comm_run(true);
  for (rundir::CommStepRow& r : run.comm_steps) {
    r.launch_lag_ms = r.rank == 0 ? 9.0 : 0.5;
    r.last_launches = r.rank == 0 ? 1 : 2;
  }
  const std::optional<int64_t> straggler =
      rundir::straggler_rank(rundir::comm_rank_figures(run.comm_steps));
  ASSERT_EQ(straggler, 0);
  const auto t = detail::comm_straggler_table(run);
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(*t->rows[0][0].value, 0);
  EXPECT_EQ(t->rows[0][1].text, "yes");
  EXPECT_DOUBLE_EQ(*t->rows[0][3].value, 9);
  const auto f = rule_straggler(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->title.find("rank 0 is the straggler"), std::string::npos) << f->title;
}

// A data-parallel run's ranks table: each rank's own figures in the order summary.json lists
// them (the straggler first).
TEST(RankFiguresTable, ListsEachRanksOwnFiguresStragglerFirst) {
  rundir::Run run;
  run.label = "ddp";
  run.world_size = 2;
  rundir::RankFigures r1, r0;
  r1.rank = 1;
  r1.step_ms = 120;
  r1.tokens_per_s = 6400;
  r0.rank = 0;
  r0.step_ms = 100;
  r0.tokens_per_s = 7680;
  run.rank_figures = {r1, r0};
  const auto t = detail::rank_figures_table(run);
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*t->rows[0][0].value, 1);
  EXPECT_DOUBLE_EQ(*t->rows[0][1].value, 120);
  EXPECT_DOUBLE_EQ(*t->rows[1][6].value, 7680);
  EXPECT_FALSE(detail::rank_figures_table(rundir::Run{}).has_value());
}

// Two buckets on rank 0 (and rank 1's copies), steps 2..4: bucket 1 (4 MB) at 0.2 GB/s busbw, the
// small bucket 0 at 0.05; step 1 (first layout) at 0.01.
rundir::Run bandwidth_run(std::optional<double> roof_bytes_per_s) {
  rundir::Run run = comm_run(true);
  run.peak_busbw_bytes_per_s = roof_bytes_per_s;
  for (int64_t step = 1; step <= 4; ++step) {
    for (int64_t rank = 0; rank < 2; ++rank) {
      for (int64_t bucket = 0; bucket < 2; ++bucket) {
        rundir::CollectiveRow c;
        c.step = step;
        c.rank = rank;
        c.bucket = bucket;
        c.first_layout = step == 1;
        c.bytes = bucket == 1 ? 4000000 : 1000;
        c.latency_ms = 1;
        c.busbw_gb_per_s = step == 1 ? 0.01 : (bucket == 1 ? 0.2 : 0.05);
        c.world_size = 2;
        run.collectives.push_back(c);
      }
    }
  }
  return run;
}

TEST(CommFindings, BusBandwidthFarBelowTheRoofSuggestsLargerBuckets) {
  const rundir::Run run = bandwidth_run(1e9);  // roof 1 GB/s: the 4 MB bucket at 20%
  const auto f = rule_comm_bandwidth(run, compute_metrics(run));
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 0.2, 1e-12);
  EXPECT_NE(f->suggestion.find("`--set ddp.bucket_mb=50"), std::string::npos) << f->suggestion;
  EXPECT_FALSE(rule_comm_bandwidth(bandwidth_run(0.5e9), compute_metrics(run)).has_value());
  EXPECT_FALSE(rule_comm_bandwidth(bandwidth_run(std::nullopt), compute_metrics(run)).has_value());
}

TEST(CommTables, BucketTableJudgesBusBandwidthAgainstTheRoof) {
  const auto with = detail::comm_bucket_table(bandwidth_run(0.8e9));
  ASSERT_TRUE(with.has_value());
  ASSERT_EQ(with->columns.size(), 6u);
  ASSERT_EQ(with->rows.size(), 2u);
  EXPECT_NEAR(*with->rows[1][5].value, 0.25, 1e-12);  // 0.2 of 0.8 GB/s
  EXPECT_NE(with->notes[1].find("0.8"), std::string::npos) << with->notes[1];
  const auto without = detail::comm_bucket_table(bandwidth_run(std::nullopt));
  ASSERT_TRUE(without.has_value());
  EXPECT_EQ(without->columns.size(), 5u);
  EXPECT_NE(without->notes[1].find("peak --comm"), std::string::npos);
}

}  // namespace
}  // namespace llmprof::report
