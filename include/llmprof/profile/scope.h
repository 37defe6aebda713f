// Module scopes: named, nested regions of the model's forward pass (block > attn > attn.qkv), each
// with its block index. The model marks them with LLMPROF_SCOPE; when no recorder is active on the
// thread (profile.level < modules, or outside the schedule's active steps) a scope costs one
// thread-local load and a branch. An active recorder stores two clock reads and the autograd
// sequence-number range of the scope into a preallocated buffer: backward nodes carry the
// sequence number of the forward op that created them, so the range maps each backward node
// back to the innermost forward scope that created it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "llmprof/profile/nvtx.h"
#include "llmprof/profile/phase.h"

namespace llmprof::profile {

// Scope ids are stable: they index tables and name rows of modules.csv.
enum class Scope : int16_t {
  kEmbedding = 0,
  kBlock,
  kLn1,
  kAttn,
  kAttnQkv,
  kAttnCore,
  kAttnScores,
  kAttnSoftmax,
  kAttnMix,
  kAttnProj,
  kLn2,
  kMlp,
  kMlpUp,
  kMlpAct,
  kMlpDown,
  kLnF,
  kLmHead,
  kLoss,
  // llama (model/llama.h): separate q/k/v/o projections, the rotary embedding, the SwiGLU gate,
  // and RMSNorm (input, post-attention and final norms: one name, the block index tells them).
  kAttnQ,
  kAttnK,
  kAttnV,
  kAttnO,
  kAttnRope,
  kMlpGate,
  kNorm,
};
inline constexpr int kNumScopes = 25;  // the built-in scopes above

// Scope ids from kNumScopes up name a user's own modules (register_scope): every table indexed
// by scope id holds kMaxScopes entries.
inline constexpr int kMaxScopes = 256;
// Analytic forward FLOPs of one call of each scope, by scope id; -1 = not modelled.
using ScopeFlops = std::array<double, kMaxScopes>;

// The id of a user scope named `name` (e.g. "conv1", "encoder.layer"), registered on first use;
// the same name gives the same id, and a built-in name its built-in id. Thread-safe; call it
// outside the timed step (LLMPROF_NAMED_SCOPE caches it). Throws llmprof::Error past kMaxScopes.
Scope register_scope(std::string_view name);

// "embedding", "block", "ln_1", "attn", "attn.qkv", ... "loss", or a registered user name.
std::string_view scope_name(Scope scope);
// The scope that contains it in the model's structure (attn.qkv -> attn -> block), or -1.
int parent_scope(Scope scope);

// One executed scope. pass: 0 forward, 1 recompute (activation checkpointing, during backward).
struct ScopeEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t seq_begin = 0;  // autograd sequence numbers created in [seq_begin, seq_end)
  int64_t seq_end = 0;
  int32_t step = 0;
  int16_t scope = 0;
  int16_t block = -1;     // layer index, -1 outside blocks
  int32_t parent = -1;    // index in events() of the enclosing event, -1 at top level
  int8_t pass = 0;
};

// Records scope events of the current step. Not thread-safe: the forward runs on one thread.
class ScopeRecorder {
 public:
  using SeqPeekFn = int64_t (*)();
  // capacity: events kept (full -> recording stops, warned once); seq_peek reads the next
  // autograd sequence number (at::sequence_number::peek, injected to keep torch out of here).
  ScopeRecorder(size_t capacity, SeqPeekFn seq_peek);

