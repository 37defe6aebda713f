// profile.level=modules|ops end to end on the tiny model: scopes, attribution, tables, trace,
// reconciliation, full buffers, and that profiling never changes the loss trajectory.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "llmprof/config/schema.h"
#include "llmprof/output/csv.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace llmprof::train {
namespace {

config::Config tiny(const std::string& out, const std::string& name, const std::string& level) {
  config::Config c = config::load_config(std::string(LLMPROF_SOURCE_DIR) + "/configs/tiny_test.yaml");
  c.output.dir = out;
  c.output.name = name;
  c.profile.level = config::parse_enum<config::ProfileLevel>(level);
  c.profile.schedule_wait = 2;
  c.profile.schedule_warmup = 1;
  c.profile.schedule_active = 3;
  c.schedule.max_steps = 8;
  // A known memory roof: at profile.level=ops an unset one is measured (STREAM over 3 GiB of
  // arrays, seconds of memory traffic); OpsLevelCountsMatmulFlopsLikeTheAnalyticModel measures it.
  c.profile.peak_bytes_per_s = 1e10;
  return c;
}

TrainResult deep_run(const config::Config& c) {
  TrainOptions o;
  o.quiet = true;
  TrainResult r = run_training(c, o);
  EXPECT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  return r;
}

// A fresh run's summary.json: every key known to the typed reader, none missing, and the
// writer gives the file back byte for byte.
void expect_summary_all_known(const std::string& run_dir) {
  const std::string path = rundir::path(run_dir, rundir::kSummary);
  const std::string text = test::read_file(path);
  const rundir::Summary s = rundir::parse_summary(text, path);
  for (const auto& [pointer, value] : s.unknown) ADD_FAILURE() << "unknown key " << pointer;
  for (const std::string& note : s.read_notes) ADD_FAILURE() << note;
  EXPECT_EQ(rundir::summary_text(s), text);
}

using DeepTable = std::vector<std::map<std::string, std::string>>;
DeepTable deep_read_table(const std::string& path) {
  auto rows = output::parse_csv(test::read_file(path));
  DeepTable t;
  for (size_t i = 1; i < rows.size(); ++i) {
    std::map<std::string, std::string> m;
    for (size_t j = 0; j < rows[0].size(); ++j) m[rows[0][j]] = rows[i][j];
    t.push_back(m);
  }
  return t;
}

TEST(DeepProfile, ModulesLevelAttributesEveryScopeForwardAndBackward) {
  test::ScratchDir dir;
  TrainResult r = deep_run(tiny(dir.path(), "m", "modules"));
  DeepTable t = deep_read_table(r.run_dir + "/modules.csv");
  std::map<std::pair<std::string, std::string>, double> total;  // (scope, pass) over blocks
  std::set<std::string> blocks;
  for (auto& row : t) {
    total[{row["scope"], row["pass"]}] += std::stod(row["total_ms"]);
    if (row["scope"] == "attn.qkv") blocks.insert(row["block"]);
    EXPECT_EQ(row["steps"], "3");
  }
  for (const char* s : {"embedding", "block", "ln_1", "attn", "attn.qkv", "attn.core", "attn.scores",
                        "attn.softmax", "attn.mix", "attn.proj", "ln_2", "mlp", "mlp.up", "mlp.act",
                        "mlp.down", "ln_f", "lm_head", "loss"}) {
    EXPECT_GT((total[{s, "forward"}]), 0) << s << " forward";
    if (std::string(s) != "embedding") {
      EXPECT_GT((total[{s, "backward"}]), 0) << s << " backward";
    }
  }
  EXPECT_EQ(blocks, (std::set<std::string>{"0", "1"}));
  // Nesting: a scope's total holds its children's.
  for (const char* pass : {"forward", "backward"}) {
    EXPECT_GE((total[{"block", pass}]), (total[{"attn", pass}] + total[{"mlp", pass}]) * 0.999);
    EXPECT_GE((total[{"attn", pass}]), (total[{"attn.qkv", pass}]));
    EXPECT_GE((total[{"attn.core", pass}]), (total[{"attn.scores", pass}]));
  }
  auto s = nlohmann::json::parse(test::read_file(r.run_dir + "/summary.json"));
  EXPECT_EQ(s["modules"]["recorded_steps"], 3);
  // Top-level forward scopes reconcile with the forward phase within a few percent.
  EXPECT_LT(std::abs(s["modules"]["forward_residual_fraction"].get<double>()), 0.05)
      << s["modules"].dump();
  EXPECT_TRUE(s["flops"]["counted_matmul_per_step"].is_null()) << "modules level counts no ops";
  EXPECT_FALSE(std::filesystem::exists(r.run_dir + "/ops.csv"));
  EXPECT_TRUE(std::filesystem::exists(r.run_dir + "/activations.csv"));
  expect_summary_all_known(r.run_dir);
}

TEST(DeepProfile, OpsLevelCountsMatmulFlopsLikeTheAnalyticModel) {
  test::ScratchDir dir;
  config::Config c = tiny(dir.path(), "o", "ops");
  c.profile.peak_bytes_per_s = 0;  // measured: env.json says so below
  TrainResult r = deep_run(c);
  auto s = nlohmann::json::parse(test::read_file(r.run_dir + "/summary.json"));
  expect_summary_all_known(r.run_dir);
  const double ratio = s["flops"]["counted_vs_analytic_ratio"].get<double>();
  EXPECT_NEAR(ratio, 1.0, 0.05) << s["flops"].dump();
  // Shapes read in the first and last of the 3 recorded steps; the middle one mapped from the
  // first (the ratio above would be 2/3 without it).
  const auto& shapes = s["modules"]["shapes"];
  EXPECT_EQ(shapes["read_steps"], 2) << shapes.dump();
  EXPECT_EQ(shapes["mapped_steps"], 1) << shapes.dump();
  EXPECT_EQ(shapes["unmapped_steps"], 0) << shapes.dump();
  DeepTable ops = deep_read_table(r.run_dir + "/ops.csv");
  ASSERT_FALSE(ops.empty());
  bool mm = false;
  for (auto& row : ops) mm = mm || (row["op"] == "aten::mm" && !row["flops"].empty());
  EXPECT_TRUE(mm) << "aten::mm with counted flops";
  // The engine's "evaluate_function: <node>" events (names built per call) keep their own name:
  // as many calls as the node they wrap.
  std::map<std::string, std::string> calls;
  for (auto& row : ops) calls[row["op"]] = row["calls"];
  const std::string kEval = "autograd::engine::evaluate_function: ";
  int wrappers = 0;
  for (const auto& [op, n] : calls) {
    if (op.rfind(kEval, 0) != 0) continue;
    ++wrappers;
    EXPECT_EQ(n, calls[op.substr(kEval.size())]) << op;
  }
  EXPECT_GT(wrappers, 5);
  // Timed ops sorted by self time, then view/metadata ops: counted, with empty times.
  size_t timed = 0;
  while (timed < ops.size() && !ops[timed]["self_ms"].empty()) ++timed;
  for (size_t i = 1; i < timed; ++i) {
    EXPECT_GE(std::stod(ops[i - 1]["self_ms"]), std::stod(ops[i]["self_ms"])) << "sorted by self";
  }
  std::set<std::string> counted;
  for (size_t i = timed; i < ops.size(); ++i) {
    EXPECT_TRUE(ops[i]["total_ms"].empty()) << ops[i]["op"];
    EXPECT_GT(std::stod(ops[i]["calls"]), 0) << ops[i]["op"];
    counted.insert(ops[i]["op"]);
  }
  EXPECT_TRUE(counted.count("aten::view") || counted.count("aten::select") || counted.count("aten::t"))
      << "view ops are counted, not timed";
  // The roofline: env.json's measured bandwidth, and the matmuls placed under it.
  auto env = nlohmann::json::parse(test::read_file(r.run_dir + "/env.json"));
  EXPECT_EQ(env["peak_bandwidth"]["source"], "measured") << env["peak_bandwidth"].dump();
  EXPECT_GT(env["peak_bandwidth"]["bytes_per_s"].get<double>(), 1e8);
  for (auto& row : ops) {
    if (row["op"] != "aten::mm") continue;
    EXPECT_GT(std::stod(row["bytes"]), 0);
    EXPECT_NE(row["bound"], "");
    EXPECT_GE(std::stod(row["lost_ms"]), 0);
    EXPECT_NEAR(std::stod(row["arithmetic_intensity"]),
                std::stod(row["flops"]) / std::stod(row["bytes"]), 1e-6 * std::stod(row["arithmetic_intensity"]));
  }
  // The peak RSS does not hold the bandwidth measurement's 3 GiB of arrays.
  EXPECT_LT(s["memory"]["peak_rss_bytes"].get<double>(), 2.5e9) << s["memory"].dump();
  EXPECT_FALSE(r.top_ops.empty());
  DeepTable mem = deep_read_table(r.run_dir + "/memory.csv");
  std::map<std::string, int> per_phase;
  for (auto& row : mem) {
    per_phase[row["phase"]] += 1;
    if (row["phase"] != "data") {
      EXPECT_GT(std::stod(row["peak_allocated_bytes"]), 0) << row["phase"];
    }
  }
  EXPECT_EQ(per_phase["forward"], 3) << "one row per recorded step and phase";
  EXPECT_EQ(per_phase["backward"], 3);
  EXPECT_EQ(per_phase["optimizer"], 3);
  EXPECT_EQ(per_phase["data"], 3) << "one data row per step: the batch is taken once";
  std::set<std::string> steps;
  for (auto& row : mem) steps.insert(row["step"]);
  EXPECT_EQ(steps, (std::set<std::string>{"4", "5", "6"})) << "steps 4-6 (wait 2, warmup 1)";
  // Byte columns are whole numbers, means over the recorded steps.
  for (const char* file : {"/activations.csv", "/ops.csv"}) {
    for (auto& row : deep_read_table(r.run_dir + file)) {
      if (row["alloc_bytes"].empty()) continue;
      EXPECT_EQ(row["alloc_bytes"].find_first_not_of("0123456789"), std::string::npos)
          << file << " alloc_bytes " << row["alloc_bytes"];
    }
  }
}

TEST(DeepProfile, RepeatedWindowsAddUpAndTheTraceHoldsTheFirst) {
  test::ScratchDir dir;
  config::Config c = tiny(dir.path(), "rep", "ops");
  c.profile.schedule_wait = 1;
  c.profile.schedule_warmup = 1;
  c.profile.schedule_active = 2;
  c.profile.schedule_repeat = 0;  // until the end: windows at steps 3-4, 7-8, 11-12
  c.schedule.max_steps = 12;
  TrainResult r = deep_run(c);
  auto s = nlohmann::json::parse(test::read_file(r.run_dir + "/summary.json"));
  EXPECT_EQ(s["modules"]["recorded_steps"], 6);
  EXPECT_EQ(s["modules"]["windows"], 3);
  // Per-step figures are means over all six steps, not sums of the windows.
  EXPECT_NEAR(s["flops"]["counted_vs_analytic_ratio"].get<double>(), 1.0, 0.05) << s["flops"].dump();
  EXPECT_EQ(s["modules"]["shapes"]["unmapped_steps"], 0);
  for (auto& row : deep_read_table(r.run_dir + "/modules.csv")) EXPECT_EQ(row["steps"], "6") << row["scope"];
  for (auto& row : deep_read_table(r.run_dir + "/ops.csv")) EXPECT_EQ(row["steps"], "6") << row["op"];
  std::set<std::string> mem_steps;
  for (auto& row : deep_read_table(r.run_dir + "/memory.csv")) mem_steps.insert(row["step"]);
  EXPECT_EQ(mem_steps, (std::set<std::string>{"3", "4", "7", "8", "11", "12"}));
  std::set<std::string> trace_steps;
  auto trace = nlohmann::json::parse(test::read_file(r.run_dir + "/trace.json"));
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (e.value("cat", "") == "user_annotation" && name.rfind("ProfilerStep#", 0) == 0) {
      trace_steps.insert(name);
    }
  }
  EXPECT_EQ(trace_steps, (std::set<std::string>{"ProfilerStep#3", "ProfilerStep#4"}));
  EXPECT_EQ(s["profiler_overhead"]["trace"]["windows"], 1);
  // The own-cost estimate splits off LibTorch's part: every observed call (timed or counted) at
  // the cost of a callback that does nothing.
  const auto& deep = s["profiler_overhead"]["deep"];
  const double calls = deep["events_per_step"].get<double>() +
                       deep["untimed_events_per_step"].get<double>();
  EXPECT_NEAR(deep["record_function_ms_per_recorded_step"].get<double>(),
              calls * deep["ns_per_call_record_function"].get<double>() * 1e-6, 1e-9)
      << deep.dump();
  EXPECT_TRUE(deep["record_function_fraction_of_recorded_step"].is_number()) << deep.dump();
}

