// summary.json's typed document: what the writer writes the reader reads back; the last
// release's files read and rewrite byte for byte with no unknown key; unknown keys survive a
// rewrite; a newer schema is refused; a missing first-version field and a field of the wrong
// type are errors naming the file and the field; a later field missing is null with a note.
#include "llmprof/rundir/summary.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

using doc_test::release_dir;
using doc_test::expect_data_error;


Stats stats(double median, int64_t n) {
  Stats s;
  s.n = n;
  s.mean = median + 0.25;
  s.median = median;
  s.p10 = median - 1;
  s.p90 = median + 1;
  s.min = median - 2;
  s.max = median + 2;
  if (n >= 2) {
    s.stddev = 0.5;
    s.cv = 0.5 / s.mean;
  }
  return s;
}

// A summary with every section filled, the optional parts both ways where a section has them.
Summary full_summary() {
  Summary s;
  s.status = config::RunStatus::kDiverged;
  s.message = "loss became nan at step 3";
  s.profile_level = config::ProfileLevel::kOps;
  s.steps = StepCounts{6, 10, 2, 4};
  s.wall_s = 1.5;
  s.parameters = 28544;
  TimingFigures& t = s.timing.emplace();
  t.step_ms = stats(5.5, 4);
  t.forward_ms = stats(2.0, 4);
  t.phase_sum_median_ms = 4.0;
  t.unattributed_median_ms = 1.5;
  s.throughput = ThroughputFigures{stats(1000, 4), std::nullopt};
  FlopsFigures& f = s.flops.emplace();
  f.analytic_per_step = 2.5e7;
  f.formula = "6 N T";
  f.counted = CountedFlops{2.5e7, 1.5e6, 1.0, "an undercount: 1 of 2"};
  s.mfu = MfuFigures{stats(0.05, 1), 1e11, "configured", "profile.peak_flops_per_s", ""};
  LossFigures& l = s.loss.emplace();
  l.task = "lm";
  l.perplexity_note = "exp of the mean next-token cross-entropy";
  l.final_train_step_loss = 3.5;
  l.eval = EvalLoss{6, 3.25, 3.5, 25.8, 33.1, std::nullopt, std::nullopt, "for classify"};
  s.peak_rss_bytes = 218849280;
  s.process = ProcessFigures{stats(0, 4), stats(1, 4), stats(3.7, 4)};
  OverheadFigures& o = s.overhead.emplace();
  o.level = config::ProfileLevel::kOps;
  o.clock_read_ns = 17.5;
  o.events_per_step = 10;
  o.estimated_ms_per_step = 1.75e-4;
  o.deep = DeepOverhead{};
  o.deep->events_per_step = 1595;
  o.deep->estimated_fraction_of_recorded_step = 0.08;
  o.trace = TraceCost{1, 100, 25000, 250, 3.5};
  ModulesFigures& m = s.modules.emplace();
  m.recorded_steps = 2;
  m.windows = 1;
  m.forward_residual_fraction = 0.01;
  m.shapes = ShapeFigures{2, 0, 0, 0, false, 8};
  m.views = ViewFigures{0, 0, 0, 0, 1, "how", "an undercount"};
  GpuFigures& g = s.gpu.emplace();
  g.records = 12;
  g.kernels_window = "every recorded window (2 steps; kernels.csv)";
  g.idle.steps = 2;
  g.idle.window_ms = 4;
  g.idle.busy_fraction = 0.5;
  telemetry::EnergyFigures& e = s.energy.emplace();
  e.total_j = 40;
  e.kwh = 40 / 3.6e6;
  e.co2_g = 0.005;
  e.source = "rapl";
  e.sampler = telemetry::SamplerCost{0.4, 0.001, {{"nvml", "no driver"}}};
  e.domains.push_back({"rapl", "package-0", "CPU package", "counter", false, true, 40.0, true,
                       26.0, 30.0, std::nullopt, 55.0, std::nullopt, std::nullopt});
  e.phases.emplace();
  (*e.phases)["forward"] = {12.0, 0.5, 24.0, false, 4};
  s.config_notes = {"train.batch_size lowered to 2"};
  rundir::MemoryReconciliation& p = s.context.plan.emplace();
  p.components.push_back({"peak", 90, 100, 0.9, false});
  p.peak_phase = {"forward", "h.0", "backward"};
  return s;
}

