// DDP's gradient synchronisation on c10d's Reducer, with a recording communication hook
// (include/llmprof/dist/grad_sync.h).
#include "llmprof/dist/grad_sync.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>
#include <torch/torch.h>

#include "c10d_compat.h"
#include "llmprof/base/clock.h"

namespace llmprof::dist {

std::string_view grad_dtype_name(GradDtype dtype) {
  switch (dtype) {
    case GradDtype::kFloat32: return "f32";
    case GradDtype::kFloat16: return "f16";
    case GradDtype::kBFloat16: return "bf16";
    case GradDtype::kFloat64: return "f64";
    case GradDtype::kOther: return "other";
  }
  return "other";
}

namespace {

#if LLMPROF_WITH_DIST
GradDtype dtype_of(c10::ScalarType t) {
  switch (t) {
    case c10::kFloat: return GradDtype::kFloat32;
    case c10::kHalf: return GradDtype::kFloat16;
    case c10::kBFloat16: return GradDtype::kBFloat16;
    case c10::kDouble: return GradDtype::kFloat64;
    default: return GradDtype::kOther;
  }
}
#endif

int64_t bytes_of_mb(double mb, const char* key) {
  if (!(mb > 0) || mb > 1 << 20) {
    throw ConfigError(fmt::format("{} = {}: expected a positive size in MiB", key, mb), {}, key);
  }
  return static_cast<int64_t>(mb * 1024 * 1024);
}

}  // namespace

#if LLMPROF_WITH_DIST

// State the hook shares with GradSync. Written by the hook on autograd's thread (launch fields)
// and by the all-reduce's completion callback on Gloo's thread (end_ns); read by
// take_step_records() after backward returned, which the reducer only lets happen once every
// bucket's future completed, so the future's own synchronisation orders the accesses.
struct HookState {
  compat::PgPtr pg;
  int world_size = 1;
  bool overlap = true;
  bool record = true;
  const int64_t* backward_start_ns = nullptr;
  std::vector<BucketRecord> slots;  // preallocated
  size_t used = 0;
  int64_t dropped = 0;
  // The step being recorded.
  int64_t sync_step = -1;
  int32_t bucket_count = 0;
  bool first_layout = true;
  // overlap = false: buckets handed over before the last, launched with it.
  struct Deferred {
    at::Tensor buffer;
    c10::intrusive_ptr<c10::ivalue::Future> future;
    size_t slot;
  };
  std::vector<Deferred> deferred;       // capacity reserved: no allocation while recording
  std::vector<at::Tensor> launch_args;  // one tensor, reused for every all-reduce call
};

namespace {

constexpr size_t kNoSlot = static_cast<size_t>(-1);

// The default hook's arithmetic (sum over ranks, then divide by the world size), recording each
// bucket's all-reduce into a preallocated slot.
class RecordingHook final : public c10d::CommHookInterface {
 public:
  explicit RecordingHook(HookState* state) : s_(state) {}

  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override {
    at::Tensor& buffer = bucket.getBufferRef();
    const size_t slot = s_->record ? claim_slot(bucket, buffer) : kNoSlot;
    if (!s_->overlap && !bucket.isLast()) {
      auto pending = c10::make_intrusive<c10::ivalue::Future>(c10::TensorType::get());
      s_->deferred.push_back({buffer, pending, slot});
      return pending;
    }
    if (!s_->overlap) launch_deferred();
    return launch(buffer, slot);
  }

  at::Tensor parseHookResult(const c10::IValue& result) override {
    return result.toTensor();
  }

 private:
  // The next free record, filled with what the bucket tensor says; kNoSlot when full.
  size_t claim_slot(const c10d::GradBucket& bucket, const at::Tensor& buffer) {
    if (s_->used >= s_->slots.size()) {
      ++s_->dropped;
      return kNoSlot;
    }
    const size_t slot = s_->used++;
    BucketRecord& r = s_->slots[slot];
    r = BucketRecord{};
    r.ready_ns = now_ns();
    r.sync_step = s_->sync_step;
    r.bucket = static_cast<int32_t>(bucket.getIndex());
    r.bucket_count = s_->bucket_count;
    r.first_layout = s_->first_layout;
    r.numel = buffer.numel();
    r.bytes = r.numel * static_cast<int64_t>(buffer.element_size());
    r.dtype = dtype_of(buffer.scalar_type());
    return slot;
  }

