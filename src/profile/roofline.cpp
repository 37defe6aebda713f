#include "llmprof/profile/roofline.h"

#include <algorithm>

namespace llmprof::profile {

std::string_view bound_name(Bound bound) {
  switch (bound) {
    case Bound::kCompute:
      return "compute";
    case Bound::kMemory:
      return "memory";
    case Bound::kOverhead:
      return "overhead";
  }
  return "overhead";
}

void RooflineSums::add(std::optional<double> flops, std::optional<double> bytes, const Roofs& roofs) {
  double compute_ms = 0, memory_ms = 0;
  bool roof = false;
  if (flops) {
    flops_ += *flops;
    has_flops_ = true;
    if (roofs.flops_per_s > 0) {
      compute_ms = *flops / roofs.flops_per_s * 1e3;
      roof = true;
    }
  }
  if (bytes) {
    bytes_ += *bytes;
    has_bytes_ = true;
    if (roofs.bytes_per_s > 0) {
      memory_ms = *bytes / roofs.bytes_per_s * 1e3;
      roof = true;
    }
  }
  if (!roof) return;
  compute_ms_ += compute_ms;
  memory_ms_ += memory_ms;
  roofline_ms_ += std::max(compute_ms, memory_ms);
  has_roof_ = true;
}

RooflinePoint RooflineSums::point(double measured_ms, double scale, const Roofs& roofs) const {
  RooflinePoint p;
  const double unmodelled_ms = unmodelled_ns_ * 1e-6 * scale;
  const double modelled_ms = std::max(0.0, measured_ms - unmodelled_ms);
  const double seconds = modelled_ms * 1e-3;
  if (has_bytes_) {
    p.bytes = bytes_ * scale;
    if (seconds > 0) p.achieved_gb_per_s = *p.bytes / seconds * 1e-9;
  }
  if (has_flops_ && seconds > 0) p.achieved_gflops_per_s = flops_ * scale / seconds * 1e-9;
  if (has_flops_ && has_bytes_ && bytes_ > 0) p.arithmetic_intensity = flops_ / bytes_;
  // A bound needs both roofs: with one unknown, the row could sit under the other.
  if (!has_roof_ || roofs.flops_per_s <= 0 || roofs.bytes_per_s <= 0) return p;
  p.roofline_ms = roofline_ms_ * scale;
  p.unmodelled_ms = unmodelled_ms;
  p.lost_ms = std::max(0.0, modelled_ms - *p.roofline_ms);
  if (modelled_ms > kOverheadFactor * *p.roofline_ms) {
    p.bound = Bound::kOverhead;
  } else {
    p.bound = memory_ms_ >= compute_ms_ ? Bound::kMemory : Bound::kCompute;
  }
  return p;
}

}  // namespace llmprof::profile