TEST(DeepProfile, TraceIsValidChromeJsonWithMonotonicTimestamps) {
  test::ScratchDir dir;
  TrainResult r = deep_run(tiny(dir.path(), "t", "ops"));
  auto trace = nlohmann::json::parse(test::read_file(r.run_dir + "/trace.json"));
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::map<std::pair<int, std::string>, double> last_ts;
  int slices = 0, flows = 0, counters = 0, meta = 0;
  for (const auto& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e.dump();
    const std::string ph = e["ph"];
    if (ph == "M") { ++meta; continue; }
    ASSERT_TRUE(e.contains("ts")) << e.dump();
    if (ph == "X") {
      ++slices;
      EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
      // One series per kind of slice: steps, scopes, ops, backward nodes (phases nest in steps).
      const std::string kind =
          e.contains("args") ? e["args"].value("llmprof", std::string()) : std::string();
      auto key = std::make_pair(e["tid"].get<int>(), e["cat"].get<std::string>() + "/" + kind);
      if (kind != "phase") {
        EXPECT_GE(e["ts"].get<double>(), last_ts[key]) << e.dump();
        last_ts[key] = e["ts"].get<double>();
      }
    }
    if (ph == "s" || ph == "f") ++flows;
    if (ph == "C") ++counters;
  }
  EXPECT_GT(slices, 100);
  EXPECT_GT(flows, 10);
  EXPECT_GT(counters, 0);
  EXPECT_GE(meta, 2);
  EXPECT_FALSE(std::filesystem::exists(r.run_dir + "/trace.json.tmp"));
}

TEST(DeepProfile, FullBufferWarnsAndTheRunCompletes) {
  test::ScratchDir dir;
  config::Config c = tiny(dir.path(), "full", "ops");
  c.profile.max_events = 1000;
  TrainResult r = deep_run(c);
  auto s = nlohmann::json::parse(test::read_file(r.run_dir + "/summary.json"));
  EXPECT_GT(s["modules"]["dropped_events"].get<int64_t>(), 0);
  EXPECT_NE(test::read_file(r.run_dir + "/log.txt").find("profiler buffers full"), std::string::npos);
}

TEST(DeepProfile, ModulesAndOpsLevelsDoNotChangeTheLossTrajectory) {
  test::ScratchDir dir;
  std::vector<std::vector<std::string>> losses;
  for (const char* level : {"off", "modules", "ops"}) {
    TrainResult r = deep_run(tiny(dir.path(), level, level));
    std::vector<std::string> l;
    for (auto& row : deep_read_table(r.run_dir + "/steps.csv")) l.push_back(row["loss"]);
    losses.push_back(l);
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(losses[0], losses[2]);
}

}  // namespace
}  // namespace llmprof::train
