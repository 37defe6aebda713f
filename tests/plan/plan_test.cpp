// llmprof plan: closed forms, component sums, hand-counted activations, the allocator's rounding,
// the device table and bad input (torch-free: the planner alone).
#include "llmprof/plan/plan.h"

#include <gtest/gtest.h>

#include <numeric>

#include "llmprof/config/config.h"
#include "llmprof/error.h"
#include "llmprof/plan/device.h"
#include "ops.h"

namespace llmprof::plan {
namespace {

config::Config gpt(int64_t L, int64_t C, int64_t H, int64_t T, int64_t V, int64_t B) {
  config::Config c;
  c.model.n_layer = L;
  c.model.n_embd = C;
  c.model.n_head = H;
  c.model.block_size = T;
  c.model.vocab_size = V;
  c.train.batch_size = B;
  return c;
}

TEST(ModelStateBytes, SixteenBytesPerParameterForMixedPrecisionAdam) {
  // ZeRO paper, Figure 1: 7.5B parameters, 64 ranks, K = 12: 120 GB, 31.4, 16.6, 1.88 GB.
  const int64_t P = 7500000000;
  EXPECT_EQ(model_state_bytes(P, Sharding::kNone, 64), 120000000000);
  EXPECT_EQ(model_state_bytes(P, Sharding::kZero1, 64), 30000000000 + 1406250000);
  EXPECT_EQ(model_state_bytes(P, Sharding::kZero2, 64), 15000000000 + 1640625000);
  EXPECT_EQ(model_state_bytes(P, Sharding::kZero3, 64), 1875000000);
}

TEST(PlanMemory, ModelStatesOfBf16AdamwAreSixteenBytesPerParameter) {
  config::Config c = gpt(2, 64, 4, 32, 100, 2);
  c.train.precision = config::Precision::kBf16;
  const MemoryPlan m = plan_memory(c, {});
  EXPECT_EQ(m.parameter_bytes + m.gradient_bytes + m.optimizer_state_bytes, 16 * m.parameters);
  EXPECT_EQ(m.parameter_bytes + m.gradient_bytes + m.optimizer_state_bytes,
            model_state_bytes(m.parameters, Sharding::kNone, 1));
}

TEST(PlanMemory, ParametersOfGpt2SmallAre124M) {
  // GPT-2 small with wpe of 1024 rows and the tied lm_head: 124,439,808 (nanoGPT's count).
  const MemoryPlan m = plan_memory(gpt(12, 768, 12, 1024, 50257, 1), {});
  EXPECT_EQ(m.parameters, 124439808);
}

TEST(PlanMemory, ComponentsSumToThePeak) {
  for (bool ckpt : {false, true}) {
    config::Config c = gpt(3, 48, 4, 24, 65, 5);
    c.train.activation_checkpointing = ckpt;
    const MemoryPlan m = plan_memory(c, {});
    EXPECT_EQ(std::accumulate(m.component_bytes.begin(), m.component_bytes.end(), int64_t{0}),
              m.peak_bytes)
        << "checkpointing " << ckpt;
  }
}

TEST(PlanMemory, GptBlockSavesSixteenResidualWidthsPlusTheScoresInFp32) {
  // Per block, fp32, manual attention: x, ln_1 out, q, k, v copies, y, h, ln_2 out (8 NC), the
  // MLP's c_fc output and GELU output (2 x 4NC), block output (NC): 16 NC floats; LayerNorm mean
  // and rstd (4 N floats); softmax probabilities (B H T T floats). The block's input is counted
  // in the previous block (its output) so one block here holds 15 NC + its output.
  const int64_t B = 3, T = 16, C = 32, H = 4, N = B * T;
  const MemoryPlan m = plan_memory(gpt(2, C, H, T, 65, B), {});
  EXPECT_EQ(m.activations_per_block_bytes, 4 * (16 * N * C + 4 * N + B * H * T * T));
}

TEST(PlanMemory, CheckpointingKeepsOnlyBlockInputs) {
  const int64_t B = 2, T = 16, C = 32, N = B * T, L = 3;
  config::Config c = gpt(L, C, 4, T, 65, B);
  const MemoryPlan full = plan_memory(c, {});
  c.train.activation_checkpointing = true;
  const MemoryPlan ckpt = plan_memory(c, {});
  // Outside the blocks: embedding output (NC), ln_f mean/rstd (2N) and output (NC).
  const int64_t outside = 4 * (N * C + 2 * N + N * C);
  EXPECT_EQ(ckpt.activations_bytes, outside + L * 4 * N * C);
  EXPECT_EQ(full.activations_bytes, outside + L * full.activations_per_block_bytes);
}

TEST(PlanMemory, PeakMovesToTheOptimizerWhenParametersDominate) {
  // A large vocabulary and one sequence: the optimizer's all-gradients moment is the peak.
  const MemoryPlan m = plan_memory(gpt(1, 64, 4, 8, 30000, 1), {});
  EXPECT_EQ(m.peak_place.phase, "optimizer");
  const MemoryPlan small_vocab = plan_memory(gpt(1, 64, 4, 64, 65, 16), {});
  EXPECT_EQ(small_vocab.peak_place.phase, "backward");
}

TEST(CudaAllocator, RoundsBlocksTo512BytesAndSegmentsBySize) {
  EXPECT_EQ(cuda_block_bytes(1), 512);
  EXPECT_EQ(cuda_block_bytes(512), 512);
  EXPECT_EQ(cuda_block_bytes(513), 1024);
  EXPECT_EQ(cuda_segment_bytes(1 << 20), 2 << 20);           // small pool
  EXPECT_EQ(cuda_segment_bytes((1 << 20) + 512), 20 << 20);  // large, < 10 MiB
  EXPECT_EQ(cuda_segment_bytes(11 << 20), 12 << 20);         // rounded to 2 MiB
}

TEST(PlanMemory, CudaRoundsEveryTensorUp) {
  const config::Config c = gpt(1, 8, 2, 3, 5, 1);  // tensors far below 512 bytes
  const MemoryPlan cpu = plan_memory(c, {});
  PlanOptions o;
  o.cuda = true;
  const MemoryPlan cuda = plan_memory(c, o);
  EXPECT_GT(cuda.peak_bytes, cpu.peak_bytes);
  // Saved tensors are whole blocks (parameters are counted as one total, a few KiB low).
  EXPECT_EQ(cuda.activations_bytes % 512, 0);
}

TEST(LargestBatch, FitsAndTheNextDoesNot) {
  config::Config c = gpt(2, 64, 4, 64, 65, 1);
  const int64_t usable = 64 << 20;
  const int64_t b = largest_batch(c, {}, usable);
  ASSERT_GT(b, 0);
  c.train.batch_size = b;
  EXPECT_LE(plan_memory(c, {}).peak_reserved_bytes, usable);
  c.train.batch_size = b + 1;
  EXPECT_GT(plan_memory(c, {}).peak_reserved_bytes, usable);
}

TEST(FindDevice, UnknownNameListsTheKnownOnes) {
  try {
    find_device("tpu-v5");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tpu-v5"), std::string::npos) << what;
    for (const char* n : {"cpu", "cuda", "h100-80gb", "h200", "a100-40gb", "a100-80gb"}) {
      EXPECT_NE(what.find(n), std::string::npos) << n << " missing in: " << what;
    }
  }
}

TEST(FindDevice, AcceptsByteCountsAndTheTable) {
  EXPECT_EQ(find_device("40GiB").capacity_bytes, int64_t{40} << 30);
  EXPECT_EQ(find_device("24GB").capacity_bytes, 24000000000);
  EXPECT_EQ(find_device("1234").capacity_bytes, 1234);
  EXPECT_EQ(find_device("a100-40gb").capacity_bytes, int64_t{40} << 30);
  EXPECT_THROW(find_device("40XB"), UsageError);
  EXPECT_EQ(device_for_product("NVIDIA H100 80GB HBM3")->name, "h100-80gb");
  EXPECT_FALSE(device_for_product("Tesla T4").has_value());
}

TEST(FindDevice, AcceptsProductNamesInAnyCase) {
  EXPECT_EQ(find_device("H100").name, "h100-80gb");
  EXPECT_EQ(find_device("h200").name, "h200");
  EXPECT_EQ(find_device("A100-40GB").name, "a100-40gb");
  EXPECT_EQ(find_device("NVIDIA A100-SXM4-80GB").name, "a100-80gb");
  EXPECT_THROW(find_device("A100"), UsageError);  // 40 or 80 GB: the capacity decides
}

TEST(PlanMemory, UnmodelledKeyIsNamed) {
  config::Config c = gpt(1, 16, 2, 8, 10, 1);
  c.train.cuda_graphs = true;
  try {
    plan_memory(c, {});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "train.cuda_graphs");
  }
}

TEST(PlanMemory, UnknownVocabularyIsNamed) {
  config::Config c = gpt(1, 16, 2, 8, 0, 1);
  try {
    plan_memory(c, {});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "model.vocab_size");
  }
}

