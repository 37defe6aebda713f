// The GPU half of the one trace writer (rundir/trace_gpu.cpp) on a recorded fixture.
#include "llmprof/rundir/trace_gpu.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "support/gpu_fixture.h"

namespace llmprof::gpu {
namespace {

using nlohmann::json;
using rundir::gpu_trace_events;
using rundir::GpuTraceOptions;
using rundir::kFirstExtraTid;
using rundir::kFlowIdBase;

std::vector<json> events_of(const GpuFixture& fx, const GpuTraceOptions& opt) {
  std::vector<json> out;
  for (const std::string& e :
       gpu_trace_events(fx.gpu, fx.cpu_ops, correlate(fx.gpu, fx.cpu_ops), opt)) {
    out.push_back(json::parse(e));  // every event is a JSON object on its own
  }
  return out;
}

TEST(GpuTrace, KernelsOnStreamTracksWithLaunchFlows) {
  const GpuFixture fx =
      read_fixture(std::string(LLMPROF_SOURCE_DIR) + "/tests/gpu/fixtures/correlation.jsonl");
  GpuTraceOptions opt;
  opt.origin_ns = 1000;
  opt.cpu_tids = {{100, 1}};  // the train loop's track in trace.json
  const std::vector<json> events = events_of(fx, opt);

  int kernels = 0, runtime = 0;
  std::map<int64_t, std::string> flow_phases;  // id -> "sf"
  bool gpu_named = false, stream_named = false;
  for (const json& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name" && e.at("pid") == 0) {
      gpu_named = e.at("args").at("name") == "GPU 0";
    }
    if (ph == "M" && e.at("name") == "thread_name" && e.at("pid") == 0 && e.at("tid") == 7) {
      stream_named = e.at("args").at("name") == "stream 7";
    }
    if (ph == "X" && e.at("cat") == "kernel") {
      ++kernels;
      EXPECT_EQ(e.at("pid"), 0);  // Kineto's: the device
      EXPECT_EQ(e.at("tid"), 7);
      EXPECT_EQ(e.at("args").at("stream"), 7);
      EXPECT_EQ(e.at("args").at("device"), 0);
      if (e.at("name") == "gemm") {
        EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 9.0);  // (10000 - 1000) ns in us
        EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 10.0);
        EXPECT_EQ(e.at("args").at("op"), "aten::addmm");
        EXPECT_EQ(e.at("args").at("scope"), "attn.qkv[0]");
        EXPECT_EQ(e.at("args").at("grid"), json::array({64, 1, 1}));
        EXPECT_GT(e.at("args").at("External id").get<int64_t>(), 0);
        EXPECT_TRUE(e.at("args").contains("registers per thread"));
      }
      if (e.at("name") == "orphan") {
        EXPECT_EQ(e.at("args").at("op"), "(unattributed)");
        EXPECT_EQ(e.at("args").at("External id"), -1);
      }
    }
    if (ph == "X" && (e.at("cat") == "gpu_memcpy" || e.at("cat") == "gpu_memset")) {
      EXPECT_EQ(e.at("pid"), 0);
      EXPECT_TRUE(e.at("args").contains("stream")) << e.dump();
    }
    if (ph == "X" && e.at("cat") == "cuda_runtime") {
      ++runtime;
      EXPECT_EQ(e.at("pid"), 1);
      EXPECT_EQ(e.at("tid"), 1);
      EXPECT_TRUE(e.at("args").contains("correlation") && e.at("args").contains("cbid") &&
                  e.at("args").contains("External id"))
          << e.dump();
    }
    if (ph == "s" || ph == "f") flow_phases[e.at("id").get<int64_t>()] += ph;
  }
  EXPECT_TRUE(gpu_named);
  EXPECT_TRUE(stream_named);
  EXPECT_EQ(kernels, 5);
  EXPECT_EQ(runtime, 5);
  // 4 launched kernels and the copy: one start and one finish each; the orphan has no arrow.
  EXPECT_EQ(flow_phases.size(), 5u);
  for (const auto& [id, phases] : flow_phases) {
    EXPECT_EQ(phases, "sf") << id;
    EXPECT_GT(id, kFlowIdBase);
  }
  EXPECT_EQ(flow_phases.count(kFlowIdBase + 99), 0u);
}

TEST(GpuTrace, UnknownHostThreadsGetTheirOwnNamedTrack) {
  const GpuFixture fx =
      read_fixture(std::string(LLMPROF_SOURCE_DIR) + "/tests/gpu/fixtures/correlation.jsonl");
  const std::vector<json> events = events_of(fx, GpuTraceOptions{});
  bool named = false;
  for (const json& e : events) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("pid") == 1) {
      named = e.at("tid") == kFirstExtraTid && e.at("args").at("name") == "cuda thread 100";
    }
    if (e.at("ph") == "X" && e.at("cat") == "cuda_runtime") EXPECT_EQ(e.at("tid"), kFirstExtraTid);
  }
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace llmprof::gpu
