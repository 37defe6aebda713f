// The public API on a loop llmprof does not ship: an MLP classifier on generated data, with its own
// named scopes, through llmprof::Session and llmprof::Step (llmprof/llmprof.h).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <sys/syscall.h>
#include <unistd.h>
#include <functional>
#include <mutex>
#include <regex>
#include <zlib.h>

#include "llmprof/base/clock.h"
#include "llmprof/gpu/activity_source.h"
#include "llmprof/llmprof.h"
#include "llmprof/output/csv.h"
#include "support/test_support.h"

namespace llmprof {
namespace {

using Table = std::vector<std::map<std::string, std::string>>;
Table read_table(const std::string& path) {
  auto rows = output::parse_csv(test::read_file(path));
  Table t;
  for (size_t i = 1; i < rows.size(); ++i) {
    std::map<std::string, std::string> m;
    for (size_t j = 0; j < rows[0].size(); ++j) m[rows[0][j]] = rows[i][j];
    t.push_back(m);
  }
  return t;
}

struct MlpImpl : torch::nn::Module {
  MlpImpl() : fc1(register_module("fc1", torch::nn::Linear(16, 32))),
              fc2(register_module("fc2", torch::nn::Linear(32, 4))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h;
    {
      LLMPROF_NAMED_SCOPE("mlp.fc1", -1);
      h = torch::relu(fc1->forward(x));
    }
    LLMPROF_NAMED_SCOPE("mlp.fc2", -1);
    return fc2->forward(h);
  }
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Mlp);

Config profile_config(const test::ScratchDir& dir, const std::string& name,
                      const std::string& level) {
  Config c;
  c.output.dir = dir.path();
  c.output.name = name;
  c.profile.level = config::parse_enum<config::ProfileLevel>(level);
  c.profile.peak_flops_per_s = 1e11;
  // A known memory roof: at profile.level=ops an unset one is measured (STREAM over 3 GiB of
  // arrays, seconds of memory traffic) and this test does not look at it.
  c.profile.peak_bytes_per_s = 1e10;
  c.profile.warmup_steps = 1;
  c.profile.schedule_wait = 1;
  c.profile.schedule_warmup = 1;
  c.profile.schedule_active = 3;
  c.schedule.max_steps = 8;
  c.schedule.warmup_steps = 1;
  c.energy.enabled = false;
  c.threads = 1;
  return c;
}

// Trains the MLP for cfg.schedule.max_steps steps through the API; returns the summary. gpu: the
// session's GPU activity source, if any.
RunSummary train_mlp(const Config& cfg, bool with_flops,
                     std::function<std::unique_ptr<gpu::ActivitySource>()> gpu = {}) {
  torch::manual_seed(0);
  Mlp model;
  torch::optim::SGD opt(model->parameters(), 0.1);
  const torch::Tensor x = torch::randn({64, 16}), y = torch::randint(0, 4, {64});
  SessionOptions o;
  o.quiet = true;
  o.model_description = "mlp 16-32-4";
  o.parameters = 16 * 32 + 32 + 32 * 4 + 4;
  o.samples_per_step = 64;
  if (with_flops) o.flops_per_step = 3.0 * 2 * 64 * (16 * 32 + 32 * 4);
  o.gpu_activity = std::move(gpu);
  Session session(cfg, o);
  for (int64_t i = 0; i < cfg.schedule.max_steps; ++i) {
    Step step = session.step();
    torch::Tensor loss;
    {
      auto p = step.phase(Phase::kForward);
      loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    }
    {
      auto p = step.phase(Phase::kBackward);
      loss.backward();
    }
    {
      auto p = step.phase(Phase::kOptimizer);
      opt.step();
      opt.zero_grad();
    }
    step.end();
    step.set_loss(loss.item<double>());
    if (step.number() % 4 == 0) step.record_eval({{"val", loss.item<double>() + 0.1, 0.5}}, 1.0);
  }
  return session.finish();
}

TEST(Session, CustomLoopWritesTheRunDirectoryWithItsOwnScopesForwardAndBackward) {
  test::ScratchDir dir;
  const RunSummary s = train_mlp(profile_config(dir, "mlp", "ops"), /*with_flops=*/true);
  EXPECT_EQ(s.status, RunStatus::kCompleted);
  EXPECT_EQ(s.steps_completed, 8);
  ASSERT_TRUE(s.median_step_ms);
  ASSERT_TRUE(s.mfu);

  const Table steps = read_table(s.run_dir + "/steps.csv");
  ASSERT_EQ(steps.size(), 8u);
  EXPECT_EQ(steps.front().at("step"), "1");
  EXPECT_EQ(steps.back().at("step"), "8");
  EXPECT_TRUE(steps.front().at("data_ms").empty()) << "no data phase in this loop: null";
  EXPECT_FALSE(steps.front().at("forward_ms").empty());
  EXPECT_TRUE(steps.front().at("tokens").empty()) << "tokens not told: null";
  EXPECT_EQ(read_table(s.run_dir + "/eval.csv").size(), 2u);  // steps 4 and 8

  std::set<std::pair<std::string, std::string>> scopes;
  for (const auto& row : read_table(s.run_dir + "/modules.csv")) {
    scopes.insert({row.at("scope"), row.at("pass")});
  }
  for (const char* name : {"mlp.fc1", "mlp.fc2"}) {
    EXPECT_TRUE(scopes.count({name, "forward"})) << name;
    EXPECT_TRUE(scopes.count({name, "backward"})) << name << " backward, by sequence number";
  }
  EXPECT_FALSE(read_table(s.run_dir + "/ops.csv").empty());
  EXPECT_TRUE(std::filesystem::exists(s.run_dir + "/trace.json"));
  const auto summary = nlohmann::json::parse(test::read_file(s.run_dir + "/summary.json"));
  EXPECT_EQ(summary["status"], "completed");
  EXPECT_EQ(summary["parameters"], 676);
  EXPECT_TRUE(summary["throughput"]["tokens_per_s"].is_null());
  EXPECT_FALSE(summary["throughput"]["samples_per_s"].is_null());
}

// Stands in for CUPTI on the CPU: every aten::addmm and aten::mm call "launches" one 2 us kernel.
// Its runtime record starts in the op's exit callback, on the calling thread (the autograd
// engine's in backward). LibTorch runs this callback before the tracer's, so the op has not ended
// on the tracer's clock and its children have: the op is the innermost one open, as for a real
// launch from inside the op.
class LaunchPerMatmul : public gpu::ActivitySource {
 public:
  static constexpr int64_t kKernelNs = 2000;
  void start() override {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = this;
    records_ = {};
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&on_enter, &on_exit).scopes({at::RecordScope::FUNCTION}));
  }
  void stop() override {
    at::removeCallback(handle_);
    std::lock_guard<std::mutex> lock(mu_);
    active_ = nullptr;
  }
  size_t collect(gpu::GpuRecords& out) override {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t n = records_.size();
    out.kernels.insert(out.kernels.end(), records_.kernels.begin(), records_.kernels.end());
    out.runtime.insert(out.runtime.end(), records_.runtime.begin(), records_.runtime.end());
    records_ = {};
    return n;
  }