TEST(MakeReport, LlamaSevenBShapeOomsOnA100FortyUntilSharded) {
  // A 7B decoder shape (32 x 4096, vocab 32000, T 2048) in fp32 cannot fit 40 GB; the ZeRO
  // paper's ZeRO-3 row over 8 ranks brings model states to 16 x P / 8 bytes.
  config::Config c = gpt(32, 4096, 32, 2048, 32000, 1);
  c.model.bias = false;
  const PlanReport r = make_report(c, find_device("a100-40gb"), 0, 8);
  EXPECT_FALSE(r.fits);
  ASSERT_FALSE(r.techniques.empty());
  EXPECT_FALSE(r.techniques.front().fits);
  const TechniqueRow& z3 = r.techniques.end()[-2];  // the last: DeepSpeed's estimator
  EXPECT_EQ(z3.name, "+ ZeRO-3 / FSDP (world 8), ZeRO paper");
  EXPECT_TRUE(z3.predicted_only);
  EXPECT_EQ(z3.model_state_bytes, 16 * r.memory.parameters / 8);
  EXPECT_TRUE(r.step_ms.has_value());
}

TEST(LlamaGraph, SevenBHasItsPublishedParameterCount) {
  // LLaMA-7B: 32 x 4096, 32 heads, SwiGLU 11008, vocab 32000, untied head, no biases:
  // 2 V C + L (4 C^2 + 3 C F + 2 C) + C = 6,738,415,616 (Touvron et al. 2023, Table 2: 6.7B).
  detail::Shape s;
  s.B = 1, s.T = 2048, s.C = 4096, s.L = 32, s.H = 32, s.V = 32000, s.F = 11008;
  s.tie_embeddings = false;
  int64_t params = 0;
  for (const auto& op : detail::llama_graph(s, config::Config{}).ops) params += op.params;
  EXPECT_EQ(params, 6738415616);
}

