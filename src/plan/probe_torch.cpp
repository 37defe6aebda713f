// plan::MemoryProbe (llmprof/plan/probe.h). On the CPU, c10's allocator calls
// reportMemoryUsage with its running total of live bytes for every allocation and free on a
// thread whose PROFILER_STATE debug info enables memory profiling (torch.profiler's
// profile_memory mechanism); the total counts what was allocated while reporting was on, so the
// reporter is installed before the model is built. On a device with a caching allocator (CUDA)
// its statistics (allocated and reserved, current and peak: device/memory.h) are read at phase
// boundaries.
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <dlfcn.h>
#include <sys/resource.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "llmprof/config/config.h"
#include "llmprof/device/device.h"
#include "llmprof/device/memory.h"
#include "llmprof/plan/plan.h"
#include "llmprof/plan/probe.h"

namespace llmprof::plan {

namespace {

#if TORCH_VERSION_MAJOR >= 2
using AllocatorTotal = size_t;
#else
using AllocatorTotal = int64_t;
#endif

// Receives c10's CPU allocation reports: the live total, its peak and the phase at the peak.
// Called per allocation: no lock, no allocation.
class Reporter : public c10::MemoryReportingInfoBase {
 public:
  // Off after the measured steps: c10 then skips its bookkeeping (a lock and a hash-map insert per
  // allocation: +10-15% on tiny_test.yaml's 3 ms step while on).
  bool memoryProfilingEnabled() const override { return on_.load(std::memory_order_relaxed); }
  void reportOutOfMemory(int64_t, AllocatorTotal, AllocatorTotal, c10::Device) override {}
  void reportMemoryUsage(void*, int64_t, AllocatorTotal total, AllocatorTotal,
                         c10::Device device) override {
    if (!device.is_cpu()) return;
    const auto t = static_cast<int64_t>(total);
    total_.store(t, std::memory_order_relaxed);
    if (t > peak_) {
      peak_ = t;
      peak_phase_ = phase_;
    }
  }
  int64_t total() const { return total_.load(std::memory_order_relaxed); }
  void reset_peak() {
    peak_ = total();
    peak_phase_ = phase_;
  }
  std::atomic<int64_t> total_{0};
  std::atomic<bool> on_{true};
  int64_t peak_ = 0;
  int peak_phase_ = -1;
  int phase_ = -1;
};

// c10's CPU allocator warns (glog) about every free of a block allocated before reporting began
// (the loader threads' batches): expected, so glog's threshold is raised while the probe lives.
int32_t* glog_min_level() {
  return static_cast<int32_t*>(dlsym(RTLD_DEFAULT, "_ZN3fLI17FLAGS_minloglevelE"));
}

int64_t tensor_bytes(const at::Tensor& t) {
  return t.defined() ? static_cast<int64_t>(t.numel()) * static_cast<int64_t>(t.element_size())
                     : 0;
}

int64_t max_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

}  // namespace

struct MemoryProbe::Impl {
  bool enabled = true, cuda = false;  // cuda: the device's caching allocator keeps the books
  config::Device device;
  std::shared_ptr<Reporter> reporter = std::make_shared<Reporter>();
  std::optional<c10::DebugInfoGuard> guard;
  int32_t* glog = nullptr;
  int32_t glog_saved = 0;
  std::vector<at::Tensor> params;
  std::optional<config::Config> planned;  // plan_against's config
  int64_t vocab_size = 0;
  Measured m;
  int64_t step = 0;
  int64_t opt_begin_live = 0, grads_step1 = 0, step_start_live = 0, fwd_start_live = 0;
  int64_t phase_peak[5] = {0, 0, 0, 0, 0};

  // Live bytes now: c10's CPU total, or the caching allocator's allocated bytes.
  int64_t live() const {
    if (cuda) return allocator().allocated_bytes;
    return reporter->total();
  }
  device::DeviceMemory allocator() const {
    return device::allocator_memory(device).value_or(device::DeviceMemory{});
  }
  int64_t grad_bytes() const {
    int64_t b = 0;
    for (const auto& p : params) b += tensor_bytes(p.grad());
    return b;
  }
};

MemoryProbe::MemoryProbe(const config::Device& device) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  const char* off = std::getenv("LLMPROF_PLAN_PROBE");
  m.enabled = off == nullptr || std::strcmp(off, "off") != 0;
  m.cuda = device::capabilities(device).caching_allocator;
  m.device = device;
  m.m.source = m.cuda ? "CUDA caching allocator statistics" : "c10 CPU allocator reports";
  if (!m.enabled) {
    m.m.reason = "LLMPROF_PLAN_PROBE=off";
    return;
  }
  if (!m.cuda) {
    m.glog = glog_min_level();
    if (m.glog != nullptr) {
      m.glog_saved = *m.glog;
      *m.glog = std::max(m.glog_saved, 2);
    }
    m.guard.emplace(c10::DebugInfoKind::PROFILER_STATE, m.reporter);
  }
}