 private:
  static std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& /*fn*/) {
    return nullptr;
  }
  static void on_exit(const at::RecordFunction& fn, at::ObserverContext* /*context*/) {
    const std::string_view name = fn.name();
    if (name != "aten::addmm" && name != "aten::mm") return;
    const int64_t t = now_ns();
    std::lock_guard<std::mutex> lock(mu_);
    if (active_ == nullptr) return;
    gpu::GpuRecords& r = active_->records_;
    const auto id = static_cast<uint32_t>(r.runtime.size() + 1);
    gpu::RuntimeApiRecord call;
    call.name = "cudaLaunchKernel";
    call.start_ns = t;
    call.end_ns = t + 1;
    call.thread_id = static_cast<uint64_t>(::syscall(SYS_gettid));
    call.correlation_id = id;
    r.runtime.push_back(call);
    gpu::KernelRecord k;
    k.name = "synthetic_gemm";
    k.start_ns = t + 10;
    k.end_ns = t + 10 + kKernelNs;
    k.stream = 7;
    k.correlation_id = id;
    r.kernels.push_back(k);
  }
  static inline std::mutex mu_;
  static inline LaunchPerMatmul* active_ = nullptr;
  at::CallbackHandle handle_ = 0;
  gpu::GpuRecords records_;
};

