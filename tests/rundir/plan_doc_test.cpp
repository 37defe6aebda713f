// llmprof plan's JSON as a typed document: write then read, CUDA-only fields null on a CPU,
// errors name the file and the field, docs/plan_json.md matches the struct. (plan's conversion of
// its PlanReport is covered by the plan command's tests.)
#include "llmprof/rundir/plan_doc.h"

#include <gtest/gtest.h>

#include <string>

#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

PlanDoc cpu_plan() {
  PlanDoc d;
  d.device = {"cpu", "this machine's memory", "MemAvailable", 8LL << 30, 8LL << 30};
  d.parameters = 1000;
  d.components_at_peak_bytes = {{"parameters", 4000}, {"activations", 123}};
  d.block_modules = {{"attn.softmax", "fp32", 64}};
  d.peak_bytes = 9000;
  d.peak_reserved_bytes = 9000;
  d.fits = true;
  d.largest_batch = 512;
  d.flops_per_step = 1.5e9;
  d.step_ms = 15.0;  // 1.5e9 FLOPs at 1e11 FLOP/s
  d.step_ms_label = "roofline lower bound";
  d.optimizer_states = "none";
  d.techniques = {{"baseline (fp32)", "llmprof", std::nullopt, false, 9000, 8000, 1000, 1200, true,
                   512, 4, 1, 15.0},
                  {"+ ZeRO-2 (world 8), DeepSpeed estimator", "deepspeed", "4P + 16P/N", true,
                   5000, 4000, 1000, 1200, true, 600, 4, 1, std::nullopt}};
  d.techniques_adamw = std::vector<PlanDocTechnique>{d.techniques.front()};
  d.technique_notes = {"no optimizer state"};
  d.notes = {"assumed"};
  return d;
}

TEST(PlanDocFile, WriteThenReadGivesTheSameFigures) {
  const std::string text = plan_doc_text(cpu_plan());
  const PlanDoc d = parse_plan_doc(text, "plan.json");
  EXPECT_EQ(d.schema_version, kPlanSchemaVersion);
  EXPECT_EQ(d.device.capacity_bytes, 8LL << 30);
  EXPECT_EQ(d.components_at_peak_bytes.at("activations"), 123);
  ASSERT_EQ(d.block_modules.size(), 1u);
  EXPECT_EQ(d.block_modules[0].dtype, "fp32");
  EXPECT_FALSE(d.allocator.has_value());  // a CPU: null
  EXPECT_FALSE(d.workspace_bytes.has_value());
  EXPECT_EQ(d.step_ms, 15.0);
  EXPECT_FALSE(d.calibration_ratio.has_value());
  ASSERT_EQ(d.techniques.size(), 2u);
  EXPECT_TRUE(d.techniques[1].predicted_only);
  EXPECT_FALSE(d.techniques[1].step_ms.has_value());
  EXPECT_EQ(d.techniques[1].model_state_formula, "4P + 16P/N");
  EXPECT_EQ(d.techniques[1].largest_batch, 600);
  ASSERT_TRUE(d.techniques_adamw.has_value());
  EXPECT_EQ(d.techniques_adamw->size(), 1u);
  EXPECT_EQ(plan_doc_text(d), text);  // byte-identical rewrite
  test::expect_contains(text, "\"allocator\": null");
}

TEST(PlanDocFile, ErrorsNameTheFileAndTheField) {
  doc_test::expect_data_error(
      [] { parse_plan_doc(R"({"schema_version": 1, "fits": true})", "p.json"); },
      "p.json: device is missing");
  doc_test::expect_data_error(
      [] {
        parse_plan_doc(R"({"schema_version": 1, "device": {}, "peak_bytes": "x", "fits": true,
          "techniques": []})",
                       "q.json");
      },
      "q.json: peak_bytes is \"x\"");
  doc_test::expect_data_error([] { parse_plan_doc(R"({"schema_version": 99})", "r.json"); },
                              "r.json");
}

// docs/plan_json.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(PlanDocFile, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = plan_doc_fields_doc();
  doc_test::expect_committed_doc("plan_json.md", generated);
  for (const char* field : {"`techniques[].step_ms`", "`calibration_ratio`", "`device.source`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