MemoryProbe::~MemoryProbe() {
  Impl& m = *impl_;
  m.guard.reset();
  if (m.glog != nullptr) *m.glog = m.glog_saved;
}

void MemoryProbe::set_model(const std::vector<at::Tensor>& parameters,
                            const std::vector<at::Tensor>& buffers) {
  Impl& m = *impl_;
  m.params = parameters;
  int64_t p = 0, b = 0;
  for (const auto& t : parameters) p += tensor_bytes(t);
  for (const auto& t : buffers) b += tensor_bytes(t);
  m.m.parameters = p;
  m.m.buffers = b;
  // After the model is on the device: CUDA's allocator is initialised by then.
  if (const char* f = std::getenv("LLMPROF_CUDA_MEMORY_FRACTION"); m.cuda && m.enabled && f != nullptr) {
    const double fraction = std::atof(f);
    if (fraction > 0 && fraction <= 1) device::set_allocator_fraction(m.device, fraction);
  }
}

void MemoryProbe::before_step(int64_t step) {
  Impl& m = *impl_;
  m.step = step;
  if (!m.enabled || step != 2) return;
  m.step_start_live = m.live();
  m.reporter->reset_peak();
  std::fill(std::begin(m.phase_peak), std::end(m.phase_peak), int64_t{0});
  device::reset_allocator_peak(m.device);
}

void MemoryProbe::on_phase_begin(profile::Phase phase) {
  Impl& m = *impl_;
  m.reporter->phase_ = static_cast<int>(phase);
  if (!m.enabled || m.step < 1 || m.step > 2) return;
  if (phase == profile::Phase::kOptimizer) {
    const int64_t g = m.grad_bytes();
    if (m.step == 1) {
      m.opt_begin_live = m.live();
      m.grads_step1 = g;
    } else {
      m.m.gradients = g;
    }
  }
  if (m.step != 2) return;
  if (phase == profile::Phase::kForward) m.fwd_start_live = m.live();
  if (phase == profile::Phase::kBackward) m.m.forward_end = m.live() - m.fwd_start_live;
  device::reset_allocator_peak(m.device);
}

void MemoryProbe::on_phase_end(profile::Phase phase) {
  Impl& m = *impl_;
  if (!m.enabled) return;
  // Step 1's optimizer phase creates the state and frees the gradients (set to None).
  if (m.step == 1 && phase == profile::Phase::kOptimizer) {
    m.m.optimizer_state = m.live() - m.opt_begin_live + m.grads_step1;
  }
  if (m.cuda && m.step == 2 && static_cast<int>(phase) < 5) {
    const device::DeviceMemory s = m.allocator();
    auto& slot = m.phase_peak[static_cast<int>(phase)];
    slot = std::max(slot, s.peak_allocated_bytes);
    m.m.peak_reserved = std::max(m.m.peak_reserved.value_or(0), s.peak_reserved_bytes);
  }
  m.reporter->phase_ = -1;
}

void MemoryProbe::after_step(const profile::StepRecord& record) {
  Impl& m = *impl_;
  const int64_t step = record.step;
  if (!m.enabled || step != 2) return;
  m.reporter->on_.store(false, std::memory_order_relaxed);
  const int64_t states = m.m.parameters.value_or(0) + m.m.buffers.value_or(0) +
                         m.m.optimizer_state.value_or(0);
  static constexpr const char* kNames[] = {"data", "forward", "backward", "optimizer", "eval"};
  int64_t peak_abs = m.reporter->peak_;
  int phase = m.reporter->peak_phase_;
  if (m.cuda) {
    phase = 0;
    for (int p = 0; p < 5; ++p) {
      if (m.phase_peak[p] > m.phase_peak[phase]) phase = p;
    }
    peak_abs = m.phase_peak[phase];
  } else {
    m.m.unmodelled = max_rss_bytes() - peak_abs;
  }
  m.m.peak = states + (peak_abs - m.step_start_live);
  m.m.peak_phase = phase >= 0 && phase < 5 ? kNames[phase] : "between phases";
  m.m.measured_step = 2;
}

void MemoryProbe::plan_against(const config::Config& cfg, int64_t vocab_size) {
  impl_->planned = cfg;
  impl_->vocab_size = vocab_size;
}

rundir::RunFigures MemoryProbe::finish(const rundir::RunEnd&) {
  rundir::RunFigures f;
  if (!impl_->planned) return f;
  const config::Config& cfg = *impl_->planned;
  f.plan = reconcile(cfg, impl_->vocab_size, device::capabilities(cfg.device).caching_allocator, measured(),
                     cuda_allocator_from_env());
  return f;
}

Measured MemoryProbe::measured() const {
  Measured r = impl_->m;
  if (r.reason.empty() && r.measured_step == 0) {
    r.reason = "the run ended before its second step (the first steady step)";
  }
  return r;
}

}  // namespace llmprof::plan