TEST(Session, GpuActivityIsAttributedToOpsModulesAndKernels) {
  test::ScratchDir dir;
  const RunSummary s = train_mlp(profile_config(dir, "gpu", "ops"), /*with_flops=*/true,
                                 [] { return std::make_unique<LaunchPerMatmul>(); });
  ASSERT_EQ(s.status, RunStatus::kCompleted);
  const double kernel_ms = LaunchPerMatmul::kKernelNs * 1e-6;
  // ops.csv: each matmul op launched one kernel per call; every other op launched nothing (0, a
  // measured zero: this run has GPU records).
  double launches = 0, ops_gpu_ms = 0;
  for (const auto& row : read_table(s.run_dir + "/ops.csv")) {
    if (row.at("self_ms").empty()) continue;  // a view op only counted: not timed, no gpu_ms
    ASSERT_FALSE(row.at("gpu_ms").empty()) << row.at("op");
    const double gpu_ms = std::stod(row.at("gpu_ms")), calls = std::stod(row.at("calls"));
    ops_gpu_ms += gpu_ms;
    if (row.at("op") == "aten::addmm" || row.at("op") == "aten::mm") {
      EXPECT_NEAR(gpu_ms, calls * kernel_ms, 1e-9) << row.at("op");
      launches += calls;
    } else {
      EXPECT_EQ(gpu_ms, 0.0) << row.at("op");
    }
  }
  EXPECT_GE(launches, 4) << "2 forward addmm and at least 2 backward mm per step";
  // modules.csv: a linear's forward is one addmm; backward through the autograd nodes.
  std::map<std::pair<std::string, std::string>, double> module_gpu;
  for (const auto& row : read_table(s.run_dir + "/modules.csv")) {
    module_gpu[{row.at("scope"), row.at("pass")}] = std::stod(row.at("gpu_ms"));
  }
  EXPECT_NEAR((module_gpu[{"mlp.fc1", "forward"}]), kernel_ms, 1e-9);
  EXPECT_NEAR((module_gpu[{"mlp.fc2", "forward"}]), kernel_ms, 1e-9);
  EXPECT_GE((module_gpu[{"mlp.fc1", "backward"}]), kernel_ms);
  EXPECT_GE((module_gpu[{"mlp.fc2", "backward"}]), kernel_ms);
  // kernels.csv: the one kernel, every launch of a step.
  const Table kernels = read_table(s.run_dir + "/kernels.csv");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].at("kernel"), "synthetic_gemm");
  EXPECT_NEAR(std::stod(kernels[0].at("calls")), launches, 1e-9);
  // The summary reconciles: device time launched by ops = kernel time, nothing unattributed.
  const auto summary = nlohmann::json::parse(test::read_file(s.run_dir + "/summary.json"));
  const auto& g = summary["gpu"];
  EXPECT_EQ(g["unattributed_activities"], 0);
  EXPECT_NEAR(g["kernel_ms_per_step"].get<double>(), launches * kernel_ms, 1e-9);
  EXPECT_NEAR(g["launched_by_ops_ms_per_step"].get<double>(), ops_gpu_ms, 1e-9);
  EXPECT_NEAR(g["launched_by_ops_ms_per_step"].get<double>(), launches * kernel_ms, 1e-9);
  EXPECT_EQ(g["idle"]["steps"], 3);
  EXPECT_NEAR(g["idle"]["busy_ms"].get<double>(), launches * kernel_ms, 1e-9);
  EXPECT_NEAR(g["idle"]["idle_ms"].get<double>(),
              g["idle"]["host_bound_ms"].get<double>() + g["idle"]["data_bound_ms"].get<double>() +
                  g["idle"]["sync_bound_ms"].get<double>(),
              1e-9);
}