TEST(LlamaGraph, GroupedQueryAttentionSavesNarrowerKeysAndValues) {
  // Manual core, fp32: q copy (N C) and k, v copies (N Ckv each) saved; Ckv = C / 4 with 4x GQA.
  detail::Shape s;
  s.B = 2, s.T = 8, s.C = 64, s.L = 1, s.H = 8, s.V = 10, s.F = 128;
  auto saved = [&](int64_t kv_heads) {
    s.kv_heads = kv_heads;
    int64_t b = 0;
    for (const auto& op : detail::llama_graph(s, config::Config{}).ops) b += op.saved;
    return b;
  };
  const int64_t N = s.B * s.T;
  EXPECT_EQ(saved(8) - saved(2), 2 * 4 * N * (64 - 16));
}

TEST(CudaAllocatorOf, FindsExpandableSegmentsAmongTheOptions) {
  EXPECT_EQ(cuda_allocator_of(""), CudaAllocator::kCaching);
  EXPECT_EQ(cuda_allocator_of("expandable_segments:True"), CudaAllocator::kExpandableSegments);
  EXPECT_EQ(cuda_allocator_of("max_split_size_mb:128, expandable_segments:True"),
            CudaAllocator::kExpandableSegments);
  EXPECT_EQ(cuda_allocator_of("expandable_segments:False"), CudaAllocator::kCaching);
  EXPECT_EQ(cuda_allocator_of("garbage_collection_threshold:0.6"), CudaAllocator::kCaching);
  EXPECT_EQ(allocator_name(CudaAllocator::kExpandableSegments), "expandable_segments");
}

