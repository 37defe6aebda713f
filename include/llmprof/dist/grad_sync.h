// Gradient synchronisation with DistributedDataParallel's semantics, on c10d's Reducer (DDP's C++
// core): buckets of first_bucket_mb then bucket_mb over the parameters in reverse order for the
// first step, rebuilt after it in the order gradients became ready; each bucket all-reduced by a
// communication hook (sum, then divide by the world size) as soon as it is full (overlap) or all
// of them once backward's compute has ended (overlap = false); no communication on no_sync
// micro-steps. The hook records every bucket's all-reduce into preallocated slots: bytes and
// element count of the tensor it received, dtype, launch and completion times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "llmprof/dist/process_group.h"

namespace llmprof::dist {

enum class GradDtype { kFloat32, kFloat16, kBFloat16, kFloat64, kOther };
std::string_view grad_dtype_name(GradDtype dtype);  // "f32", "f16", "bf16", "f64", "other"

// One bucket's all-reduce in one synchronising step. Times are llmprof::now_ns() (steady clock).
struct BucketRecord {
  int64_t sync_step = -1;          // 0-based count of synchronising steps of this GradSync
  int32_t bucket = -1;             // index in the step's bucket layout (0 = launched first)
  int32_t bucket_count = 0;        // buckets in that layout
  bool first_layout = false;       // the initial reverse-parameter-order layout (before rebuild)
  int64_t bytes = 0;               // numel x element size of the tensor the hook received
  int64_t numel = 0;
  GradDtype dtype = GradDtype::kOther;
  int64_t ready_ns = 0;            // the reducer handed the full bucket to the hook
  int64_t launch_ns = 0;           // the all-reduce was issued (= ready_ns when overlapping)
  int64_t issued_ns = 0;           // the issuing call returned: the kernels a GPU backend
                                   // launched for it were launched in [launch_ns, issued_ns]
  int64_t end_ns = -1;             // its future completed (then() callback); -1 if it failed
  int64_t backward_ns_at_launch = -1;  // launch_ns - *backward_start_ns; -1 without that pointer
};

struct GradSyncOptions {
  double bucket_mb = 25.0;        // ddp.bucket_mb: bucket cap after the first
  double first_bucket_mb = 1.0;   // ddp.first_bucket_mb: cap of the first bucket
  bool overlap = true;            // ddp.overlap: false = all buckets launched after backward
  // false: the same hook and arithmetic (so the same numbers) without reading clocks or
  // filling records, the baseline of a profiling-overhead comparison.
  bool record = true;
  std::size_t max_records = 4096; // preallocated record slots between two take_step_records();
                                  // a full buffer drops records and counts them (dropped())
  // Start of the backward phase (now_ns()), read at each launch for backward_ns_at_launch; the
  // caller writes it before loss.backward(). nullptr: not recorded.
  const int64_t* backward_start_ns = nullptr;
};

// DDP over one module's parameters. Construct after ProcessGroup::broadcast_module. The
// parameters must be the same tensors, in the same order, on every rank; as DDP, those that need
// no gradient are left out and a tensor listed twice (tied) is synchronised once. Every
// synchronised parameter must get a gradient in each synchronising backward (DDP's
// find_unused_parameters = false). Layout indices are positions in the `params` given.
class GradSync {
 public:
  GradSync(ProcessGroup& group, const std::vector<at::Tensor>& params, const GradSyncOptions& options);
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  // Call before each micro-step's forward. sync = false is DDP's no_sync (accumulation steps
  // before the last): gradients accumulate locally, nothing is communicated. On a syncing step
  // it first rebuilds the buckets if due (once, after the first syncing step, as DDP does at the
  // start of forward; a collective on every rank).
  void begin_micro_step(bool sync);

  // On a syncing micro-step, after forward and before loss.backward(): arms the reducer's
  // autograd hooks (DDP's prepare_for_backward). Does nothing under no_sync.
  void prepare_for_backward(const at::Tensor& loss);

  // prepare_for_backward(loss), loss.backward(), and a failed all-reduce turned into the group's
  // diagnosed DistError (naming the dead or stopped rank). Gradients are averaged on return.
  void backward(const at::Tensor& loss);

  // Records since the last call, in launch order; outside the timed step (copies).
  std::vector<BucketRecord> take_step_records();
  int64_t dropped() const;  // records lost to a full buffer so far

  // Current layout: parameter indices per bucket, bucket 0 first; and whether it was rebuilt.
  std::vector<std::vector<std::size_t>> bucket_layout() const;
  bool rebuilt() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmprof::dist
