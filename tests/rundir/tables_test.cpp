// One writer and one reader per table: every table written by rundir reads back through
// load_run into the same values, nulls staying null; power.csv and kernels.csv print the
// documented columns.
#include <gtest/gtest.h>

#include <cmath>

#include "llmprof/gpu/kernel_table.h"
#include "llmprof/output/csv.h"
#include "llmprof/profile/analysis.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/tables.h"
#include "llmprof/telemetry/energy_monitor.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

using test::ScratchDir;

TEST(RundirTables, StepsRoundTripEveryColumnAndKeepNullsNull) {
  ScratchDir dir("rundir_steps");
  StepRow a;
  a.step = 1;
  for (const StepColumn& c : step_columns()) a.*c.field = 1.5;  // every column present
  StepRow b;  // only what a user's loop gives when it says nothing: step and step_ms
  b.step = 2;
  b.step_ms = 12.25;
  b.loss = NAN;  // a diverged step's loss is written, as nan
  {
    StepsWriter w(path(dir.path(), kSteps));
    w.write(a);
    w.write(b);
  }
  const rundir::Run run = load_run(dir.path());
  ASSERT_EQ(run.steps.size(), 2u);
  EXPECT_EQ(run.steps[0].step, 1);
  for (const StepColumn& c : step_columns()) {
    ASSERT_TRUE((run.steps[0].*c.field).has_value()) << c.name;
    EXPECT_EQ(*(run.steps[0].*c.field), 1.5) << c.name;
  }
  EXPECT_EQ(run.steps[1].step, 2);
  EXPECT_EQ(run.steps[1].step_ms, 12.25);
  ASSERT_TRUE(run.steps[1].loss.has_value());
  EXPECT_TRUE(std::isnan(*run.steps[1].loss));
  for (const StepColumn& c : step_columns()) {
    if (c.name == "step_ms" || c.name == "loss") continue;
    EXPECT_FALSE((run.steps[1].*c.field).has_value()) << c.name << " should stay null";
  }
  EXPECT_EQ(present(run.steps, "step_ms"), (std::vector<double>{1.5, 12.25}));
  EXPECT_EQ(present(run.steps, "step_ms", 1), (std::vector<double>{12.25}));
  EXPECT_EQ(present(run.steps, "tokens"), (std::vector<double>{1.5}));
  EXPECT_TRUE(present(run.steps, "no_such_column").empty());
}

TEST(RundirTables, EvalRowsRoundTrip) {
  ScratchDir dir("rundir_eval");
  { StepsWriter w(path(dir.path(), kSteps)); }
  {
    EvalWriter w(path(dir.path(), kEval));
    w.write({5, "train", 2.0, std::exp(2.0), std::nullopt, 40.5});
    w.write({5, "val", 2.5, std::exp(2.5), 0.75, 40.5});
  }
  const rundir::Run run = load_run(dir.path());
  ASSERT_EQ(run.evals.size(), 2u);
  EXPECT_EQ(run.evals[0].step, 5);
  EXPECT_EQ(run.evals[0].split, "train");
  EXPECT_EQ(run.evals[0].loss, 2.0);
  EXPECT_DOUBLE_EQ(*run.evals[0].perplexity, std::exp(2.0));
  EXPECT_FALSE(run.evals[0].accuracy.has_value());
  EXPECT_EQ(run.evals[1].accuracy, 0.75);
  EXPECT_EQ(run.evals[1].eval_ms, 40.5);
}

