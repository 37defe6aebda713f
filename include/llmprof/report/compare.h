// Comparing two runs side by side: B/A ratios per phase, scope and op, and whether a phase's
// change of median exceeds run-to-run noise estimated from each run's per-step spread.
//
// Noise model: per-step values of a run have sigma ~= (p90 - p10) / (2 * 1.645) (the p10-p90 range
// of a normal distribution is 2 * 1.645 sigma). The standard error of a median of n values is
// sigma * sqrt(pi / 2) / sqrt(n). The difference of two medians has standard error
// sqrt(se_A^2 + se_B^2); a change is significant when |median_B - median_A| > 3 of those.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llmprof/report/document.h"
#include "llmprof/report/metrics.h"
#include "llmprof/report/run.h"

namespace llmprof::report {

inline constexpr double kSignificanceStandardErrors = 3.0;
// MFU peaks (env.json peak_flops.flops_per_s) further apart than this fraction make MFU ratios
// incomparable: each run's MFU divides by its own peak (bf16 and fp32 peaks differ ~2x).
inline constexpr double kMfuPeakMismatch = 0.02;

// A config.yaml key whose value differs between two runs (nullopt: absent from that run).
struct ConfigDifference {
  std::string key;
  std::optional<std::string> a, b;
};

// Every key of run a's or b's config whose value differs, sorted by key.
std::vector<ConfigDifference> config_differences(const Run& a, const Run& b);

// Standard error of the median of per-step values, from their p10-p90 spread (0 when n == 0).
double median_standard_error(const Stats& s);

// The noise threshold on |median_B - median_A|: 3 standard errors of the difference.
double median_noise_threshold(const Stats& a, const Stats& b);

// True when |median_B - median_A| exceeds median_noise_threshold(a, b).
bool significant_change(const Stats& a, const Stats& b);

// Side-by-side tables of run a against run b: the config keys that differ, phases and throughput
// (with significance; achieved GFLOP/s beside MFU, whose ratio is flagged, not tested, when the
// two runs' peaks differ), outcome, modules and top ops (ratios only: per-step means, no spread).
std::vector<Table> compare_tables(const Run& a,
                                  const RunMetrics& ma,
                                  const Run& b,
                                  const RunMetrics& mb);

// The footer lines that document the significance test.
std::vector<std::string> compare_method_notes();

}  // namespace llmprof::report