TEST(SummaryDoc, WriteThenReadGivesTheSameFigures) {
  const Summary written = full_summary();
  const std::string text = summary_text(written);
  const Summary read = parse_summary(text, "summary.json");
  EXPECT_EQ(read.schema_version, kSummarySchemaVersion);
  EXPECT_EQ(read.status, config::RunStatus::kDiverged);
  EXPECT_EQ(read.message, written.message);
  EXPECT_EQ(read.profile_level, config::ProfileLevel::kOps);
  ASSERT_TRUE(read.steps.has_value());
  EXPECT_EQ(read.steps->warmup_excluded, 2);
  EXPECT_EQ(read.median_step_ms(), 5.5);
  EXPECT_EQ(read.timing->step_ms->stddev, 0.5);
  EXPECT_FALSE(read.timing->data_ms.has_value());  // never timed: null
  EXPECT_EQ(read.timing->unattributed_median_ms, 1.5);
  EXPECT_FALSE(read.throughput->samples_per_s.has_value());
  EXPECT_EQ(read.flops->counted->other_per_step, 1.5e6);
  EXPECT_EQ(read.flops->counted->note, "an undercount: 1 of 2");
  EXPECT_FALSE(read.mfu->value->stddev.has_value());  // n = 1
  EXPECT_EQ(read.loss->eval->val_perplexity, 33.1);
  EXPECT_FALSE(read.loss->eval->val_accuracy.has_value());
  EXPECT_EQ(read.peak_rss_bytes, 218849280);
  EXPECT_EQ(read.overhead->deep->events_per_step, 1595);
  EXPECT_EQ(read.overhead->trace->bytes, 25000);
  EXPECT_EQ(read.modules->views->lost_steps, 1);
  EXPECT_EQ(read.gpu->idle.busy_fraction, 0.5);
  ASSERT_TRUE(read.energy.has_value());
  EXPECT_EQ(read.energy->total_j, 40);
  ASSERT_EQ(read.energy->domains.size(), 1u);
  EXPECT_EQ(read.energy->domains[0].peak_temperature_c, 55.0);
  EXPECT_FALSE(read.energy->domains[0].mean_utilisation.has_value());
  EXPECT_EQ(read.energy->phases->at("forward").intervals, 4);
  EXPECT_EQ(read.energy->sampler->unavailable[0].reason, "no driver");
  EXPECT_EQ(read.config_notes, written.config_notes);
  ASSERT_EQ(read.context.plan->components.size(), 1u);
  EXPECT_EQ(read.context.plan->components[0].name, "peak");
  EXPECT_EQ(read.context.plan->components[0].ratio, 0.9);
  EXPECT_EQ(read.context.plan->peak_phase.predicted_module, "h.0");
  EXPECT_TRUE(read.unknown.empty());
  EXPECT_TRUE(read.read_notes.empty());
  EXPECT_EQ(summary_text(read), text);  // and back, byte for byte
}

TEST(SummaryDoc, ReleaseFilesRewriteByteIdenticalWithNoUnknownKey) {
  int files = 0;
  for (const std::string& path : doc_test::files_named(release_dir(), kSummary)) {
    const std::string text = test::read_file(path);
    const Summary s = parse_summary(text, path);
    EXPECT_EQ(summary_text(s), text) << path;
    EXPECT_TRUE(s.unknown.empty()) << path << ": " << s.unknown.begin()->first;
    EXPECT_TRUE(s.read_notes.empty()) << path << ": " << s.read_notes.front();
    ++files;
  }
  EXPECT_EQ(files, 6);  // run-ops, run-mlm and the sweep's four points
}

TEST(SummaryDoc, UnknownKeysAreKeptWhenTheFileIsRewritten) {
  Summary s = full_summary();
  std::string text = summary_text(s);
  // A later version's keys: one at the top, one inside a section, one inside a statistic.
  text.replace(text.find("\n  \"config_notes\""), 0, "\n  \"comm_ms\": {\"p50\": 1.5},");
  text.replace(text.find("\"phase_sum_median_ms\""), 0, "\"overlap_ms\": 0.25,\n    ");
  text.replace(text.find("\"cv\""), 0, "\"p99\": 7,\n      ");
  const Summary read = parse_summary(text, "new/summary.json");
  EXPECT_EQ(read.unknown.size(), 3u);
  EXPECT_EQ(read.unknown.at("/comm_ms"), R"({"p50":1.5})");
  EXPECT_EQ(read.unknown.at("/timing/overlap_ms"), "0.25");
  const std::string rewritten = summary_text(read);
  EXPECT_NE(rewritten.find("\"comm_ms\": {\n    \"p50\": 1.5\n  }"), std::string::npos);
  EXPECT_NE(rewritten.find("\"overlap_ms\": 0.25"), std::string::npos);
  EXPECT_EQ(summary_text(parse_summary(rewritten, "x")), rewritten);
}

