// Shape and view sampling of the tracer's kept steps (step_sampler.h).
#include "step_sampler.h"

#include <algorithm>
#include <cstring>

namespace llmprof::profile::detail {

namespace {

// Whether the step in flight ran the reference step's ops, name by name (and shape by shape).
bool same_ops(const ThreadBuffer& tb, bool compare_shapes) {
  if (tb.ops.size() - tb.step_first != tb.ref_count) return false;
  for (size_t i = 0; i < tb.ref_count; ++i) {
    const OpEvent& a = tb.ops[tb.step_first + i];
    const OpEvent& b = tb.ops[tb.ref_first + i];
    if (a.name_id != b.name_id) return false;
    if (!compare_shapes) continue;
    if ((a.shape_id < 0) != (b.shape_id < 0)) return false;
    if (a.shape_id >= 0 &&
        std::memcmp(&tb.shapes[static_cast<size_t>(a.shape_id)],
                    &tb.shapes[static_cast<size_t>(b.shape_id)], sizeof(ShapeRecord)) != 0) {
      return false;
    }
  }
  return true;
}

bool all_same(const Buffers& buffers, bool compare_shapes) {
  return std::all_of(buffers.begin(), buffers.end(),
                     [&](const auto& tb) { return same_ops(*tb, compare_shapes); });
}

// Adds `times` copies of a thread's hidden view calls to its window counts.
void count_hidden(ThreadBuffer& tb, int64_t times) {
  for (const auto& h : tb.ref_hidden) {
    tb.untimed[h.view] += h.count * times;
    tb.views_inside[h.parent] += h.count * times;
  }
}

// At the end of a read step: its view calls per (enclosing op name, view name), sorted.
std::vector<ThreadBuffer::HiddenViews> views_by_op(const ThreadBuffer& tb) {
  std::vector<ThreadBuffer::HiddenViews> pairs;
  pairs.reserve(tb.view_log.size());
  for (const auto& v : tb.view_log) {
    pairs.push_back({tb.ops[static_cast<size_t>(v.parent)].name_id, v.name_id, 1});
  }
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
    return a.parent != b.parent ? a.parent < b.parent : a.view < b.view;
  });
  size_t out = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (out > 0 && pairs[out - 1].parent == pairs[i].parent &&
        pairs[out - 1].view == pairs[i].view) {
      ++pairs[out - 1].count;
    } else {
      pairs[out++] = pairs[i];
    }
  }
  pairs.resize(out);
  return pairs;
}

}  // namespace

StepSampler::StepSampler(const TracerOptions& options)
    : shape_interval_(options.shape_interval),
      active_steps_(static_cast<int64_t>(options.active_steps)),
      record_view_ops_(options.record_view_ops) {}

void StepSampler::start_cycle() {
  kept_in_cycle_ = 0;
  forget_reference();
}

void StepSampler::forget_reference() {
  have_ref_ = false;
  next_read_ = read_gap_ = 0;
}

bool StepSampler::begin_step(bool keep) {
  const int64_t k = kept_in_cycle_;
  step_reads_ =
      keep && (shapes_.every_step || !have_ref_ || k >= next_read_ || k + 1 == active_steps_);
  return step_reads_;
}

bool StepSampler::may_hide_views(const Buffers& buffers, bool keep) const {
  return keep && !step_reads_ && have_ref_ && !shapes_.every_step &&
         hidden_views_per_step(buffers) > 0;
}

int64_t StepSampler::hidden_views_per_step(const Buffers& buffers) {
  int64_t n = 0;
  for (const auto& tb : buffers) {
    for (const auto& h : tb->ref_hidden) n += h.count;
  }
  return n;
}

void StepSampler::end_step(const Buffers& buffers, bool hid_views) {
  if (step_reads_) {
    read_step(buffers);
  } else {
    map_step(buffers, hid_views);
  }
  ++kept_in_cycle_;
}

void StepSampler::stop(const Buffers& buffers) {
  shapes_.unconfirmed_steps += pending_mapped_;  // the window ended before a read step
  pending_mapped_ = 0;
  if (pending_hidden_steps_ > 0) {  // counted like the mapped steps, unconfirmed
    for (auto& tb : buffers) count_hidden(*tb, pending_hidden_steps_);
    views_.counted_views += hidden_views_per_step(buffers) * pending_hidden_steps_;
    views_.unconfirmed_steps += pending_hidden_steps_;
    pending_hidden_steps_ = 0;
  }
}

// A step that did not read: the reference's shapes, position by position, when it ran the same
// op sequence.
void StepSampler::map_step(const Buffers& buffers, bool hid_views) {
  if (have_ref_ && all_same(buffers, false)) {
    for (auto& tb : buffers) {
      for (size_t i = 0; i < tb->ref_count; ++i) {
        tb->ops[tb->step_first + i].shape_id = tb->ops[tb->ref_first + i].shape_id;
      }
    }
    ++pending_mapped_;
    if (hid_views) ++pending_hidden_steps_;
  } else {  // the op sequence changed: this step has no shapes; read every later one
    ++shapes_.unmapped_steps;
    shapes_.every_step = true;
    if (hid_views) ++views_.lost_steps;
  }
}

