#include "run_files.h"

#include <cmath>

namespace llmprof::train {

namespace {
std::vector<std::string> step_columns() {
  return {"step",          "loss",           "lr",
          "grad_norm",     "tokens",         "data_ms",
          "forward_ms",    "backward_ms",    "optimizer_ms",
          "step_ms",       "eval_ms",        "tokens_per_s",
          "flops",         "flops_per_s",    "mfu",
          "minor_faults",  "major_faults",   "voluntary_switches",
          "involuntary_switches", "cpu_ms",  "max_rss_bytes",
          "energy_j",      "avg_power_w",    "energy_estimated"};
}
}  // namespace

StepsCsv::StepsCsv(const std::string& path) : csv_(path, step_columns()) {}

void StepsCsv::write(const StepRow& r) {
  const double ms = step_ms(r);
  const double seconds = ms * 1e-3;
  csv_.add(r.timing.step).add(r.loss).add(r.lr);
  csv_.add(std::isnan(r.grad_norm) ? std::optional<double>() : std::optional<double>(r.grad_norm));
  const bool tokens_known = r.tokens > 0, flops_known = r.flops > 0;  // 0 = not told: null
  if (tokens_known) {
    csv_.add(r.tokens);
  } else {
    csv_.add_null();
  }
  for (int p = 0; p < 4; ++p) {  // data, forward, backward, optimizer
    if (r.phases_timed && r.timing.phase_ns[p] > 0) {
      csv_.add(static_cast<double>(r.timing.phase_ns[p]) * 1e-6);
    } else {
      csv_.add_null();  // profile.level=off, or a loop without this phase: not measured
    }
  }
  csv_.add(ms).add(r.eval_ms);
  csv_.add(tokens_known ? std::optional<double>(static_cast<double>(r.tokens) / seconds)
                        : std::nullopt);
  csv_.add(flops_known ? std::optional<double>(r.flops) : std::nullopt);
  csv_.add(flops_known ? std::optional<double>(r.flops / seconds) : std::nullopt);
  csv_.add(flops_known && r.peak_flops_per_s > 0
               ? std::optional<double>(r.flops / seconds / r.peak_flops_per_s)
               : std::optional<double>());
  csv_.add(r.rusage.minor_faults).add(r.rusage.major_faults);
  csv_.add(r.rusage.voluntary_switches).add(r.rusage.involuntary_switches);
  csv_.add(static_cast<double>(r.rusage.cpu_user_ns + r.rusage.cpu_system_ns) * 1e-6);
  csv_.add(r.rusage.max_rss_bytes);
  csv_.add(r.energy_j).add(r.avg_power_w);
  if (r.energy_j) {
    csv_.add(static_cast<int64_t>(r.energy_estimated ? 1 : 0));
  } else {
    csv_.add_null();
  }
  csv_.end_row();
}

EvalCsv::EvalCsv(const std::string& path)
    : csv_(path, {"step", "split", "loss", "perplexity", "accuracy", "eval_ms"}) {}

void EvalCsv::write(int64_t step, const std::string& split, double loss,
                    std::optional<double> accuracy, double eval_ms) {
  csv_.add(step).add(std::string_view(split)).add(loss).add(std::exp(loss));
  if (accuracy) {
    csv_.add(*accuracy);
  } else {
    csv_.add_null();
  }
  csv_.add(eval_ms);
  csv_.end_row();
}

}  // namespace llmprof::train
