// Energy over a time interval from sampled traces, the two ways a source reports it:
//   power trace (t_k, P_k):   E = integral of the piecewise-linear P(t) over [t0, t1] clipped to
//                             the trace: trapezoids, with P linearly interpolated at the edges, so
//                             a partial segment [u, v] contributes (v - u) * (P(u) + P(v)) / 2.
//   counter trace (t_k, E_k): E = E(t1') - E(t0'), E(t) linearly interpolated between samples,
//                             [t0', t1'] = [t0, t1] clipped to the trace.
// NaN values are gaps: the neighbouring valid samples span them. Times are llmprof::now_ns().
#pragma once

#include <cstddef>
#include <cstdint>

namespace llmprof::telemetry {

// A strided view of one channel's values beside the shared sample times (the ring's layout;
// stride 1 for plain arrays). value(i) = values[i * stride].
struct TraceView {
  const int64_t* t_ns = nullptr;
  const double* values = nullptr;
  size_t stride = 1;
  size_t size = 0;

  int64_t t(size_t i) const { return t_ns[i]; }
  double value(size_t i) const { return values[i * stride]; }
};

struct Integral {
  double joules = 0;
  int64_t covered_ns = 0;      // the part of [t0, t1] inside the trace's valid span
  int64_t first_valid_ns = 0;  // the trace's valid span (both 0 when it has < 1 valid sample)
  int64_t last_valid_ns = 0;
  bool empty = true;  // no valid sample at all
};

// Trapezoid integral of a power trace in watts over [t0_ns, t1_ns]; joules.
Integral integrate_power_j(const TraceView& power_w, int64_t t0_ns, int64_t t1_ns);

// Interpolated difference of a cumulative energy trace in joules over [t0_ns, t1_ns].
Integral counter_delta_j(const TraceView& energy_j, int64_t t0_ns, int64_t t1_ns);

// The last known power of a trace: its last valid value (power traces) or the slope between its
// last two valid samples (counter traces); false when unknown.
bool last_power_w(const TraceView& trace, bool counter, double* power_w);

}  // namespace llmprof::telemetry