// A read step: confirms (or drops) the shapes mapped since the reference, becomes the reference.
void StepSampler::read_step(const Buffers& buffers) {
  bool shapes_same = true;
  if (have_ref_ && pending_mapped_ > 0) {
    shapes_same = all_same(buffers, true);
    if (shapes_same) {
      shapes_.mapped_steps += pending_mapped_;
    } else {  // shapes changed somewhere since the reference: the mapped steps lose theirs
      for (auto& tb : buffers) {
        for (size_t i = tb->ref_first + tb->ref_count; i < tb->step_first; ++i) {
          tb->ops[i].shape_id = -1;
        }
      }
      shapes_.unmapped_steps += pending_mapped_;
      shapes_.every_step = true;
    }
  }
  pending_mapped_ = 0;
  std::vector<Pairs> now;
  for (auto& tb : buffers) now.push_back(views_by_op(*tb));
  confirm_hidden_views(buffers, now, shapes_same);
  pick_views_to_hide(buffers, now);
  const int interval = std::max(1, shape_interval_);
  read_gap_ = read_gap_ == 0 || interval == 1 ? interval : 2 * read_gap_;
  next_read_ = kept_in_cycle_ + read_gap_;
  for (auto& tb : buffers) {
    tb->ref_first = tb->step_first;
    tb->ref_count = tb->ops.size() - tb->step_first;
  }
  have_ref_ = true;
  ++shapes_.read_steps;
}

// Confirms the hidden view calls of the steps since the last read step against this one's (now:
// per buffer, its view calls by op), when the shapes were confirmed too.
void StepSampler::confirm_hidden_views(const Buffers& buffers,
                                       const std::vector<Pairs>& now,
                                       bool shapes_confirmed) {
  if (pending_hidden_steps_ == 0) return;
  bool same = shapes_confirmed;
  for (size_t t = 0; t < buffers.size() && same; ++t) {
    const ThreadBuffer& tb = *buffers[t];
    Pairs under;
    for (const auto& h : now[t]) {
      if (tb.hides_views[h.parent] != 0) under.push_back(h);
    }
    same = !tb.view_log_full && under == tb.ref_hidden;
  }
  if (same) {
    for (auto& tb : buffers) count_hidden(*tb, pending_hidden_steps_);
    views_.counted_views += hidden_views_per_step(buffers) * pending_hidden_steps_;
    views_.mapped_steps += pending_hidden_steps_;
  } else {
    views_.lost_steps += pending_hidden_steps_;
    shapes_.every_step = true;
  }
  pending_hidden_steps_ = 0;
}

// Picks the ops that hide their views until the next read step: ops whose calls in this step
// ran no timed op and at least kMinViewsToHide view calls each.
void StepSampler::pick_views_to_hide(const Buffers& buffers, const std::vector<Pairs>& now) {
  std::vector<int64_t> calls(kNameSlots), viewed(kNameSlots);
  std::vector<uint8_t> runs_timed(kNameSlots);
  for (size_t t = 0; t < buffers.size(); ++t) {
    ThreadBuffer& tb = *buffers[t];
    std::fill(tb.hides_views.begin(), tb.hides_views.end(), 0);
    tb.ref_hidden.clear();
    const bool usable = !tb.view_log_full && !shapes_.every_step && !record_view_ops_;
    tb.view_log.clear();
    tb.view_log_full = false;
    if (!usable) continue;
    std::fill(calls.begin(), calls.end(), 0);
    std::fill(viewed.begin(), viewed.end(), 0);
    std::fill(runs_timed.begin(), runs_timed.end(), 0);
    for (size_t i = tb.step_first; i < tb.ops.size(); ++i) {
      const OpEvent& e = tb.ops[i];
      if (e.kind != OpEvent::kOp) runs_timed[e.name_id] = 1;  // autograd nodes never hide
      ++calls[e.name_id];
      const int32_t p = tb.parents[i];
      if (p >= 0) runs_timed[tb.ops[static_cast<size_t>(p)].name_id] = 1;
    }
    for (const auto& h : now[t]) viewed[h.parent] += h.count;
    for (size_t id = 0; id < kNameSlots; ++id) {
      tb.hides_views[id] = calls[id] > 0 && runs_timed[id] == 0 &&
                           viewed[id] >= kMinViewsToHide * calls[id];
    }
    for (const auto& h : now[t]) {
      if (tb.hides_views[h.parent] != 0) tb.ref_hidden.push_back(h);
    }
  }
}

}  // namespace llmprof::profile::detail
