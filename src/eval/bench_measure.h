// The timed loops of llmprof bench: forward passes over a few fixed batches, and greedy generation with
// the decoder's KV cache. On the CPU both read the steady clock around each call (its kernels have
// finished when the call returns); on a CUDA device two events around each call on the current
// stream, the host waiting for the second before the next call. Internal to src/eval.
#pragma once

#include <torch/torch.h>
#include <torch/version.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "llmprof/device/context.h"
#include "llmprof/gpu/event_pool.h"
#include "llmprof/model/gpt.h"
#include "llmprof/train/task.h"

namespace llmprof::eval {

// No autograd bookkeeping for the measured calls: NoGradGuard, plus InferenceMode where LibTorch
// has it (1.9+), which also skips version counters and view tracking, as torch.inference_mode().
// Tensors made inside (the KV cache) are inference tensors: use them inside such a scope only.
class InferenceScope {
 public:
  InferenceScope() = default;
  InferenceScope(const InferenceScope&) = delete;
  InferenceScope& operator=(const InferenceScope&) = delete;

 private:
  torch::NoGradGuard no_grad_;
#if TORCH_VERSION_MAJOR > 1 || (TORCH_VERSION_MAJOR == 1 && TORCH_VERSION_MINOR >= 9)
  c10::InferenceMode inference_;
#endif
};

// Times one call at a time: with events == nullptr the steady clock; else the call's span on the
// device through gpu::StepEventSpan, the session's step timer (two preallocated CUDA events around
// the call; sync: the host waits for the second before reading them, so calls do not overlap:
// each is one request's latency on the device, launch gaps included).
class CallTimer {
 public:
  explicit CallTimer(gpu::EventApi* events);
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;
  void start();
  double stop_ms();

 private:
  std::optional<gpu::StepEventSpan> span_;  // nullopt: the steady clock
  int64_t t0_ = 0;
};

// Per-call times (ms) of `iters` task.logits() calls after `warmup_iters` untimed ones, the
// model in eval mode; call i takes batches[i % n]. Distinct batches matter: oneDNN's int8 path in
// LibTorch 1.13 builds a new primitive for each new activation range, which one repeated batch
// would hide. autocast (the variant's) around each call; events: CallTimer's.
std::vector<double> time_forward(train::Task& task,
                                 const std::vector<train::Batch>& batches,
                                 const device::Autocast& autocast,
                                 gpu::EventApi* events,
                                 int64_t warmup_iters,
                                 int64_t iters);

struct GenerateTimes {
  std::vector<double> ttft_ms;  // per generation: prefill of the prompt + argmax of its last token
  std::vector<double> step_ms;  // every decode step of every timed generation
};

// Greedy generation of new_tokens after prompt (B, P) with a KV cache of P + new_tokens,
// `warmup` untimed generations and then `reps` timed ones; autocast per call, events as above.
GenerateTimes time_generate(model::Decoder& gpt,
                            const torch::Tensor& prompt,
                            int64_t new_tokens,
                            const device::Autocast& autocast,
                            gpu::EventApi* events,
                            int64_t warmup,
                            int64_t reps);

}  // namespace llmprof::eval