TEST(RundirTables, DeepProfilingTablesRoundTrip) {
  ScratchDir dir("rundir_deep");
  { StepsWriter w(path(dir.path(), kSteps)); }
  profile::Analysis a;
  a.n_steps = 3;
  profile::ModuleRow m;
  m.scope = "attn.qkv";
  m.block = 1;
  m.pass = "backward";
  m.calls = 2;
  m.total_ms = 4.5;
  m.mean_ms = 2.25;
  m.self_ms = 1;
  m.share_of_pass = 0.25;  // flops and mfu not modelled: null
  a.modules.push_back(m);
  profile::ModuleRow outside = m;
  outside.scope = "embedding";
  outside.block = -1;  // outside the blocks: null block
  outside.pass = "forward";
  a.modules.push_back(outside);
  profile::OpRow op;
  op.op = "aten::mm";
  op.calls = 6;
  op.self_ms = 3;
  op.total_ms = 3.5;
  op.self_share = 0.5;
  op.flops = 1e9;
  op.roofline.achieved_gflops_per_s = 285.7;
  op.roofline.bytes = 4096.4;  // written whole
  op.roofline.arithmetic_intensity = 244.1;
  op.roofline.achieved_gb_per_s = 1.17;
  op.roofline.bound = profile::Bound::kOverhead;
  op.roofline.roofline_ms = 0.2;
  op.roofline.lost_ms = 3.3;
  op.alloc_bytes = 1024.4;  // written whole
  op.input_shapes = "[768, 128], [128, 384]";  // commas: quoted
  a.ops.push_back(op);
  a.activations.push_back({"mlp.up", 0, 2048.6, 4096});
  write_modules(path(dir.path(), kModules), a);
  write_ops(path(dir.path(), kOps), a);
  write_activations(path(dir.path(), kActivations), a);

  const rundir::Run run = load_run(dir.path());
  ASSERT_EQ(run.modules.size(), 2u);
  EXPECT_EQ(run.modules[0].scope, "attn.qkv");
  EXPECT_EQ(run.modules[0].block, 1);
  EXPECT_EQ(run.modules[0].pass, "backward");
  EXPECT_EQ(run.modules[0].total_ms, 4.5);
  EXPECT_EQ(run.modules[0].share_of_pass, 0.25);
  EXPECT_FALSE(run.modules[0].flops.has_value());
  EXPECT_FALSE(run.modules[0].mfu.has_value());
  EXPECT_EQ(run.modules[0].steps, 3);
  EXPECT_FALSE(run.modules[1].block.has_value());
  ASSERT_EQ(run.ops.size(), 1u);
  EXPECT_EQ(run.ops[0].op, "aten::mm");
  EXPECT_EQ(run.ops[0].flops, 1e9);
  EXPECT_EQ(run.ops[0].alloc_bytes, 1024);
  EXPECT_EQ(run.ops[0].roofline.bytes, 4096);
  EXPECT_EQ(run.ops[0].roofline.arithmetic_intensity, 244.1);
  EXPECT_EQ(run.ops[0].roofline.achieved_gflops_per_s, 285.7);
  EXPECT_EQ(run.ops[0].roofline.achieved_gb_per_s, 1.17);
  EXPECT_EQ(run.ops[0].roofline.bound, "overhead");
  EXPECT_EQ(run.ops[0].roofline.roofline_ms, 0.2);
  EXPECT_EQ(run.ops[0].roofline.lost_ms, 3.3);
  EXPECT_EQ(run.modules[0].roofline.bound, "");  // unknown: empty field
  EXPECT_FALSE(run.modules[0].roofline.lost_ms.has_value());
  EXPECT_EQ(run.ops[0].input_shapes, "[768, 128], [128, 384]");
  EXPECT_EQ(run.ops[0].steps, 3);
  ASSERT_EQ(run.activations.size(), 1u);
  EXPECT_EQ(run.activations[0].block, 0);
  EXPECT_EQ(run.activations[0].saved_bytes, 2049);
  EXPECT_EQ(run.activations[0].alloc_bytes, 4096);
}

TEST(RundirTables, PowerCsvHasTheDocumentedColumnsAndEmptyUnknowns) {
  ScratchDir dir("rundir_power");
  std::vector<telemetry::PowerRow> rows = {{0.0, "rapl", "package-0", 41.5, 0, NAN, false},
                                           {0.1, "estimate", "cpu, all", NAN, NAN, 0.5, true}};
  write_power(path(dir.path(), kPower), rows);
  const auto csv = output::parse_csv(test::read_file(path(dir.path(), kPower)));
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[0], (std::vector<std::string>{"t_s", "source", "domain", "watts", "joules_cum",
                                              "utilisation", "estimated"}));
  EXPECT_EQ(csv[1], (std::vector<std::string>{"0.000000", "rapl", "package-0", "41.5", "0", "",
                                              "0"}));
  EXPECT_EQ(csv[2], (std::vector<std::string>{"0.100000", "estimate", "cpu, all", "", "", "0.5",
                                              "1"}));
}

