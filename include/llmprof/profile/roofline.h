// The roofline (Williams, Waterman and Patterson, 2009) of an op or a module: how far its measured
// time is from what the machine's two roofs allow, and so where optimisation pays. Each recorded
// call of a modelled op is placed under the roofs from its counted FLOPs (op_flops) and bytes
// (op_bytes, a lower bound); a row sums its calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace llmprof::profile {

// The roofs a run is measured against; 0 = unknown (the roofline columns are then null).
struct Roofs {
  double flops_per_s = 0;  // the matmul peak MFU uses (env.json peak_flops)
  double bytes_per_s = 0;  // the STREAM triad bandwidth (env.json peak_bandwidth)
};

// Where a row sits: under the compute roof, under the memory roof, or far above both (its time
// is more than kOverheadFactor x what the roofs allow: dispatch-, launch- or framework-bound).
enum class Bound : uint8_t { kCompute, kMemory, kOverhead };
inline constexpr double kOverheadFactor = 10;
std::string_view bound_name(Bound bound);

// The roofline columns of one row of ops.csv or modules.csv (per step).
struct RooflinePoint {
  std::optional<double> bytes;                 // counted, lower bound
  std::optional<double> arithmetic_intensity;  // counted FLOPs / bytes
  std::optional<double> achieved_gflops_per_s;
  std::optional<double> achieved_gb_per_s;
  std::optional<Bound> bound;
  std::optional<double> roofline_ms;  // the time at the roof each call sits under
  // Measured time of ops without a FLOP or byte model (or without recorded shapes): what the
  // roofline cannot judge, never counted as lost.
  std::optional<double> unmodelled_ms;
  // measured - unmodelled_ms - roofline_ms, >= 0: what optimisation could win
  std::optional<double> lost_ms;
};

// Sums the calls of a row. A call's roofline time is max(flops / peak FLOP/s, bytes / peak B/s)
// over what is known of it; calls with neither a FLOP nor a byte model add nothing but their
// time, to the unmodelled time (add_unmodelled).
class RooflineSums {
 public:
  void add(std::optional<double> flops, std::optional<double> bytes, const Roofs& roofs);
  void add_unmodelled(double ns) { unmodelled_ns_ += ns; }
  // The row's columns for `measured_ms` of time, all sums scaled by `scale` (1 / recorded steps).
  // Achieved rates and the bound are of the modelled time (measured - unmodelled). Unknown
  // (null) where no call had a model or no roof is known.
  RooflinePoint point(double measured_ms, double scale, const Roofs& roofs) const;
  bool empty() const { return !has_flops_ && !has_bytes_; }

 private:
  double unmodelled_ns_ = 0;
  double flops_ = 0, bytes_ = 0;
  double compute_ms_ = 0, memory_ms_ = 0, roofline_ms_ = 0;
  bool has_flops_ = false, has_bytes_ = false, has_roof_ = false;
};

}  // namespace llmprof::profile
