#include "llmprof/profile/scope.h"

namespace llmprof::profile {

namespace {
constexpr std::string_view kScopeNames[kNumScopes] = {
    "embedding", "block",     "ln_1",         "attn",     "attn.qkv", "attn.core",
    "attn.scores", "attn.softmax", "attn.mix", "attn.proj", "ln_2",     "mlp",
    "mlp.up",    "mlp.act",   "mlp.down",     "ln_f",     "lm_head",  "loss"};
constexpr int kParents[kNumScopes] = {
    -1,                                   // embedding
    -1,                                   // block
    static_cast<int>(Scope::kBlock),      // ln_1
    static_cast<int>(Scope::kBlock),      // attn
    static_cast<int>(Scope::kAttn),       // attn.qkv
    static_cast<int>(Scope::kAttn),       // attn.core
    static_cast<int>(Scope::kAttnCore),   // attn.scores
    static_cast<int>(Scope::kAttnCore),   // attn.softmax
    static_cast<int>(Scope::kAttnCore),   // attn.mix
    static_cast<int>(Scope::kAttn),       // attn.proj
    static_cast<int>(Scope::kBlock),      // ln_2
    static_cast<int>(Scope::kBlock),      // mlp
    static_cast<int>(Scope::kMlp),        // mlp.up
    static_cast<int>(Scope::kMlp),        // mlp.act
    static_cast<int>(Scope::kMlp),        // mlp.down
    -1,                                   // ln_f
    -1,                                   // lm_head
    -1};                                  // loss
thread_local ScopeRecorder* t_recorder = nullptr;
}  // namespace

std::string_view scope_name(Scope scope) { return kScopeNames[static_cast<int>(scope)]; }
int parent_scope(Scope scope) { return kParents[static_cast<int>(scope)]; }

ScopeRecorder::ScopeRecorder(size_t capacity, SeqPeekFn seq_peek) : seq_peek_(seq_peek) {
  events_.reserve(capacity);
}

ScopeRecorder* active_scope_recorder() { return t_recorder; }
void set_active_scope_recorder(ScopeRecorder* recorder) { t_recorder = recorder; }

}  // namespace llmprof::profile