// trace.json of a run with GPU activity in the shape HTA reads (Kineto's): metadata before the
// events (the rank where HTA's regex finds it), ProfilerStep#N annotations, kernels on pid = the
// device and tid = the stream with Kineto's args, runtime calls and ops tied to them by
// "correlation" and "External id", backward kernels with their module scope; and the same trace
// gzip-compressed with profile.trace_gzip.
std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return {};
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

void expect_hta_contract(const std::string& text) {
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"("rank":\s+(\d+))")));
  EXPECT_EQ(m[1], "0");
  const size_t schema = text.find("\"schemaVersion\""), props = text.find("\"deviceProperties\""),
               events_at = text.find("\"traceEvents\"");
  ASSERT_NE(events_at, std::string::npos);
  EXPECT_LT(schema, events_at);
  EXPECT_LT(props, events_at);
  EXPECT_LT(text.find("\"distributedInfo\""), events_at);
  const auto trace = nlohmann::json::parse(text);
  EXPECT_EQ(trace["schemaVersion"], 1);
  EXPECT_TRUE(trace["deviceProperties"].is_array());
  std::vector<std::pair<double, double>> steps;
  std::map<int64_t, std::string> cpu_ops;          // External id -> op name
  std::map<int64_t, nlohmann::json> runtime;       // correlation -> the call
  std::vector<nlohmann::json> kernels;
  std::set<std::string> step_names;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const std::string cat = e["cat"];
    if (cat == "user_annotation" && e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) {
      steps.push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
      step_names.insert(e["name"].get<std::string>());
    } else if (cat == "cpu_op") {
      cpu_ops[e["args"]["External id"].get<int64_t>()] = e["name"];
    } else if (cat == "cuda_runtime") {
      runtime[e["args"]["correlation"].get<int64_t>()] = e;
    } else if (cat == "kernel") {
      kernels.push_back(e);
    }
    for (const char* old : {"op", "bwd", "scope", "phase", "step", "memcpy", "memset"}) {
      EXPECT_NE(cat, old) << "a category HTA does not know: " << e.dump();
    }
  }
  EXPECT_EQ(step_names, (std::set<std::string>{"ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"}));
  ASSERT_FALSE(kernels.empty());
  for (const auto& k : kernels) {
    const auto& a = k["args"];
    EXPECT_EQ(k["pid"], 0);  // device 0
    EXPECT_EQ(k["tid"], 7);  // its stream
    EXPECT_EQ(a["stream"], 7);
    EXPECT_EQ(a["device"], 0);
    EXPECT_TRUE(a["grid"].is_array() && a["grid"].size() == 3) << k.dump();
    EXPECT_TRUE(a["block"].is_array() && a["block"].size() == 3) << k.dump();
    EXPECT_TRUE(a.contains("registers per thread") && a.contains("shared memory")) << k.dump();
    // kernel -> its runtime call (correlation) -> the op that made it (External id), in a step.
    const int64_t corr = a["correlation"], ext = a["External id"];
    ASSERT_EQ(runtime.count(corr), 1u) << k.dump();
    const auto& call = runtime[corr];
    EXPECT_EQ(call["args"]["External id"], ext);
    EXPECT_TRUE(call["args"].contains("cbid"));
    ASSERT_EQ(cpu_ops.count(ext), 1u) << k.dump();
    EXPECT_TRUE(cpu_ops[ext] == "aten::addmm" || cpu_ops[ext] == "aten::mm") << cpu_ops[ext];
    const double ts = call["ts"];
    EXPECT_TRUE(std::any_of(steps.begin(), steps.end(),
                            [&](const auto& st) { return st.first <= ts && ts < st.second; }))
        << "runtime call outside every ProfilerStep: " << call.dump();
    // Forward and backward kernels alike carry their module (backward: the autograd node's).
    const std::string scope = a["scope"];
    EXPECT_TRUE(scope == "mlp.fc1" || scope == "mlp.fc2") << k.dump();
  }
}

