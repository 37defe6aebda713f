// What a training run measured against its plan: c10's CPU allocator reports (or the CUDA
// caching allocator's statistics) from before the model is built, read at the phase boundaries
// of the first two steps. Step 1 gives the optimizer state (created by its first step) and step 2,
// the first steady step, gives gradients, the bytes saved for backward and the step's peak with
// its phase. Installed for the whole run (the profiler's own reporter nests above it); after
// step 2 it turns c10's bookkeeping off, so the steps the summary's statistics use (after
// profile.warmup_steps >= 2) do not pay for it. On a device with a caching allocator (CUDA) nothing
// is installed: the allocator keeps its statistics anyway (read through llmprof/device/memory.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/rundir/participant.h"

namespace at {
class Tensor;
}
namespace llmprof::config {
struct Config;
struct Device;
}

namespace llmprof::plan {

// Measured figures in bytes; nullopt where not measured (the reason says why).
struct Measured {
  std::optional<int64_t> parameters, buffers, gradients, optimizer_state;
  std::optional<int64_t> forward_end;  // live at the end of the forward above its start
  std::optional<int64_t> peak;         // model states at the step's start + its rise above them
  std::optional<int64_t> peak_reserved;  // cuda: the caching allocator's reserved peak
  std::string peak_phase;              // forward | backward | optimizer | data
  int64_t measured_step = 0;           // the step the peak is from
  std::optional<int64_t> unmodelled;   // cpu: peak RSS minus c10's live bytes at its peak
  std::string source;                  // "c10 CPU allocator reports" | "CUDA caching allocator"
  std::string reason;                  // when nothing was measured
};

// A participant of the step (llmprof/rundir/participant.h): Session::add_participant. At the end
// it gives summary.json its "plan" section: the plan of the run's config against what it measured.
class MemoryProbe : public rundir::RunParticipant {
 public:
  // Installs the reporter now (call before the model is built). On a device with a caching
  // allocator (cuda) it is read instead; LLMPROF_CUDA_MEMORY_FRACTION (0 < f <= 1) caps the
  // process's share of the device, as torch.cuda.set_per_process_memory_fraction.
  // LLMPROF_PLAN_PROBE=off turns it off.
  explicit MemoryProbe(const config::Device& device);
  ~MemoryProbe() override;
  MemoryProbe(const MemoryProbe&) = delete;
  MemoryProbe& operator=(const MemoryProbe&) = delete;

  // The model's parameters and buffers (after the model is built and moved to its device).
  void set_model(const std::vector<at::Tensor>& parameters, const std::vector<at::Tensor>& buffers);
  // The config the run trains, planned at the end (vocab_size: the tokenizer's when
  // model.vocab_size is 0); without it, finish adds no section.
  void plan_against(const config::Config& cfg, int64_t vocab_size);
  std::string_view name() const override { return "memory probe"; }
  // Around each step, numbered from 1.
  void before_step(int64_t step) override;
  void after_step(const profile::StepRecord& record) override;
  void on_phase_begin(profile::Phase phase) override;
  void on_phase_end(profile::Phase phase) override;
  // summary.json "plan": reconcile(cfg, vocab_size, cuda, measured(), the environment's CUDA
  // allocator).
  rundir::RunFigures finish(const rundir::RunEnd& end) override;

  Measured measured() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmprof::plan
