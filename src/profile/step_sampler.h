// Private to the tracer: shape and view sampling at ops level (ShapeSampling, ViewSampling in
// llmprof/profile/tracer.h). Decides which kept steps of a window read their ops' shapes, maps a
// read step's shapes and view calls onto the steps between reads, op by op of the same sequence,
// and confirms them at the next read. Torch-free; between steps only (it loops over the step's
// events).
#pragma once

#include <cstdint>
#include <vector>

#include "llmprof/profile/tracer.h"
#include "thread_buffer.h"

namespace llmprof::profile::detail {

class StepSampler {
 public:
  // Reads shape_interval, active_steps (a cycle's last kept step reads) and record_view_ops
  // (views timed: none is hidden).
  explicit StepSampler(const TracerOptions& options);

  // A window (a cycle of the schedule) starts: kept steps count from 0, no reference step.
  void start_cycle();
  // No reference step: the next kept step reads, and the gaps start again from shape_interval.
  void forget_reference();
  // A step begins; returns whether it reads shapes: a kept step that is the cycle's first, its
  // last, any after a difference, or the next read of the doubling gap.
  bool begin_step(bool keep);
  // Whether this step (kept, not reading) may hide the view calls of the ops that ran only
  // views in the reference step: there are some, and sampling still holds.
  bool may_hide_views(const Buffers& buffers, bool keep) const;
  // End of a kept step: a read step becomes the reference and confirms the steps mapped since
  // the last; another takes the reference's shapes when its op sequence is the same.
  // hid_views: this step hid view calls (TracerState::hide_views).
  void end_step(const Buffers& buffers, bool hid_views);
  // End of a window: the steps mapped since the last read stay unconfirmed.
  void stop(const Buffers& buffers);
  // Op calls that ran with RecordFunction off inside, in a kept step.
  void add_hidden_calls(int64_t calls) { views_.hidden_calls += calls; }

  bool step_reads() const { return step_reads_; }
  // View calls hidden per step, over the buffers: those of the reference step.
  static int64_t hidden_views_per_step(const Buffers& buffers);
  const ShapeSampling& shape_sampling() const { return shapes_; }
  const ViewSampling& view_sampling() const { return views_; }

 private:
  using Pairs = std::vector<ThreadBuffer::HiddenViews>;
  void map_step(const Buffers& buffers, bool hid_views);
  void read_step(const Buffers& buffers);
  void confirm_hidden_views(const Buffers& buffers,
                            const std::vector<Pairs>& now,
                            bool shapes_confirmed);
  void pick_views_to_hide(const Buffers& buffers, const std::vector<Pairs>& now);

  int shape_interval_;
  int64_t active_steps_;
  bool record_view_ops_;
  ShapeSampling shapes_;
  ViewSampling views_;
  bool step_reads_ = false;
  // Kept steps of the cycle so far, whether a read step is the reference, the mapped steps since
  // it (confirmed by the next read step), the kept steps since it whose hidden view calls wait
  // for that confirmation.
  int64_t kept_in_cycle_ = 0;
  bool have_ref_ = false;
  int64_t pending_mapped_ = 0;
  int64_t pending_hidden_steps_ = 0;
  // The next read step (kept_in_cycle_) and the gap to it: shape_interval after the first read,
  // doubled by every read that confirms the shapes did not change.
  int64_t next_read_ = 0, read_gap_ = 0;
};

}  // namespace llmprof::profile::detail