  // Begin/end of recording (the schedule's active steps); events accumulate across steps.
  void set_step(int32_t step, bool in_backward) {
    step_ = step;
    pass_ = in_backward ? 1 : 0;
  }
  void enter(Scope scope, int16_t block) {
    if (depth_ < kMaxDepth) {
      if (events_.size() < events_.capacity()) {
        ScopeEvent e;
        e.start_ns = now_ns();
        e.seq_begin = seq_peek_();
        e.step = step_;
        e.scope = static_cast<int16_t>(scope);
        e.block = block;
        e.parent = depth_ > 0 ? stack_[depth_ - 1] : -1;
        e.pass = pass_;
        stack_[depth_] = static_cast<int32_t>(events_.size());
        events_.push_back(e);
      } else {
        stack_[depth_] = -1;
        ++dropped_;
      }
    } else {
      ++dropped_;
    }
    ++depth_;
  }
  void exit() {
    --depth_;
    if (depth_ >= kMaxDepth || stack_[depth_] < 0) return;
    ScopeEvent& e = events_[static_cast<size_t>(stack_[depth_])];
    e.seq_end = seq_peek_();
    e.end_ns = now_ns();
  }
  // Current innermost open scope event index, or -1 (memory attribution).
  int32_t current() const { return depth_ > 0 && depth_ <= kMaxDepth ? stack_[depth_ - 1] : -1; }

  const std::vector<ScopeEvent>& events() const { return events_; }
  int64_t dropped() const { return dropped_; }
  size_t capacity() const { return events_.capacity(); }
  void clear() { events_.clear(); }
  void truncate(size_t n) {
    if (n < events_.size()) events_.resize(n);
  }

 private:
  static constexpr int kMaxDepth = 16;
  std::vector<ScopeEvent> events_;
  SeqPeekFn seq_peek_;
  int32_t stack_[kMaxDepth] = {};
  int depth_ = 0;
  int32_t step_ = 0;
  int8_t pass_ = 0;
  int64_t dropped_ = 0;
};

// The recorder scopes on this thread write to; nullptr = scopes are no-ops.
ScopeRecorder* active_scope_recorder();
void set_active_scope_recorder(ScopeRecorder* recorder);

// RAII scope: `ScopedModule s(Scope::kAttnQkv, block_index);`.
// With profile.nvtx the scope is also an NVTX range (name: the scope's, payload: the block).
class ScopedModule {
 public:
  ScopedModule(Scope scope, int16_t block)
      : recorder_(active_scope_recorder()), nvtx_(nvtx::enabled()) {
    if (nvtx_) nvtx::push(scope_name(scope).data(), block);  // names are NUL-terminated
    if (recorder_ != nullptr) recorder_->enter(scope, block);
  }
  ~ScopedModule() {
    if (recorder_ != nullptr) recorder_->exit();
    if (nvtx_) nvtx::pop();
  }
  ScopedModule(const ScopedModule&) = delete;
  ScopedModule& operator=(const ScopedModule&) = delete;

 private:
  ScopeRecorder* recorder_;
  bool nvtx_;
};

#define LLMPROF_SCOPE_CAT2(a, b) a##b
#define LLMPROF_SCOPE_CAT(a, b) LLMPROF_SCOPE_CAT2(a, b)
// Marks the rest of the enclosing C++ block as module scope `scope` of layer `block`.
#define LLMPROF_SCOPE(scope, block) \
  ::llmprof::profile::ScopedModule LLMPROF_SCOPE_CAT(llmprof_scope_, __LINE__)(scope, block)

// The same for a user's module named by a string literal: `LLMPROF_NAMED_SCOPE("conv1", -1);`.
// The name is registered once (a function-local static), so the scope costs what LLMPROF_SCOPE
// costs. block: the layer index, or -1.
#define LLMPROF_NAMED_SCOPE(name, block)                                                     \
  static const ::llmprof::profile::Scope LLMPROF_SCOPE_CAT(llmprof_scope_id_, __LINE__) =    \
      ::llmprof::profile::register_scope(name);                                              \
  ::llmprof::profile::ScopedModule LLMPROF_SCOPE_CAT(llmprof_scope_, __LINE__)(              \
      LLMPROF_SCOPE_CAT(llmprof_scope_id_, __LINE__), static_cast<int16_t>(block))

}  // namespace llmprof::profile
