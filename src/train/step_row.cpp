#include "step_row.h"

#include <cmath>

namespace llmprof::train {

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
  f.energy_j = r.energy_j;
  f.avg_power_w = r.avg_power_w;
  if (r.energy_j) f.energy_estimated = r.energy_estimated ? 1.0 : 0.0;
  return f;
}

}  // namespace llmprof::train