// V 1000, C 64, T 64, B 4, bf16, fused loss: the largest tensor is the bf16 logits (or their
// gradient), 4 * 64 * 1000 * 2 = 512,000 bytes (LibTorch's loss: fp32 log-probs, 1,024,000),
// above the embedding's gradient (256,000) and the MLP's hidden activations (131,072).
TEST(PlanMemory, CudaReservedIsThePeakWithWorkspacesAndUnderCachingTheLargestTensor) {
  config::Config c = gpt(2, 64, 4, 64, 1000, 4);
  c.train.precision = config::Precision::kBf16;
  c.model.fused_loss = true;
  c.model.attention = config::Attention::kSdpa;
  PlanOptions o;
  o.cuda = true;
  o.allocator = CudaAllocator::kExpandableSegments;
  const MemoryPlan x = plan_memory(c, o);
  const int64_t two_mib = 2 << 20;
  const int64_t rounded = (x.peak_bytes + kCudaWorkspaceBytes + two_mib - 1) / two_mib * two_mib;
  EXPECT_EQ(x.largest_tensor_bytes, 512000);
  EXPECT_EQ(x.fragmentation_bytes, 0);
  EXPECT_EQ(x.peak_reserved_bytes, rounded);
  o.allocator = CudaAllocator::kCaching;
  const MemoryPlan k = plan_memory(c, o);
  EXPECT_EQ(k.peak_bytes, x.peak_bytes);  // the tensors are the allocator's either way
  EXPECT_EQ(k.fragmentation_bytes, 512000);
  EXPECT_EQ(k.peak_reserved_bytes, rounded + 512000);
  // train.cuda_expandable_segments plans as expandable segments whatever o.allocator says.
  c.train.cuda_expandable_segments = true;
  EXPECT_EQ(plan_memory(c, o).peak_reserved_bytes, x.peak_reserved_bytes);
  EXPECT_EQ(cuda_allocator_for(c, CudaAllocator::kCaching), CudaAllocator::kExpandableSegments);
  c.train.cuda_expandable_segments = false;
  EXPECT_EQ(cuda_allocator_for(c, CudaAllocator::kCaching), CudaAllocator::kCaching);
  c.model.fused_loss = false;
  EXPECT_EQ(plan_memory(c, o).largest_tensor_bytes, 1024000);
  // The CPU has no caching allocator: reserved is the peak.
  const MemoryPlan cpu = plan_memory(c, {});
  EXPECT_EQ(cpu.peak_reserved_bytes, cpu.peak_bytes);
  EXPECT_EQ(cpu.fragmentation_bytes, 0);
}

TEST(LargestBatch, TheCachingAllocatorsBoundFitsFewerThanExpandableSegments) {
  config::Config c = gpt(2, 64, 4, 64, 1000, 1);
  c.train.precision = config::Precision::kBf16;
  PlanOptions o;
  o.cuda = true;
  const int64_t usable = int64_t{200} << 20;
  o.allocator = CudaAllocator::kExpandableSegments;
  const int64_t x = largest_batch(c, o, usable);
  o.allocator = CudaAllocator::kCaching;
  const int64_t k = largest_batch(c, o, usable);
  EXPECT_GT(k, 0);
  EXPECT_LT(k, x);
  c.train.batch_size = k;
  EXPECT_LE(plan_memory(c, o).peak_reserved_bytes, usable);
  c.train.batch_size = k + 1;
  EXPECT_GT(plan_memory(c, o).peak_reserved_bytes, usable);
}

// RMSNorm saves rsqrt (N fp32) and the normalised x (N C fp32) on CUDA; on the CPU one more N C
// fp32 tensor (LibTorch 1.13). N = 2 x 64 = 128 tokens, C = 64: 512 + 32,768 (+ 32,768).
TEST(LlamaGraph, RmsNormSavesOneTensorLessOnCuda) {
  detail::Shape s;
  s.B = 2, s.T = 64, s.C = 64, s.L = 1, s.H = 4, s.V = 10, s.F = 128;
  auto rms_saved = [&](bool cuda) {
    s.cuda = cuda;
    for (const auto& op : detail::llama_graph(s, config::Config{}).ops) {
      if (op.module == "layers.0.input_layernorm") return op.saved;
    }
    return int64_t{-1};
  };
  EXPECT_EQ(rms_saved(false), 512 + 3 * 32768);  // fp32: its output saved by the next linear too
  EXPECT_EQ(rms_saved(true), 512 + 2 * 32768);
}

}  // namespace
}  // namespace llmprof::plan
