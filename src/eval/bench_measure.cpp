#include "bench_measure.h"

#include <algorithm>
#include <cmath>
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

CallTimer::CallTimer(gpu::EventApi* events) {
  if (events != nullptr) span_.emplace(*events);
}

void CallTimer::start() {
  if (span_) {
    span_->begin();
  } else {
    t0_ = now_ns();
  }
}

double CallTimer::stop_ms() {
  if (!span_) return to_ms(now_ns() - t0_);
  span_->end();
  return span_->resolve().value_or(NAN);  // sync: the call's end on the device, before the next
}

std::vector<double> time_forward(train::Task& task,
                                 const std::vector<train::Batch>& batches,
                                 const device::Autocast& autocast,
                                 gpu::EventApi* events,
                                 int64_t warmup_iters,
                                 int64_t iters) {
  const auto n = static_cast<int64_t>(batches.size());
  InferenceScope inference;
  task.module().eval();
  std::vector<double> ms(static_cast<size_t>(iters));
  CallTimer timer(events);
  torch::Tensor out;
  for (int64_t i = 0; i < warmup_iters + iters; ++i) {
    out = torch::Tensor();  // free the previous logits outside the timed region
    timer.start();
    {
      // Its weight-cast cache is cleared per call.
      model::AutocastScope scope(autocast.device_type, autocast.dtype, autocast.on);
      out = task.logits(batches[static_cast<size_t>(i % n)]);
    }
    const double call_ms = timer.stop_ms();
    if (i >= warmup_iters) ms[static_cast<size_t>(i - warmup_iters)] = call_ms;
  }
  return ms;
}

GenerateTimes time_generate(model::Decoder& gpt,
                            const torch::Tensor& prompt,
                            int64_t new_tokens,
                            const device::Autocast& autocast,
                            gpu::EventApi* events,
                            int64_t warmup,
                            int64_t reps) {
  InferenceScope inference;
  gpt.module().eval();
  const int64_t B = prompt.size(0), P = prompt.size(1);
  // One cache for every repetition: resetting length reuses its buffers (B, nh, P + n, hs).
  model::KvCache cache = gpt.make_cache(B, P + new_tokens);
  const int64_t steps = new_tokens - 1;  // decode steps after the first token
  GenerateTimes out;
  out.ttft_ms.resize(static_cast<size_t>(reps));
  out.step_ms.resize(static_cast<size_t>(reps * steps));
  CallTimer timer(events);
  torch::Tensor next;  // (B, 1) int64: the token fed back
  for (int64_t r = 0; r < warmup + reps; ++r) {
    const bool timed = r >= warmup;
    const int64_t rep = r - warmup;
    cache.length = 0;
    next = torch::Tensor();
    // Prefill: the prompt's P positions in one call; the first new token is the argmax of the
    // last position's logits (B, V).
    timer.start();
    {
      model::AutocastScope scope(autocast.device_type, autocast.dtype, autocast.on);
      const torch::Tensor logits = gpt.forward_cached(prompt, cache);  // (B, P, V)
      next = logits.select(1, P - 1).argmax(-1, /*keepdim=*/true);     // (B, 1)
    }
    const double ttft_ms = timer.stop_ms();
    if (timed) out.ttft_ms[static_cast<size_t>(rep)] = ttft_ms;
    // Decode: one token per call, attending over the cached keys/values.
    for (int64_t s = 0; s < steps; ++s) {
      timer.start();
      {
        model::AutocastScope scope(autocast.device_type, autocast.dtype, autocast.on);
        const torch::Tensor logits = gpt.forward_cached(next, cache);  // (B, 1, V)
        next = logits.select(1, 0).argmax(-1, /*keepdim=*/true);       // (B, 1)
      }
      const double step_ms = timer.stop_ms();
      if (timed) out.step_ms[static_cast<size_t>(rep * steps + s)] = step_ms;
    }
  }
  return out;
}

}  // namespace llmprof::eval
