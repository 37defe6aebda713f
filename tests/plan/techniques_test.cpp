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

}  // namespace
}  // namespace llmprof::plan
