// Charts 13 (one step's timeline on every rank, rank 0's clock) and 14 (each bucket's all-reduce
// hidden vs exposed): their data files from a hand-built data-parallel run directory, none for a
// one-process run, and both drawn from a real 2-rank `llmprof train --nproc 2`, in `llmprof plot`
// and inlined in the HTML report.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "llmprof/plot/plot.h"
#include "llmprof/rundir/comm_tables.h"
#include "report/fixture_paths.h"
#include "report/html_checks.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::plot {
namespace {

using profile::Phase;
using rundir::CollectiveRow;
using rundir::CommStepRow;
using rundir::PhaseSpanRow;
using test::ScratchDir;

constexpr int64_t kMs = 1000000;

#define SKIP_WITHOUT_GNUPLOT()                                                       \
  do {                                                                               \
    if (find_program("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed"; \
  } while (0)

std::map<std::string, ChartResult> by_name(const std::vector<ChartResult>& charts) {
  std::map<std::string, ChartResult> out;
  for (const auto& c : charts) out[c.name] = c;
  return out;
}

CommStepRow step_row(int64_t step, int64_t rank, double step_ms, int64_t start_aligned_ns) {
  CommStepRow r;
  r.step = step;
  r.rank = rank;
  r.first_layout = step == 1;
  r.step_ms = step_ms;
  r.start_aligned_ns = start_aligned_ns;
  return r;
}

CollectiveRow coll(int64_t step,
                   int64_t bucket,
                   int64_t rank,
                   double launch_ms,
                   double end_ms,
                   double hidden_ms,
                   double exposed_ms) {
  CollectiveRow c;
  c.step = step;
  c.bucket = bucket;
  c.rank = rank;
  c.first_layout = step == 1;
  c.bytes = bucket == 0 ? 1048576 : 524288;
  c.world_size = 2;
  c.launch_aligned_ns = 1000 * kMs + std::llround(launch_ms * kMs);
  c.end_aligned_ns = 1000 * kMs + std::llround(end_ms * kMs);
  c.duration_ms = end_ms - launch_ms;
  c.hidden_ms = hidden_ms;
  c.exposed_ms = exposed_ms;
  return c;
}

// Rank r's spans of a step on its own clock: base + the given ms offsets.
void write_spans(const std::string& path,
                 int64_t rank,
                 int64_t base_ns,
                 const std::vector<std::pair<int64_t, std::vector<double>>>& steps) {
  rundir::PhaseSpanWriter w(path);
  for (const auto& [step, edges] : steps) {  // edges: data, forward, backward, optimizer bounds
    for (int p = 0; p < 4; ++p) {
      w.write({rank, step, static_cast<Phase>(p),
               base_ns + std::llround(edges[static_cast<size_t>(p)] * kMs),
               base_ns + std::llround(edges[static_cast<size_t>(p) + 1] * kMs)});
    }
  }
}

// Steps 1 (the first bucket layout), 2 and 3 on two ranks. Rank 0's clock is the aligned one;
// rank 1's runs 2 s ahead (its spans at 3 s + ...) and its step 2 starts 0.5 ms after rank 0's.
// Rank 0's step times after the first layout: 10 (step 2) and 12 (step 3): step 2 is drawn.
std::string hand_built_run(const ScratchDir& dir) {
  const std::string run = dir.file("ddp_run");
  fs::copy(test::report_fixture("run_a"), run, fs::copy_options::recursive);
  const int64_t t0 = 1000 * kMs;
  rundir::write_comm_steps(run + "/comm_steps.csv",
                           {step_row(1, 0, 5, t0 - 50 * kMs), step_row(1, 1, 5, t0 - 50 * kMs),
                            step_row(2, 0, 10, t0), step_row(2, 1, 10.5, t0 + kMs / 2),
                            step_row(3, 0, 12, t0 + 20 * kMs), step_row(3, 1, 12, t0 + 20 * kMs)});
  fs::create_directories(run + "/rank0");
  fs::create_directories(run + "/rank1");
  write_spans(
      run + "/rank0/phases.csv", 0, t0 - 100 * kMs,
      {{1, {50, 51, 52, 53, 55}}, {2, {100, 101, 104, 108, 110}}, {3, {120, 121, 125, 130, 132}}});
  // Rank 0's buckets of step 2 handed over at 6 and 7 ms into its step: its backward [4, 8)
  // splits into autograd [4, 7) and the wait [7, 8). Rank 1 has no comm.csv: its backward whole.
  test::write_file(run + "/rank0/comm.csv",
                   "rank,step,sync_step,bucket,bucket_count,first_layout,bytes,elements,dtype,"
                   "ready_ns,launch_ns,end_ns,comm_ms,backward_ms_at_launch\n"
                   "0,2,2,0,2,0,1048576,262144,f32,1006000000,1006000000,1008500000,2.5,2\n"
                   "0,2,2,1,2,0,524288,131072,f32,1007000000,1008000000,1010000000,2,3\n"
                   "0,3,3,0,2,0,1048576,262144,f32,1027500000,1027500000,1028000000,0.5,2\n");
  write_spans(run + "/rank1/phases.csv", 1, 3000 * kMs,
              {{2, {0, 1, 5, 9, 10.5}}, {3, {19.5, 20.5, 24.5, 29.5, 31.5}}});
  // hidden/exposed: step 1 (first layout, left out of chart 14) 100/100; bucket 0 later:
  // hidden 1.5, 2, 1, 0.5 -> mean 1.25; exposed 1, 0.5, 1, 1.5 -> mean 1. Bucket 1: hidden 0,
  // exposed 2, 3, 1, 2 -> mean 2.
  rundir::write_collectives(
      run + "/collectives.csv",
      {coll(1, 0, 0, -48, -46, 100, 100), coll(1, 0, 1, -48, -46, 100, 100),
       coll(2, 0, 0, 6, 8.5, 1.5, 1), coll(2, 0, 1, 6.5, 9, 2, 0.5), coll(2, 1, 0, 8, 10, 0, 2),
       coll(2, 1, 1, 8.5, 11.5, 0, 3), coll(3, 0, 0, 26, 28, 1, 1), coll(3, 0, 1, 26, 28, 0.5, 1.5),
       coll(3, 1, 0, 29, 30, 0, 1), coll(3, 1, 1, 29, 31, 0, 2)});
  return run;
}

// The rows of a .dat file's index blocks (two blank lines apart), comments left out.
std::vector<std::vector<std::string>> blocks(const std::string& text) {
  std::vector<std::vector<std::string>> out(1);
  std::istringstream in(text);
  std::string line;
  int blank = 0;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (++blank == 2) out.emplace_back();
      continue;
    }
    blank = 0;
    if (line[0] != '#') out.back().push_back(line);
  }
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

TEST(CommCharts, TimelineLanesAndBucketOverlapFromAHandBuiltRun) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir("comm_charts");
  PlotOptions opts;
  opts.inputs = {hand_built_run(dir)};
  opts.out_dir = dir.file("plots");
  opts.format = ImageFormat::kSvg;
  auto charts = by_name(make_plots(opts).charts);
  ASSERT_EQ(charts.count("13_comm_timeline"), 1u);
  ASSERT_TRUE(charts.at("13_comm_timeline").skipped.empty())
      << charts.at("13_comm_timeline").skipped;
  ASSERT_TRUE(charts.at("14_comm_overlap").skipped.empty()) << charts.at("14_comm_overlap").skipped;
  // Lanes: rank 0 compute 3.25, all-reduce 2.5; rank 1 compute 1.25, all-reduce 0.5. Times from
  // the step's earliest start (rank 0's, t0): rank 1's spans moved by its 0.5 ms later start.
  const auto b = blocks(test::read_file(dir.file("plots/13_comm_timeline.dat")));
  ASSERT_EQ(b.size(), 6u);  // data, forward, backward, optimizer, backward's wait, all-reduce
  EXPECT_EQ(b[0], (std::vector<std::string>{"0 3.25 0 1", "1 1.25 0.5 1.5"}));
  EXPECT_EQ(b[1], (std::vector<std::string>{"0 3.25 1 4", "1 1.25 1.5 5.5"}));
  EXPECT_EQ(b[2], (std::vector<std::string>{"0 3.25 4 7", "1 1.25 5.5 9.5"}));
  EXPECT_EQ(b[3], (std::vector<std::string>{"0 3.25 8 10", "1 1.25 9.5 11"}));
  EXPECT_EQ(b[4], (std::vector<std::string>{"0 3.25 7 8"}));
  EXPECT_EQ(b[5], (std::vector<std::string>{"0 2.5 6 8.5", "1 0.5 6.5 9", "0 2.5 8 10",
                                            "1 0.5 8.5 11.5"}));
  // Chart 14's bars: label, hidden, exposed, total, top label (the total).
  const auto o = blocks(test::read_file(dir.file("plots/14_comm_overlap.dat")));
  ASSERT_EQ(o.size(), 1u);
  ASSERT_EQ(o[0].size(), 2u);
  EXPECT_EQ(o[0][0].rfind("\"0 (1 MiB)\" 1.25 1 2.25", 0), 0u) << o[0][0];
  EXPECT_EQ(o[0][1].rfind("\"1 (512 KiB)\" 0 2 2", 0), 0u) << o[0][1];
  EXPECT_TRUE(fs::exists(dir.file("plots/13_comm_timeline.svg")));
  EXPECT_TRUE(fs::exists(dir.file("plots/14_comm_overlap.svg")));
}

TEST(CommCharts, TimelineIsSkippedNamingAMissingRankPhaseFile) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir("comm_charts_missing");
  const std::string run = hand_built_run(dir);
  fs::remove(run + "/rank1/phases.csv");
  PlotOptions opts;
  opts.inputs = {run};
  opts.out_dir = dir.file("plots");
  auto charts = by_name(make_plots(opts).charts);
  EXPECT_NE(charts.at("13_comm_timeline").skipped.find("rank1/phases.csv"), std::string::npos)
      << charts.at("13_comm_timeline").skipped;
  EXPECT_TRUE(charts.at("14_comm_overlap").skipped.empty());
}