  c10::intrusive_ptr<c10::ivalue::Future> launch(const at::Tensor& buffer, size_t slot) {
    if (slot != kNoSlot) {
      const int64_t launch_ns = now_ns();
      BucketRecord& r = s_->slots[slot];
      r.launch_ns = launch_ns;
      if (s_->backward_start_ns != nullptr) {
        r.backward_ns_at_launch = launch_ns - *s_->backward_start_ns;
      }
    }
    s_->launch_args[0] = buffer;
    auto work = s_->pg->allreduce(s_->launch_args);
    if (slot != kNoSlot) s_->slots[slot].issued_ns = now_ns();
    s_->launch_args[0] = at::Tensor();
    HookState* s = s_;
    return work->getFuture()->then(
        [s, slot, buffer](c10::ivalue::Future& done) -> c10::IValue {
          if (slot != kNoSlot && !done.hasError()) s->slots[slot].end_ns = now_ns();
          if (done.hasError()) std::rethrow_exception(done.exception_ptr());
          at::Tensor averaged = buffer;
          averaged.div_(s->world_size);
          return c10::IValue(averaged);
        },
        c10::TensorType::get());
  }

  void launch_deferred() {
    for (auto& d : s_->deferred) {
      auto inner = launch(d.buffer, d.slot);
      inner->addCallback([outer = d.future](c10::ivalue::Future& f) {
        if (f.hasError()) {
          outer->setError(f.exception_ptr());
        } else {
          outer->markCompleted(f.value());
        }
      });
    }
    s_->deferred.clear();
  }

  HookState* s_;
};

// DDP's first layout: parameters in reverse order (the last layers' gradients are ready first),
// a first bucket of first_cap bytes, then buckets of cap bytes (c10d's assignment by size).
std::vector<std::vector<size_t>> initial_layout(const std::vector<at::Tensor>& params,
                                                int64_t first_cap, int64_t cap,
                                                std::vector<size_t>& limits) {
  std::vector<at::Tensor> reversed(params.rbegin(), params.rend());
  std::vector<int64_t> indices(params.size());
  std::iota(indices.rbegin(), indices.rend(), int64_t{0});
  auto result = c10d::compute_bucket_assignment_by_size(
      reversed, {static_cast<size_t>(first_cap), static_cast<size_t>(cap)},
      std::vector<bool>(params.size(), false), indices);
  limits = std::get<1>(result);
  return std::get<0>(result);
}

}  // namespace

struct GradSync::Impl {
  ProcessGroup* group = nullptr;
  std::vector<at::Tensor> params;     // those synchronised
  std::vector<size_t> caller_index;  // params[i] is the caller's parameter caller_index[i]
  HookState state;
  std::unique_ptr<c10d::Reducer> reducer;
  bool sync = true;
  bool rebuilt = false;
};

GradSync::GradSync(ProcessGroup& group, const std::vector<at::Tensor>& params,
                   const GradSyncOptions& options)
    : impl_(std::make_unique<Impl>()) {
  const int64_t cap = bytes_of_mb(options.bucket_mb, "ddp.bucket_mb");
  const int64_t first_cap = bytes_of_mb(options.first_bucket_mb, "ddp.first_bucket_mb");
  auto* pg = static_cast<compat::PgPtr*>(group.native_handle());
  if (pg == nullptr) {
    throw DistError("gradient synchronisation needs a process group of world size > 1");
  }
  Impl& m = *impl_;
  m.group = &group;
  // As DDP: parameters that need gradients, each tensor once (a tied weight listed twice).
  std::unordered_map<const void*, size_t> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].requires_grad()) continue;
    if (!seen.emplace(params[i].unsafeGetTensorImpl(), i).second) continue;
    m.params.push_back(params[i]);
    m.caller_index.push_back(i);
  }
  if (m.params.empty()) {
    throw DistError("gradient synchronisation: the model has no parameters that need gradients");
  }
  HookState& s = m.state;
  s.pg = *pg;
  s.world_size = group.world_size();
  s.overlap = options.overlap;
  s.record = options.record;
  s.backward_start_ns = options.backward_start_ns;
  s.slots.resize(std::max<size_t>(options.max_records, 1));
  s.deferred.reserve(m.params.size());
  s.launch_args.resize(1);
  std::vector<size_t> limits;
  auto layout = initial_layout(m.params, first_cap, cap, limits);
  s.bucket_count = static_cast<int32_t>(layout.size());
  try {
    m.reducer = compat::make_reducer(m.params, std::move(layout), std::move(limits), s.pg, cap,
                                     first_cap);
    m.reducer->register_comm_hook(std::make_unique<RecordingHook>(&s));
  } catch (const std::exception& e) {
    throw DistError(fmt::format("gradient synchronisation set-up failed: {}",
                                compat::what_of(e)));
  }
}

