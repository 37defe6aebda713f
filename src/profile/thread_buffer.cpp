// The tracer's per-thread buffers between windows: reserved before the first, merged into
// TraceData after each, emptied for the next (thread_buffer.h).
#include "thread_buffer.h"

#include <string>

#include "llmprof/profile/tracer.h"

namespace llmprof::profile::detail {

void reserve_buffer(ThreadBuffer& tb, size_t max_events, bool ops, bool count_views) {
  tb.ops.reserve(max_events);
  tb.parents.reserve(max_events);
  tb.shapes.reserve(ops ? max_events / 4 : 0);
  tb.name_class.assign(kNameSlots, kUnclassified);
  tb.hides_views.assign(kNameSlots, 0);
  if (ops && count_views) tb.view_log.reserve(max_events);
  for (auto* v : {&tb.step_untimed, &tb.untimed, &tb.step_views_inside, &tb.views_inside}) {
    v->assign(kNameSlots, 0);
  }
}

void merge_buffer(const ThreadBuffer& tb, NameTable& names, TraceData& d) {
  if (tb.ops.empty() &&
      std::all_of(tb.untimed.begin(), tb.untimed.end(), [](int64_t c) { return c == 0; })) {
    return;
  }
  ++d.num_threads;
  d.dropped_events += tb.dropped;
  const auto op_offset = static_cast<int32_t>(d.ops.size());
  const auto shape_offset = static_cast<int32_t>(d.shapes.size());
  std::vector<uint32_t> to_global(tb.names.size());
  for (uint32_t id = 0; id < to_global.size(); ++id) {
    to_global[id] = names.intern(std::string(tb.names.name(id)).c_str());
  }
  for (size_t i = 0; i < tb.ops.size(); ++i) {
    OpEvent e = tb.ops[i];
    e.name_id = to_global[e.name_id];
    if (e.shape_id >= 0) e.shape_id += shape_offset;
    d.ops.push_back(e);
    const int32_t p = tb.parents[i];
    d.parents.push_back(p >= 0 ? p + op_offset : -1);
  }
  d.shapes.insert(d.shapes.end(), tb.shapes.begin(), tb.shapes.end());
  for (uint32_t id = 0; id < to_global.size(); ++id) {
    const uint32_t global = to_global[id];
    if (global >= d.untimed_calls.size()) {
      d.untimed_calls.resize(global + 1, 0);
      d.views_inside.resize(global + 1, 0);
    }
    d.untimed_calls[global] += tb.untimed[id];
    d.views_inside[global] += tb.views_inside[id];
  }
}

void clear_buffer(ThreadBuffer& tb) {
  tb.ops.clear();
  tb.parents.clear();
  tb.shapes.clear();
  std::fill(tb.untimed.begin(), tb.untimed.end(), 0);
  std::fill(tb.views_inside.begin(), tb.views_inside.end(), 0);
  tb.step_first = tb.step_first_shape = tb.ref_first = tb.ref_count = 0;
}

}  // namespace llmprof::profile::detail