TEST(RundirTables, KernelsCsvHasTheDocumentedColumns) {
  ScratchDir dir("rundir_kernels");
  gpu::GpuTables t;
  t.n_steps = 2;
  gpu::KernelRow k;
  k.kernel = "softmax";
  k.calls = 2;
  k.total_us = 7;
  k.mean_us = 3.5;
  k.min_us = 3;
  k.max_us = 4;
  k.grid = {128, 1, 1};
  k.block = {128, 1, 1};
  k.registers = 64;
  k.shared_mem_bytes = 60000;
  k.est_occupancy = 0.1875;
  k.owning_op = "aten::softmax";
  k.owning_scope = "attn.softmax";
  k.owners = 1;
  t.kernels.push_back(k);
  write_kernels(path(dir.path(), kKernels), t);
  const auto csv = output::parse_csv(test::read_file(path(dir.path(), kKernels)));
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_EQ(csv[0], (std::vector<std::string>{"kernel", "calls", "total_us", "mean_us", "min_us",
                                              "max_us", "grid", "block", "registers",
                                              "shared_mem_bytes", "est_occupancy", "owning_op",
                                              "owning_scope", "owners", "steps"}));
  EXPECT_EQ(csv[1], (std::vector<std::string>{"softmax", "2", "7", "3.5", "3", "4", "128x1x1",
                                              "128x1x1", "64", "60000", "0.1875", "aten::softmax",
                                              "attn.softmax", "1", "2"}));
}

TEST(RundirTables, SummaryReaderTakesWhatReportAndSweepUse) {
  ScratchDir dir("rundir_summary");
  test::write_file(path(dir.path(), kSummary), R"({
    "schema_version": 1, "status": "diverged", "message": "loss became nan at step 3",
    "steps": {"completed": 3, "max_steps": 10, "warmup_excluded": 1},
    "timing": {"step_ms": {"median": 12.5}},
    "throughput": {"tokens_per_s": {"median": 800}},
    "mfu": {"value": null},
    "loss": {"final_train_loss": 2.0, "final_val_loss": null},
    "memory": {"peak_rss_bytes": 1e9},
    "energy": {"total_j": 40, "source": "estimate", "estimated": true}})");
  std::vector<InputWarning> warnings;
  const std::optional<Summary> s = read_summary(path(dir.path(), kSummary), warnings);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(s->status, config::RunStatus::kDiverged);
  EXPECT_EQ(s->message, "loss became nan at step 3");
  ASSERT_TRUE(s->steps.has_value());
  EXPECT_EQ(s->steps->warmup_excluded, 1);
  EXPECT_EQ(s->steps->max_steps, 10);
  EXPECT_EQ(s->median_step_ms(), 12.5);
  EXPECT_EQ(s->median_tokens_per_s(), 800);
  EXPECT_FALSE(s->median_mfu().has_value());
  ASSERT_TRUE(s->loss && s->loss->eval);
  EXPECT_EQ(s->loss->eval->train_loss, 2.0);
  EXPECT_FALSE(s->loss->eval->val_loss.has_value());
  EXPECT_EQ(s->peak_rss_bytes, 1000000000);
  ASSERT_TRUE(s->energy.has_value());
  EXPECT_EQ(s->energy->total_j, 40);
  EXPECT_TRUE(s->energy->estimated);

  test::write_file(path(dir.path(), kSummary), "");  // a full disk's empty file
  EXPECT_FALSE(read_summary(path(dir.path(), kSummary), warnings).has_value());
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_FALSE(read_summary(path(dir.path(), "absent.json"), warnings).has_value());
}

}  // namespace
}  // namespace llmprof::rundir
