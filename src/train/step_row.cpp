#include "step_row.h"

#include <algorithm>
#include <cmath>

namespace llmprof::train {

std::optional<double> gpu_step_ms(const StepRow& r) {
  if (!r.gpu) return std::nullopt;
  if (r.gpu->step_ms) return r.gpu->step_ms;  // the step's own span, at every level
  if (r.gpu->intervals.empty()) return std::nullopt;
  double end = 0;
  for (const gpu::GpuPhaseInterval& i : r.gpu->intervals) {
    end = std::max(end, i.start_ms + i.duration_ms);  // start_ms counts from the first begin
  }
  return end;
}

rundir::StepRow file_row(const StepRow& r) {
  const double ms = step_ms(r);
  const double seconds = ms * 1e-3;
  const bool tokens_known = r.tokens > 0, flops_known = r.flops > 0;  // 0 = not told: null
  rundir::StepRow f;
  f.step = r.timing.step;
  f.loss = r.loss;
  f.lr = r.lr;
  if (!std::isnan(r.grad_norm)) f.grad_norm = r.grad_norm;
  if (tokens_known) {
    f.tokens = static_cast<double>(r.tokens);
    f.tokens_per_s = static_cast<double>(r.tokens) / seconds;
  }
  std::optional<double>* phase_ms[4] = {&f.data_ms, &f.forward_ms, &f.backward_ms,
                                        &f.optimizer_ms};
  for (int p = 0; p < 4; ++p) {  // null at profile.level=off, or a loop without this phase
    if (r.phases_timed && r.timing.phase_ns[p] > 0) {
      *phase_ms[p] = static_cast<double>(r.timing.phase_ns[p]) * 1e-6;
    }
  }
  f.step_ms = ms;
  if (r.gpu) {
    f.host_step_ms = host_step_ms(r);
    f.gpu_step_ms = gpu_step_ms(r);
    std::optional<double>* gpu_ms[4] = {&f.gpu_data_ms, &f.gpu_forward_ms, &f.gpu_backward_ms,
                                        &f.gpu_optimizer_ms};
    for (int p = 0; p < 4; ++p) *gpu_ms[p] = r.gpu->phase_ms[static_cast<size_t>(p)];
  }
  if (r.device_memory) {
    const device::DeviceMemory& m = *r.device_memory;
    f.device_peak_allocated_bytes = static_cast<double>(m.peak_allocated_bytes);
    f.device_reserved_bytes = static_cast<double>(m.reserved_bytes);
    f.device_free_reserved_bytes = static_cast<double>(m.free_reserved_bytes());
    f.device_alloc_retries = static_cast<double>(m.alloc_retries);
  }
  if (r.loss_scale) {
    f.loss_scale = r.loss_scale;
    f.step_skipped = r.step_skipped ? 1.0 : 0.0;
  }
  f.eval_ms = r.eval_ms;
  if (flops_known) {
    f.flops = r.flops;
    f.flops_per_s = r.flops / seconds;
    if (r.peak_flops_per_s > 0) f.mfu = r.flops / seconds / r.peak_flops_per_s;
  }
  f.minor_faults = static_cast<double>(r.rusage.minor_faults);
  f.major_faults = static_cast<double>(r.rusage.major_faults);
  f.voluntary_switches = static_cast<double>(r.rusage.voluntary_switches);
  f.involuntary_switches = static_cast<double>(r.rusage.involuntary_switches);
  f.cpu_ms = static_cast<double>(r.rusage.cpu_user_ns + r.rusage.cpu_system_ns) * 1e-6;
  f.max_rss_bytes = static_cast<double>(r.rusage.max_rss_bytes);
  return f;
}

}  // namespace llmprof::train
