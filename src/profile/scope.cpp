#include "llmprof/profile/scope.h"

#include <fmt/format.h>

#include <deque>
#include <mutex>
#include <string>

#include "llmprof/error.h"

namespace llmprof::profile {

namespace {
constexpr std::string_view kScopeNames[kNumScopes] = {
    "embedding", "block",     "ln_1",         "attn",     "attn.qkv", "attn.core",
    "attn.scores", "attn.softmax", "attn.mix", "attn.proj", "ln_2",     "mlp",
    "mlp.up",    "mlp.act",   "mlp.down",     "ln_f",     "lm_head",  "loss",
    "attn.q",    "attn.k",    "attn.v",       "attn.o",   "attn.rope", "mlp.gate", "norm"};
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
    -1,                                   // loss
    static_cast<int>(Scope::kAttn),       // attn.q
    static_cast<int>(Scope::kAttn),       // attn.k
    static_cast<int>(Scope::kAttn),       // attn.v
    static_cast<int>(Scope::kAttn),       // attn.o
    static_cast<int>(Scope::kAttn),       // attn.rope
    static_cast<int>(Scope::kMlp),        // mlp.gate
    -1};                                  // norm: in a block (its index) or the final one (-1)
thread_local ScopeRecorder* t_recorder = nullptr;

// User scopes: names by id - kNumScopes. Registration appends under the lock; a name's slot is
// never moved or changed afterwards (std::deque keeps references stable).
struct UserScopes {
  std::mutex mu;
  std::deque<std::string> names;
};
UserScopes& user_scopes() {
  static UserScopes u;
  return u;
}
}  // namespace

Scope register_scope(std::string_view name) {
  for (int i = 0; i < kNumScopes; ++i) {
    if (kScopeNames[i] == name) return static_cast<Scope>(i);
  }
  UserScopes& u = user_scopes();
  std::lock_guard<std::mutex> lock(u.mu);
  for (size_t i = 0; i < u.names.size(); ++i) {
    if (u.names[i] == name) return static_cast<Scope>(kNumScopes + static_cast<int>(i));
  }
  if (kNumScopes + static_cast<int>(u.names.size()) >= kMaxScopes) {
    throw Error(fmt::format("llmprof: scope '{}' is one more than the {} user scopes llmprof holds",
                            name, kMaxScopes - kNumScopes));
  }
  u.names.emplace_back(name);
  return static_cast<Scope>(kNumScopes + static_cast<int>(u.names.size()) - 1);
}

std::string_view scope_name(Scope scope) {
  const int id = static_cast<int>(scope);
  if (id >= 0 && id < kNumScopes) return kScopeNames[id];
  UserScopes& u = user_scopes();
  std::lock_guard<std::mutex> lock(u.mu);
  const int user = id - kNumScopes;
  if (user >= 0 && user < static_cast<int>(u.names.size())) return u.names[static_cast<size_t>(user)];
  return "(unknown scope)";
}

int parent_scope(Scope scope) {
  const int id = static_cast<int>(scope);
  return id >= 0 && id < kNumScopes ? kParents[id] : -1;  // user scopes nest as they run
}

ScopeRecorder::ScopeRecorder(size_t capacity, SeqPeekFn seq_peek) : seq_peek_(seq_peek) {
  events_.reserve(capacity);
}

ScopeRecorder* active_scope_recorder() { return t_recorder; }
void set_active_scope_recorder(ScopeRecorder* recorder) { t_recorder = recorder; }

}  // namespace llmprof::profile
