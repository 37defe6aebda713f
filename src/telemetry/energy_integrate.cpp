#include "llmprof/telemetry/energy_integrate.h"

#include <algorithm>
#include <cmath>

namespace llmprof::telemetry {

namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

bool valid(const TraceView& tr, size_t i) { return !std::isnan(tr.value(i)); }

// The last valid index <= i, or kNone.
size_t valid_at_or_before(const TraceView& tr, size_t i) {
  for (size_t k = i + 1; k-- > 0;) {
    if (valid(tr, k)) return k;
  }
  return kNone;
}

// The first valid index > i, or kNone.
size_t valid_after(const TraceView& tr, size_t i) {
  for (size_t k = i + 1; k < tr.size; ++k) {
    if (valid(tr, k)) return k;
  }
  return kNone;
}

// The last valid sample at or before time t (binary search on the sorted times), or kNone.
size_t valid_sample_before(const TraceView& tr, int64_t t) {
  size_t n = static_cast<size_t>(std::upper_bound(tr.t_ns, tr.t_ns + tr.size, t) - tr.t_ns);
  return n == 0 ? kNone : valid_at_or_before(tr, n - 1);
}

// Linear interpolation between valid samples i < j at time t in [t_i, t_j].
double lerp(const TraceView& tr, size_t i, size_t j, int64_t t) {
  const int64_t span = tr.t(j) - tr.t(i);
  if (span <= 0) return tr.value(j);
  const double w = static_cast<double>(t - tr.t(i)) / static_cast<double>(span);
  return tr.value(i) + w * (tr.value(j) - tr.value(i));
}

// The interpolated value at t, which must lie within the valid span.
double value_at(const TraceView& tr, int64_t t) {
  size_t i = valid_sample_before(tr, t);
  if (i == kNone) i = valid_after(tr, kNone);  // t before the first sample: clamp
  size_t j = valid_after(tr, i);
  if (j == kNone || tr.t(i) == t) return tr.value(i);
  return lerp(tr, i, j, t);
}

// Fills the valid span of tr into out; false when it has no valid sample.
bool valid_span(const TraceView& tr, Integral* out) {
  if (tr.size == 0) return false;
  size_t first = valid(tr, 0) ? 0 : valid_after(tr, 0);
  size_t last = valid_at_or_before(tr, tr.size - 1);
  if (first == kNone || last == kNone) return false;
  out->first_valid_ns = tr.t(first);
  out->last_valid_ns = tr.t(last);
  out->empty = false;
  return true;
}

}  // namespace

Integral integrate_power_j(const TraceView& power_w, int64_t t0_ns, int64_t t1_ns) {
  Integral out;
  if (!valid_span(power_w, &out)) return out;
  const int64_t u0 = std::max(t0_ns, out.first_valid_ns);
  const int64_t u1 = std::min(t1_ns, out.last_valid_ns);
  if (u1 <= u0) return out;
  double joules_ns = 0;  // watt-nanoseconds
  size_t i = valid_sample_before(power_w, u0);
  for (size_t j = valid_after(power_w, i); j != kNone; i = j, j = valid_after(power_w, j)) {
    if (power_w.t(i) >= u1) break;
    const int64_t a = std::max(u0, power_w.t(i));
    const int64_t b = std::min(u1, power_w.t(j));
    if (b <= a) continue;
    const double pa = lerp(power_w, i, j, a);
    const double pb = lerp(power_w, i, j, b);
    joules_ns += static_cast<double>(b - a) * (pa + pb) * 0.5;
  }
  out.joules = joules_ns * 1e-9;
  out.covered_ns = u1 - u0;
  return out;
}

Integral counter_delta_j(const TraceView& energy_j, int64_t t0_ns, int64_t t1_ns) {
  Integral out;
  if (!valid_span(energy_j, &out)) return out;
  const int64_t u0 = std::max(t0_ns, out.first_valid_ns);
  const int64_t u1 = std::min(t1_ns, out.last_valid_ns);
  if (u1 <= u0) return out;
  out.joules = value_at(energy_j, u1) - value_at(energy_j, u0);
  out.covered_ns = u1 - u0;
  return out;
}

bool last_power_w(const TraceView& trace, bool counter, double* power_w) {
  if (trace.size == 0) return false;
  size_t last = valid_at_or_before(trace, trace.size - 1);
  if (last == kNone) return false;
  if (!counter) {
    *power_w = trace.value(last);
    return true;
  }
  size_t prev = last == 0 ? kNone : valid_at_or_before(trace, last - 1);
  if (prev == kNone || trace.t(last) <= trace.t(prev)) return false;
  *power_w = (trace.value(last) - trace.value(prev)) * 1e9 /
             static_cast<double>(trace.t(last) - trace.t(prev));
  return true;
}

}  // namespace llmprof::telemetry
