// RecordFunction callbacks behind profile::Tracer (op_callbacks.h): the per-op hot path.
// Hot-path rules: the callbacks write into per-thread buffers reserved up front, keep their own
// nesting stack (no ObserverContext allocation), never lock, and stop recording when full. One
// exception, paid for by what it saves: between the steps that read shapes, around an op call
// that ran only view ops in the last read step (CPU bmm: 8-9 view calls per matrix of the batch),
// at::enableRecordFunction switches LibTorch's observation off and on, and LibTorch rebuilds its
// per-thread callback cache each time (a small allocation, an uncontended lock; ~300 ns a pair,
// calibrated as ns_per_hidden_call) instead of observing hundreds of calls (~100 ns each).
#include "op_callbacks.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "llmprof/profile/bytes.h"
#include "thread_buffer.h"

namespace llmprof::profile::detail {

ThreadBuffer* claim_buffer() {
  const int gen = g_tracer.generation.load(std::memory_order_relaxed);
  if (t_generation == gen) return t_buffer;
  const int i = g_tracer.num_buffers.fetch_add(1);
  t_buffer = i < kMaxThreads ? g_tracer.buffers[i] : nullptr;
  if (t_buffer != nullptr) t_buffer->os_tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  t_generation = gen;
  return t_buffer;
}

namespace {

// The name id of a FUNCTION-scope event. A dispatcher op's name is its schema's, a string that
// lives as long as the op is registered: cached by pointer. Other names (RECORD_FUNCTION with a
// built string, as the autograd engine's "evaluate_function: <node>") live in the event and their
// address is reused by the next: hashed every time, never cached (else a later name would read
// an earlier one's id).
uint32_t op_name_id(ThreadBuffer* tb, const at::RecordFunction& fn) {
  const char* name = fn.name();
  const size_t slot = (reinterpret_cast<uintptr_t>(name) >> 3) & (ThreadBuffer::kPtrCache - 1);
  if (tb->ptr_key[slot] == name) return tb->ptr_id[slot];
  const uint32_t id = tb->names.intern(name);
  if (fn.operator_name().has_value()) {  // a schema (copies its name: on a cache miss only)
    tb->ptr_key[slot] = name;
    tb->ptr_id[slot] = id;
  }
  return id;
}

void record_tensor(const at::Tensor& t, ShapeRecord& s, size_t slot) {
  if (!t.defined()) return;
  const int64_t nd = std::min<int64_t>(t.dim(), ShapeRecord::kMaxDims);
  s.ndim[slot] = static_cast<int8_t>(nd);
  s.scalar_type[slot] = static_cast<int8_t>(t.scalar_type());
  for (int64_t d = 0; d < nd; ++d) s.dims[slot][d] = t.size(d);
}

// An op's inputs into its ShapeRecord (see there): tensors, and for an op with a cost model its
// integers and the tensors of a list (the others' would only make shapes differ between steps).
void record_shapes(const at::RecordFunction& fn, bool modelled, ShapeRecord& s) {
  constexpr size_t kSlots = ShapeRecord::kMaxInputs;
  auto inputs = fn.inputs();
  for (size_t i = 0; i < inputs.size() && i < kSlots; ++i) {
    const c10::IValue& v = inputs[i];
    if (v.isTensor()) {
      record_tensor(v.toTensor(), s, i);
    } else if (!modelled) {
      continue;
    } else if (v.isInt()) {
      s.dims[i][0] = v.toInt();
      s.scalar_type[i] = ShapeRecord::kIntArg;
    } else if (v.isTensorList()) {  // fills the slots left: what follows it is not recorded
      const c10::List<at::Tensor> list = v.toTensorList();
      const size_t room = kSlots - i, n = list.size();
      const size_t kept = n <= room ? n : room - 1;
      for (size_t k = 0; k < kept; ++k) record_tensor(list.get(k), s, i + k);
      if (n > room) s.ndim[kSlots - 1] = ShapeRecord::kListCut;
      return;
    }
  }
}

}  // namespace

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadBuffer* tb = claim_buffer();
  if (tb == nullptr || !g_tracer.active.load(std::memory_order_relaxed)) return nullptr;
  if (tb->depth >= kMaxDepth) {
    ++tb->depth;
    ++tb->dropped;
    return nullptr;
  }
  const char* name = fn.name();
  const bool node = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
  // Autograd node names are built per call: hash them.
  const uint32_t name_id = node ? tb->names.intern(name) : op_name_id(tb, fn);
  uint8_t& cls = tb->name_class[name_id];
  if (cls == kUnclassified) {
    const std::string_view n = tb->names.name(name_id);
    cls = !g_tracer.record_view_ops && !node && is_view_op(n) ? kView
          : has_cost_model(n)                                 ? kModelled
                                                              : kPlain;
  }
  if (cls == kView) {  // counted, not timed: children see the enclosing op as their parent
    ++tb->step_untimed[name_id];
    const int32_t parent = tb->depth > 0 ? tb->stack[tb->depth - 1] : -1;
    if (parent >= 0) {
      ++tb->step_views_inside[tb->ops[static_cast<size_t>(parent)].name_id];
      if (g_tracer.log_views) {
        if (tb->view_log.size() < tb->view_log.capacity()) {
          tb->view_log.push_back({name_id, parent});
        } else {
          tb->view_log_full = true;
        }
      }
    }
    tb->untimed_at[tb->depth] = true;
    tb->stack[tb->depth++] = parent;
    return nullptr;
  }
  tb->untimed_at[tb->depth] = false;
  if (tb->ops.size() == tb->ops.capacity()) {
    tb->stack[tb->depth++] = -1;
    ++tb->dropped;
    return nullptr;
  }
  const auto index = static_cast<int32_t>(tb->ops.size());
  tb->ops.emplace_back();
  OpEvent& e = tb->ops.back();
  e.name_id = name_id;
  e.seq = fn.seqNr();
  e.kind = node ? OpEvent::kBackwardNode : OpEvent::kOp;
  e.step = g_tracer.step.load(std::memory_order_relaxed);
  e.phase = g_tracer.phase.load(std::memory_order_relaxed);
  e.thread = tb->index;
  e.depth = static_cast<uint8_t>(tb->depth);
  if (tb->index == 0 && g_tracer.scopes != nullptr) e.scope_event = g_tracer.scopes->current();
  tb->parents.push_back(tb->depth > 0 ? tb->stack[tb->depth - 1] : -1);
  if (fn.needsInputs() && (g_tracer.record_shapes || cls == kModelled) &&
      tb->shapes.size() < tb->shapes.capacity()) {
    record_shapes(fn, cls == kModelled, tb->shapes.emplace_back());
    e.shape_id = static_cast<int32_t>(tb->shapes.size() - 1);
  }
  // Views inside this call are counted from the read step: RecordFunction off on this thread
  // until its end (LibTorch rebuilds its per-thread callback cache: see ns_per_hidden_call).
  const bool hide = g_tracer.hide_views && !node && tb->hides_views[name_id] != 0;
  tb->hid_at[tb->depth] = hide;
  if (hide) {
    ++tb->step_hidden_calls;
    at::enableRecordFunction(false);
  }
  tb->stack[tb->depth++] = index;
  e.start_ns = now_ns();  // last: the bookkeeping above is not charged to the op
  return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) {
  ThreadBuffer* tb = claimed_buffer();
  if (tb == nullptr || tb->depth == 0) return;
  --tb->depth;
  if (tb->depth >= kMaxDepth || tb->untimed_at[tb->depth]) return;
  const int64_t end = now_ns();
  const int32_t index = tb->stack[tb->depth];
  if (index < 0) return;
  if (tb->hid_at[tb->depth]) at::enableRecordFunction(true);
  OpEvent& e = tb->ops[static_cast<size_t>(index)];
  e.end_ns = end;
  const int32_t parent = tb->parents[static_cast<size_t>(index)];
  if (parent >= 0) tb->ops[static_cast<size_t>(parent)].child_ns += end - e.start_ns;
}

}  // namespace llmprof::profile::detail
