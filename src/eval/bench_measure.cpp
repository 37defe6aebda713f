#include "bench_measure.h"

#include <algorithm>
#include <numeric>

#include "llmprof/base/clock.h"
#include "llmprof/eval/bench.h"
#include "llmprof/model/autocast.h"
#include "llmprof/profile/stats.h"

namespace llmprof::eval {

namespace {

double to_ms(int64_t ns) { return static_cast<double>(ns) * 1e-6; }

}  // namespace

LatencyStats latency_stats(std::vector<double> times_ms) {
  LatencyStats s;
  if (times_ms.empty()) return s;
  std::sort(times_ms.begin(), times_ms.end());
  s.n = static_cast<int64_t>(times_ms.size());
  s.mean_ms = std::accumulate(times_ms.begin(), times_ms.end(), 0.0) / static_cast<double>(s.n);
  s.p50_ms = profile::quantile_sorted(times_ms, 0.50);
  s.p90_ms = profile::quantile_sorted(times_ms, 0.90);
  s.p95_ms = profile::quantile_sorted(times_ms, 0.95);
  s.p99_ms = profile::quantile_sorted(times_ms, 0.99);
  s.max_ms = times_ms.back();
  return s;
}

std::vector<double> time_forward(train::Task& task,
                                 const std::vector<train::Batch>& batches,
                                 bool bf16,
                                 int64_t warmup_iters,
                                 int64_t iters) {
  const auto n = static_cast<int64_t>(batches.size());
  InferenceScope inference;
  task.module().eval();
  std::vector<int64_t> ticks_ns(static_cast<size_t>(iters));
  torch::Tensor out;
  for (int64_t i = 0; i < warmup_iters + iters; ++i) {
    out = torch::Tensor();  // free the previous logits outside the timed region
    const int64_t t0 = now_ns();
    {
      model::CpuAutocastScope autocast(bf16);  // its weight-cast cache is cleared per call
      out = task.logits(batches[static_cast<size_t>(i % n)]);
    }
    // CPU kernels have finished when logits() returns; a CUDA path would need a
    // torch::cuda::synchronize() here (sync:) before reading the clock.
    const int64_t t1 = now_ns();
    if (i >= warmup_iters) ticks_ns[static_cast<size_t>(i - warmup_iters)] = t1 - t0;
  }
  std::vector<double> ms(ticks_ns.size());
  std::transform(ticks_ns.begin(), ticks_ns.end(), ms.begin(), to_ms);
  return ms;
}

GenerateTimes time_generate(model::GptImpl& gpt,
                            const torch::Tensor& prompt,
                            int64_t new_tokens,
                            bool bf16,
                            int64_t warmup,
                            int64_t reps) {
  InferenceScope inference;
  gpt.eval();
  const int64_t B = prompt.size(0), P = prompt.size(1);
  // One cache for every repetition: resetting length reuses its buffers (B, nh, P + n, hs).
  model::KvCache cache = gpt.make_cache(B, P + new_tokens);
  const int64_t steps = new_tokens - 1;  // decode steps after the first token
  std::vector<int64_t> ttft_ns(static_cast<size_t>(reps));
  std::vector<int64_t> step_ns(static_cast<size_t>(reps * steps));
  torch::Tensor next;  // (B, 1) int64: the token fed back
  for (int64_t r = 0; r < warmup + reps; ++r) {
    const bool timed = r >= warmup;
    const int64_t rep = r - warmup;
    cache.length = 0;
    next = torch::Tensor();
    // Prefill: the prompt's P positions in one call; the first new token is the argmax of the
    // last position's logits (B, V).
    int64_t t0 = now_ns();
    {
      model::CpuAutocastScope autocast(bf16);
      const torch::Tensor logits = gpt.forward_cached(prompt, cache);  // (B, P, V)
      next = logits.select(1, P - 1).argmax(-1, /*keepdim=*/true);     // (B, 1)
    }
    // CPU: synchronous, no sync needed before the clock read (CUDA would need one here).
    int64_t t1 = now_ns();
    if (timed) ttft_ns[static_cast<size_t>(rep)] = t1 - t0;
    // Decode: one token per call, attending over the cached keys/values.
    for (int64_t s = 0; s < steps; ++s) {
      t0 = now_ns();
      {
        model::CpuAutocastScope autocast(bf16);
        const torch::Tensor logits = gpt.forward_cached(next, cache);  // (B, 1, V)
        next = logits.select(1, 0).argmax(-1, /*keepdim=*/true);       // (B, 1)
      }
      t1 = now_ns();
      if (timed) step_ns[static_cast<size_t>(rep * steps + s)] = t1 - t0;
    }
  }
  GenerateTimes out;
  out.ttft_ms.resize(ttft_ns.size());
  out.step_ms.resize(step_ns.size());
  std::transform(ttft_ns.begin(), ttft_ns.end(), out.ttft_ms.begin(), to_ms);
  std::transform(step_ns.begin(), step_ns.end(), out.step_ms.begin(), to_ms);
  return out;
}

}  // namespace llmprof::eval