TEST(Session, GpuTraceFollowsTheKinetoContractThatHtaReads) {
  test::ScratchDir dir;
  Config cfg = profile_config(dir, "gpu_trace", "ops");
  const RunSummary s = train_mlp(cfg, /*with_flops=*/true,
                                 [] { return std::make_unique<LaunchPerMatmul>(); });
  ASSERT_EQ(s.status, RunStatus::kCompleted);
  expect_hta_contract(test::read_file(s.run_dir + "/trace.json"));
  cfg.output.name = "gpu_trace_gz";
  cfg.profile.trace_gzip = true;
  const RunSummary z = train_mlp(cfg, /*with_flops=*/true,
                                 [] { return std::make_unique<LaunchPerMatmul>(); });
  EXPECT_FALSE(std::filesystem::exists(z.run_dir + "/trace.json"));
  const std::string text = gunzip_file(z.run_dir + "/trace.json.gz");
  ASSERT_FALSE(text.empty()) << "no readable trace.json.gz";
  expect_hta_contract(text);
}

TEST(Session, UnknownFlopsGiveNullMfuNeverZero) {
  test::ScratchDir dir;
  const RunSummary s = train_mlp(profile_config(dir, "noflops", "phases"), /*with_flops=*/false);
  EXPECT_FALSE(s.mfu);
  const Table steps = read_table(s.run_dir + "/steps.csv");
  EXPECT_TRUE(steps.front().at("mfu").empty());
  EXPECT_TRUE(steps.front().at("flops").empty());
  const auto summary = nlohmann::json::parse(test::read_file(s.run_dir + "/summary.json"));
  EXPECT_TRUE(summary["mfu"]["value"].is_null());
  EXPECT_TRUE(summary["flops"]["analytic_per_step"].is_null());
}

TEST(Session, AStepUnwoundByAnExceptionLeavesNoRowAndTheSessionGoesOn) {
  test::ScratchDir dir;
  Config cfg = profile_config(dir, "throw", "phases");
  Session session(cfg, SessionOptions{});
  {
    Step ok = session.step();
    ok.end();
    ok.set_loss(1.0);
  }
  try {
    Step bad = session.step();
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(session.steps_completed(), 1);
  {
    Step again = session.step();
    EXPECT_EQ(again.number(), 2);
  }
  EXPECT_THROW(
      {
        Step a = session.step();
        Step b = session.step();  // one Step at a time
      },
      Error);
  const RunSummary s = session.finish(RunStatus::kInterrupted, "test stop");
  EXPECT_EQ(s.steps_completed, 2);
  const auto summary = nlohmann::json::parse(test::read_file(s.run_dir + "/summary.json"));
  EXPECT_EQ(summary["status"], "interrupted");
  EXPECT_EQ(read_table(s.run_dir + "/steps.csv").size(), 2u);
}

TEST(Session, NamedScopesRegisterOnceAndBuiltInNamesKeepTheirIds) {
  EXPECT_EQ(profile::register_scope("attn.qkv"), profile::Scope::kAttnQkv);
  const profile::Scope a = profile::register_scope("my.module");
  EXPECT_EQ(profile::register_scope("my.module"), a);
  EXPECT_GE(static_cast<int>(a), profile::kNumScopes);
  EXPECT_EQ(profile::scope_name(a), "my.module");
}

}  // namespace
}  // namespace llmprof