TEST(CommCharts, NoneForAOneProcessRun) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir("comm_charts_none");
  PlotOptions opts;
  opts.inputs = {test::report_fixture("run_a")};
  opts.out_dir = dir.file("plots");
  auto charts = by_name(make_plots(opts).charts);
  EXPECT_EQ(charts.count("13_comm_timeline"), 0u);
  EXPECT_EQ(charts.count("14_comm_overlap"), 0u);
}

// A real run: 2 local ranks of one thread, small buckets so the gradient makes several.
TEST(CommCharts, TwoRankTrainRunGetsBothChartsInPlotAndTheHtmlReport) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir("comm_charts_real");
  auto t = test::run_llmprof({"train",
                              "--nproc",
                              "2",
                              "--config",
                              std::string(LLMPROF_SOURCE_DIR) + "/configs/tiny_test.yaml",
                              "--quiet",
                              "--set",
                              "output.dir=" + dir.path(),
                              "--set",
                              "output.name=ddp",
                              "--set",
                              "schedule.max_steps=6",
                              "--set",
                              "threads=1",
                              "--set",
                              "data.num_workers=0",
                              "--set",
                              "ddp.timeout_s=30",
                              "--set",
                              "energy.enabled=false",
                              "--set",
                              "train.eval_interval=0",
                              "--set",
                              "ddp.bucket_mb=0.02",
                              "--set",
                              "ddp.first_bucket_mb=0.02"});
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const std::string run = dir.file("ddp");
  auto p = test::run_llmprof({"plot", run, "--out", dir.file("plots"), "--format", "svg"});
  ASSERT_EQ(p.exit_code, 0) << p.output;
  for (const char* name : {"13_comm_timeline", "14_comm_overlap"}) {
    EXPECT_TRUE(fs::exists(dir.file(std::string("plots/") + name + ".svg"))) << name << p.output;
  }
  const auto b = blocks(test::read_file(dir.file("plots/13_comm_timeline.dat")));
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(b[1].size(), 2u);  // one forward per rank
  EXPECT_GE(b[5].size(), 4u);  // 2 or more buckets on each rank
  auto r = test::run_llmprof({"report", run, "--format", "html", "--out", dir.file("r.html")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = test::read_file(dir.file("r.html"));
  test::expect_in_page(page, "id=\"chart-13_comm_timeline\"");
  test::expect_in_page(page, "id=\"chart-14_comm_overlap\"");
}

}  // namespace
}  // namespace llmprof::plot
