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
  // train.cuda_expandable_segments: the run gets expandable segments, so the plan has them
  // whatever the environment's allocator: no fragmentation, no row to add them.
  c.device.kind = config::DeviceKind::kCuda;
  c.train.cuda_expandable_segments = true;
  const PlanReport keyed = make_report(c, d, 0, 8, CudaAllocator::kCaching);
  EXPECT_EQ(keyed.allocator, CudaAllocator::kExpandableSegments);
  EXPECT_EQ(keyed.memory.fragmentation_bytes, 0);
  EXPECT_EQ(row(keyed, "+ expandable segments"), nullptr);
  EXPECT_EQ(row(keyed, "+ fused loss")->peak_bytes, expandable->peak_bytes);
  EXPECT_EQ(nlohmann::json::parse(report_json(keyed)).at("allocator"), "expandable_segments");
}

}  // namespace
}  // namespace llmprof::plan

namespace llmprof::plan {
namespace {

const TechniqueRow* find_row(const std::vector<TechniqueRow>& rows, const std::string& name) {
  for (const TechniqueRow& t : rows) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

config::Config llama(int64_t L, int64_t C, int64_t H, int64_t F, int64_t T, int64_t V, int64_t B) {
  config::Config c;
  c.model.type = config::ModelType::kLlama;
  c.model.n_layer = L;
  c.model.n_embd = C;
  c.model.n_head = H;
  c.model.intermediate_size = F;
  c.model.block_size = T;
  c.model.vocab_size = V;
  c.model.tie_embeddings = false;
  c.model.bias = false;
  c.train.batch_size = B;
  return c;
}

// Llama-2-7B at batch 1 on an A100 40GB (the lecture's case study).
const config::Config kSevenB = llama(32, 4096, 32, 11008, 2048, 32000, 1);
constexpr int64_t kSevenBParameters = 6738415616;

TEST(MakeReport, LlamaGetsTheCheckpointingAndSdpaRowsAsGptDoes) {
  for (const config::ModelType type : {config::ModelType::kGpt, config::ModelType::kLlama}) {
    config::Config c = llama(2, 64, 4, 176, 32, 64, 4);
    c.model.type = type;
    const PlanReport r = make_report(c, find_device("cpu"), 0, 8);
    EXPECT_NE(find_row(r.techniques, "+ activation checkpointing"), nullptr);
    EXPECT_NE(find_row(r.techniques, "+ sdpa attention"), nullptr);
    EXPECT_TRUE(r.table_notes.empty());
  }
  // The 7B shape: every unsharded row is out of memory, checkpointing cuts the activations from
  // 37.09 GiB (the fp32 baseline's activation peak) to the block inputs + one block recomputed.
  const PlanReport r = make_report(kSevenB, find_device("a100-40gb"), 0, 8);
  const TechniqueRow* ckpt = find_row(r.techniques, "+ activation checkpointing");
  const TechniqueRow* sdpa = find_row(r.techniques, "+ flash attention (sdpa)");
  ASSERT_NE(ckpt, nullptr);
  ASSERT_NE(sdpa, nullptr);
  EXPECT_LT(ckpt->activation_peak_bytes, r.techniques.front().activation_peak_bytes / 10);
  EXPECT_LT(sdpa->activation_peak_bytes, ckpt->activation_peak_bytes);
}

TEST(MakeReport, DistilbertNamesTheRowsItHasNot) {
  config::Config c;
  c.model.type = config::ModelType::kDistilbert;
  c.train.task = config::TaskKind::kMlm;
  c.model.n_layer = 1;
  c.model.n_embd = 32;
  c.model.n_head = 4;
  c.model.block_size = 16;
  c.model.vocab_size = 100;
  c.train.batch_size = 2;
  const PlanReport r = make_report(c, find_device("cpu"), 0, 8);
  EXPECT_EQ(find_row(r.techniques, "+ activation checkpointing"), nullptr);
  ASSERT_EQ(r.table_notes.size(), 1u);
  EXPECT_NE(r.table_notes[0].find("DistilBERT"), std::string::npos);
}

TEST(DeepspeedModelStateBytes, AreTheEstimatorsClosedForms) {
  // 7.5B parameters, 64 ranks, a largest layer of 0.2B: ZeRO-2 4P + 16P/N = 30 + 1.875 GB;
  // ZeRO-3 4 x 0.2B + 18P/N = 0.8 + 2.109375 GB. ZeRO-1 has no estimator: the paper's.
  const int64_t P = 7500000000, largest = 200000000;
  EXPECT_EQ(deepspeed_model_state_bytes(P, largest, Sharding::kZero2, 64), 31875000000);
  EXPECT_EQ(deepspeed_model_state_bytes(P, largest, Sharding::kZero3, 64), 2909375000);
  EXPECT_EQ(deepspeed_model_state_bytes(P, largest, Sharding::kZero1, 64),
            model_state_bytes(P, Sharding::kZero1, 64));
}

TEST(MakeReport, ShardedRowsNameTheirSourceAndShowBothWhereTheyDiffer) {
  const PlanReport r = make_report(kSevenB, find_device("a100-40gb"), 0, 8);
  const TechniqueRow* z2p = find_row(r.techniques, "+ ZeRO-2 (world 8), ZeRO paper");
  const TechniqueRow* z2d = find_row(r.techniques, "+ ZeRO-2 (world 8), DeepSpeed estimator");
  const TechniqueRow* z3p = find_row(r.techniques, "+ ZeRO-3 / FSDP (world 8), ZeRO paper");
  const TechniqueRow* z3d =
      find_row(r.techniques, "+ ZeRO-3 / FSDP (world 8), DeepSpeed estimator");
  ASSERT_TRUE(z2p && z2d && z3p && z3d);
  const int64_t P = kSevenBParameters, embedding = 32000 * 4096;  // the largest layer
  EXPECT_EQ(z2p->model_state_bytes, 2 * P + 14 * P / 8);
  EXPECT_EQ(z2d->model_state_bytes, 4 * P + 16 * P / 8);
  EXPECT_EQ(z3p->model_state_bytes, 16 * P / 8);
  EXPECT_EQ(z3d->model_state_bytes, 4 * embedding + 18 * P / 8);
  EXPECT_EQ(z2d->source, StateFormula::kDeepSpeedEstimator);
  EXPECT_EQ(z3p->source, StateFormula::kZeroPaper);
  EXPECT_EQ(z3d->formula, "4 x largest layer + 18P/N");
  // Beside its states a rank holds the same bytes under either formula.
  EXPECT_EQ(z2d->peak_bytes - z2d->model_state_bytes, z2p->peak_bytes - z2p->model_state_bytes);
  const nlohmann::json j = nlohmann::json::parse(report_json(r));
  bool labelled = false;
  for (const auto& row : j.at("techniques")) {
    labelled |= row.at("model_state_source") == "DeepSpeed estimator";
  }
  EXPECT_TRUE(labelled);
}

TEST(MakeReport, WithoutOptimizerStateTheLecturesRowsHoldWeightsAndGradientsBesideAdamw) {
  const DeviceSpec a100 = find_device("a100-40gb");
  const PlanReport none =
      make_report(kSevenB, a100, 0, 8, CudaAllocator::kCaching, OptimizerStates::kNone);
  // The lecture's 52 GB baseline: 8 bytes per parameter, fp32 weights and gradients.
  EXPECT_EQ(none.memory.parameter_bytes + none.memory.gradient_bytes, 8 * kSevenBParameters);
  EXPECT_EQ(none.memory.optimizer_state_bytes, 0);
  ASSERT_EQ(none.adamw_techniques.size(), none.techniques.size());
  for (size_t i = 0; i < none.techniques.size(); ++i) {
    EXPECT_EQ(none.techniques[i].name, none.adamw_techniques[i].name);
    EXPECT_FALSE(none.techniques[i].predicted_only) << none.techniques[i].name;
  }
  // Checkpointed, AdamW's peak is at the optimizer: 4 + 4 + 8 bytes per parameter (the bf16
  // copies are freed by then); without optimizer state at most the weights and gradients.
  const TechniqueRow* n = find_row(none.techniques, "+ activation checkpointing");
  const TechniqueRow* a = find_row(none.adamw_techniques, "+ activation checkpointing");
  ASSERT_TRUE(n && a);
  EXPECT_EQ(a->model_state_bytes, 16 * kSevenBParameters);
  EXPECT_LE(n->model_state_bytes, 8 * kSevenBParameters + 2 * kSevenBParameters);
  for (size_t i = 0; i < none.techniques.size(); ++i) {
    EXPECT_LT(none.techniques[i].peak_bytes, none.adamw_techniques[i].peak_bytes);
  }
  const PlanReport adamw = make_report(kSevenB, a100, 0, 8);
  EXPECT_TRUE(adamw.adamw_techniques.empty());
  EXPECT_EQ(adamw.memory.optimizer_state_bytes, 8 * kSevenBParameters);
}

TEST(MakeReport, CheckpointedRowsShowTheActivationPeakBesideWhatThePeakHolds) {
  // From checkpointing on the 7B peak is the optimizer's: no activations held there, but the
  // step's activation peak is the block inputs and one recomputed block.
  const PlanReport r = make_report(kSevenB, find_device("a100-40gb"), 0, 8);
  const TechniqueRow* ckpt = find_row(r.techniques, "+ activation checkpointing");
  ASSERT_NE(ckpt, nullptr);
  EXPECT_EQ(ckpt->activation_bytes, 0);
  // At least the 32 blocks' fp32 inputs, (1 x 2048 x 4096) x 4 bytes each: 1 GiB.
  EXPECT_GE(ckpt->activation_peak_bytes, int64_t{32} * 2048 * 4096 * 4);
  const TechniqueRow& base = r.techniques.front();
  EXPECT_EQ(base.activation_peak_bytes, r.memory.activation_peak_bytes);
  EXPECT_GE(base.activation_peak_bytes, base.activation_bytes);
}

TEST(BytesText, ShowsTheValueInTheUnitThatHoldsIt) {
  EXPECT_EQ(bytes_text(0), "0 B");
  EXPECT_EQ(bytes_text(512), "512 B");
  EXPECT_EQ(bytes_text(32768), "32.0 KiB");  // was "0.0 MiB"
  EXPECT_EQ(bytes_text(3 << 19), "1.5 MiB");
  EXPECT_EQ(bytes_text(int64_t{5} << 29), "2.50 GiB");
}

}  // namespace
}  // namespace llmprof::plan