TEST(SummaryDoc, ANewerSchemaVersionIsRefusedNamingTheFile) {
  expect_data_error(
      [] { parse_summary(R"({"schema_version": 2, "status": "completed"})", "b/summary.json"); },
      "b/summary.json: schema_version 2 is newer than this llmprof reads (1)");
}

TEST(SummaryDoc, AMissingFirstVersionFieldIsAnErrorNamingTheFileAndTheField) {
  expect_data_error([] { parse_summary(R"({"status": "completed"})", "a/summary.json"); },
                          "a/summary.json: schema_version is missing");
}

TEST(SummaryDoc, AFieldOfTheWrongTypeIsAnErrorNamingTheField) {
  expect_data_error(
      [] {
        parse_summary(R"({"schema_version": 1, "timing": {"step_ms": {"median": "fast"}}})",
                      "c/summary.json");
      },
      "c/summary.json: timing.step_ms.median is \"fast\", not a number");
  expect_data_error(
      [] { parse_summary(R"({"schema_version": 1, "steps": {"completed": 1.5}})", "d.json"); },
      "d.json: steps.completed is 1.5, not an integer");
}

TEST(SummaryDoc, ALaterFieldMissingIsNullWithANote) {
  const Summary s = parse_summary(R"({"schema_version": 1, "status": "completed"})", "e.json");
  EXPECT_FALSE(s.profile_level.has_value());
  ASSERT_EQ(s.read_notes.size(), 1u);
  EXPECT_EQ(s.read_notes[0], "e.json: no profile_level (written before the field was added): null");
}

}  // namespace
}  // namespace llmprof::rundir

namespace llmprof::rundir {
namespace {

// docs/summary.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(SummaryDoc, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = summary_fields_doc();
  doc_test::expect_committed_doc("summary.md", generated);
  for (const char* field : {"`timing.step_ms`", "`energy.domains[].peak_power_w`",
                            "`profiler_overhead.deep.ns_per_event`", "`loss.eval_step`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir

namespace llmprof::rundir {
namespace {

// "distributed": a rank's form, and the merged form with its communication analysis.
TEST(SummaryDoc, DistributedSectionsRoundTripInBothFormsWithTheCommFigures) {
  Summary rank;
  rank.distributed = DistributedFigures{};
  rank.distributed->rank = 1;
  rank.distributed->world_size = 2;
  rank.distributed->top_dir = "/runs/x";
  rank.distributed->parameter_digest = "a1b2";
  const std::string rank_text = summary_text(rank);
  const Summary r = parse_summary(rank_text, "rank1/summary.json");
  ASSERT_TRUE(r.distributed.has_value());
  EXPECT_EQ(r.distributed->rank, 1);
  EXPECT_EQ(r.distributed->parameter_digest, "a1b2");
  EXPECT_EQ(rank_text.find("bucket_count"), std::string::npos);
  EXPECT_EQ(summary_text(r), rank_text);

  Summary top;
  DistributedFigures& d = top.distributed.emplace();
  d.world_size = 2;
  d.backend = "gloo";
  d.overlap = true;
  d.bucket_mb = 25;
  d.bucket_bytes = {1000, 24};
  d.rank0_comm_ms_per_step_median = 0.5;
  d.rank_dirs = {"rank0", "rank1"};
  d.comm = CommFigures{};
  d.comm->overlap = 0.75;
  d.comm->straggler = CommStraggler{1, 3, 4, 0.5, profile::Phase::kBackward, 0.25};
  const std::string top_text = summary_text(top);
  EXPECT_NE(top_text.find("\"bucket_count\": 2"), std::string::npos);
  const Summary t = parse_summary(top_text, "summary.json");
  EXPECT_FALSE(t.distributed->rank.has_value());
  EXPECT_EQ(t.distributed->bucket_bytes, (std::vector<int64_t>{1000, 24}));
  EXPECT_FALSE(t.distributed->rank0_comm_ms_first_step.has_value());
  ASSERT_TRUE(t.distributed->comm.has_value());
  EXPECT_EQ(t.distributed->comm->overlap, 0.75);
  EXPECT_EQ(t.distributed->comm->straggler->phase, profile::Phase::kBackward);
  EXPECT_NE(top_text.find("\"phase\": \"backward\""), std::string::npos);
  EXPECT_TRUE(t.unknown.empty());
  EXPECT_EQ(summary_text(t), top_text);
}

}  // namespace
}  // namespace llmprof::rundir
