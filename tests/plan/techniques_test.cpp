// `llmprof plan --format json`: the document carries rundir's kPlanSchemaVersion and one row per
// technique of the report it renders.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llmprof/config/config.h"
#include "llmprof/plan/device.h"
#include "llmprof/plan/plan.h"
#include "llmprof/rundir/files.h"

namespace llmprof::plan {
namespace {

TEST(PlanJson, CarriesThePlanSchemaVersionAndOneRowPerTechnique) {
  config::Config c;  // GPT-2 small's shape: 12 x 768, 12 heads, T 1024, vocab 50257, batch 8
  c.model.n_layer = 12;
  c.model.n_embd = 768;
  c.model.n_head = 12;
  c.model.block_size = 1024;
  c.model.vocab_size = 50257;
  c.train.batch_size = 8;
  const PlanReport r = make_report(c, find_device("a100-40gb"), 0, 1);
  const nlohmann::json j = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(j.at("schema_version"), rundir::kPlanSchemaVersion);
  ASSERT_FALSE(r.techniques.empty());
  EXPECT_EQ(j.at("techniques").size(), r.techniques.size());
  EXPECT_EQ(j.at("peak_bytes"), r.memory.peak_bytes);
  EXPECT_EQ(j.at("parameters"), r.memory.parameters);
}

TEST(PlanReport, OnCudaTheCachingAllocatorGetsAnExpandableSegmentsRowWithoutFragmentation) {
  config::Config c;
  c.model.n_layer = 2;
  c.model.n_embd = 64;
  c.model.n_head = 4;
  c.model.block_size = 64;
  c.model.vocab_size = 1000;
  c.train.batch_size = 4;
  c.train.precision = config::Precision::kBf16;
  const DeviceSpec d = find_device("h100-80gb");
  const PlanReport k = make_report(c, d, 0, 8, CudaAllocator::kCaching);
  auto row = [](const PlanReport& r, const std::string& name) -> const TechniqueRow* {
    for (const TechniqueRow& t : r.techniques) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };
  const TechniqueRow* fused = row(k, "+ fused loss");
  const TechniqueRow* expandable = row(k, "+ expandable segments");
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(expandable, nullptr);
  // After "+ accumulation (4 micro-batches)" the micro-batch is 1: its bf16 logits (128,000 bytes)
  // are smaller than the embedding's fp32 gradient, 1000 x 64 x 4 = 256,000.
  EXPECT_EQ(fused->peak_bytes - expandable->peak_bytes, 256000);
  const PlanReport x = make_report(c, d, 0, 8, CudaAllocator::kExpandableSegments);
  EXPECT_EQ(row(x, "+ expandable segments"), nullptr);
  EXPECT_EQ(row(x, "+ fused loss")->peak_bytes, expandable->peak_bytes);
  const nlohmann::json j = nlohmann::json::parse(report_json(k));
  EXPECT_EQ(j.at("allocator"), "caching");
  EXPECT_EQ(j.at("workspace_bytes"), kCudaWorkspaceBytes);
  EXPECT_EQ(j.at("fragmentation_bytes"), k.memory.fragmentation_bytes);
  EXPECT_NE(j.at("peak_reserved_note").get<std::string>().find("upper bound"), std::string::npos);
  // usable leaves the CUDA context out (measured 0.73-0.75 GiB on an H200).
  EXPECT_EQ(d.capacity_bytes - d.usable_bytes(), kCudaContextBytes);
  const nlohmann::json cpu =
      nlohmann::json::parse(report_json(make_report(c, find_device("cpu"), 0, 8)));
  EXPECT_TRUE(cpu.at("allocator").is_null());
}

}  // namespace
}  // namespace llmprof::plan