GradSync::~GradSync() = default;

void GradSync::begin_micro_step(bool sync) {
  Impl& m = *impl_;
  m.sync = sync;
  // As DDP's forward: rebuild once the first synchronising backward has recorded the order in
  // which gradients became ready (a broadcast of rank 0's order, so every rank agrees).
  try {
    if (m.reducer->rebuild_buckets()) {
      m.rebuilt = true;
      m.state.first_layout = false;
      m.state.bucket_count = static_cast<int32_t>(m.reducer->get_grad_buckets().size());
    }
  } catch (const DistError&) {
    throw;
  } catch (const std::exception& e) {
    throw m.group->diagnose(e, "bucket rebuild");
  }
  m.reducer->prepare_for_forward();
}

void GradSync::prepare_for_backward(const at::Tensor& loss) {
  Impl& m = *impl_;
  if (!m.sync) return;  // no_sync: the reducer's hooks stay disarmed, gradients accumulate
  ++m.state.sync_step;
  m.state.deferred.clear();
  m.reducer->prepare_for_backward({loss});
}

void GradSync::backward(const at::Tensor& loss) {
  prepare_for_backward(loss);
  try {
    loss.backward();
  } catch (const DistError&) {
    throw;
  } catch (const std::exception& e) {
    throw impl_->group->diagnose(e, "gradient all-reduce");
  }
}

std::vector<BucketRecord> GradSync::take_step_records() {
  HookState& s = impl_->state;
  std::vector<BucketRecord> out(s.slots.begin(), s.slots.begin() + s.used);
  s.used = 0;
  return out;
}

int64_t GradSync::dropped() const { return impl_->state.dropped; }

bool GradSync::rebuilt() const { return impl_->rebuilt; }

std::vector<std::vector<size_t>> GradSync::bucket_layout() const {
  std::unordered_map<const void*, size_t> index;
  for (size_t i = 0; i < impl_->params.size(); ++i) {
    index[impl_->params[i].unsafeGetTensorImpl()] = impl_->caller_index[i];
  }
  std::vector<std::vector<size_t>> layout;
  for (auto& bucket : impl_->reducer->get_grad_buckets(true)) {
    auto& ids = layout.emplace_back();
    for (auto& p : bucket.getParameters()) ids.push_back(index.at(p.unsafeGetTensorImpl()));
  }
  return layout;
}

#else  // !LLMPROF_WITH_DIST

struct GradSync::Impl {};

GradSync::GradSync(ProcessGroup&, const std::vector<at::Tensor>&, const GradSyncOptions& options)
    : impl_(std::make_unique<Impl>()) {
  bytes_of_mb(options.bucket_mb, "ddp.bucket_mb");
  throw DistError("gradient synchronisation: llmprof was built without c10d", -1, kExitUsage);
}
GradSync::~GradSync() = default;
void GradSync::begin_micro_step(bool) {}
void GradSync::prepare_for_backward(const at::Tensor&) {}
void GradSync::backward(const at::Tensor& loss) { loss.backward(); }
std::vector<BucketRecord> GradSync::take_step_records() { return {}; }
int64_t GradSync::dropped() const { return 0; }
bool GradSync::rebuilt() const { return false; }
std::vector<std::vector<size_t>> GradSync::bucket_layout() const { return {}; }

#endif  // LLMPROF_WITH_DIST

}  // namespace llmprof::dist
