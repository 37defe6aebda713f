#include "llmprof/tune/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/plan/plan.h"
#include "sets_util.h"

namespace llmprof::tune {

namespace {

using detail::key_of;
using detail::plus;
using detail::value_of;

// Fixed priors (llmprof/tune/space.h): the ratio of turning the knob on.
const std::map<std::string, double>& priors() {
  static const std::map<std::string, double> p = {{"model.attention=sdpa", 0.9},
                                                  {"optim.fused=true", 0.95},
                                                  {"model.fused_loss=true", 0.95},
                                                  {"model.fused_norm=true", 0.97},
                                                  {"model.fused_swiglu=true", 0.98},
                                                  {"train.cuda_graphs=true", 0.9},
                                                  {"ddp.bucket_mb", 0.98}};
  return p;
}

// The planner's bytes and FLOPs per token of cfg; nullopt when it cannot plan it.
struct PerToken {
  double bytes = 0, flops = 0;
};
std::optional<PerToken> per_token(const config::Config& cfg, const Machine& m) {
  try {
    plan::PlanOptions opt;
    opt.vocab_size = m.vocab_size;
    opt.world_size = m.nproc;
    opt.cuda = m.device.cuda;
    const plan::MemoryPlan p = plan::plan_memory(cfg, opt);
    // The planner's figures are a micro-batch's (plan's technique table scales them by the
    // accumulation steps): per token of one micro-batch.
    const double tokens = static_cast<double>(cfg.train.batch_size * cfg.model.block_size);
    if (tokens <= 0) return std::nullopt;
    return PerToken{p.bytes_per_step / tokens, p.flops_per_step / tokens};
  } catch (const Error&) {
    return std::nullopt;
  }
}

// One key's change, base -> changed (both loaded configs).
Prediction predict_key(const std::string& set,
                       const config::Config& base,
                       const config::Config& changed,
                       const Machine& m) {
  const std::string key = key_of(set);
  if (key == "train.batch_size" || key == "train.grad_accum_steps" ||
      key == "train.activation_checkpointing") {
    const auto a = per_token(base, m), b = per_token(changed, m);
    if (!a || !b) return {1, "none: the planner cannot plan this config"};
    if (key == "train.activation_checkpointing") {
      return {a->flops > 0 ? b->flops / a->flops : 1, "plan: FLOPs per token"};
    }
    return {a->bytes > 0 ? b->bytes / a->bytes : 1, "plan: DRAM bytes per token"};
  }
  if (key == "train.precision") {
    const auto& d = m.device;
    if (d.fp32_flops_per_s <= 0 || d.bf16_flops_per_s <= 0) {
      return {1, "none: no fp32 and bf16 peaks for " + d.name};
    }
    const double fp32_over_bf16 = d.fp32_flops_per_s / d.bf16_flops_per_s;
    const bool to_low = changed.train.precision != config::Precision::kFp32;
    const bool from_low = base.train.precision != config::Precision::kFp32;
    const double r = to_low == from_low ? 1 : (to_low ? fp32_over_bf16 : 1 / fp32_over_bf16);
    return {r, "plan: " + d.name + " fp32 / bf16 peak"};
  }
  if (key == "threads") {
    const auto threads = [&](int64_t t) { return static_cast<double>(t > 0 ? t : m.cores); };
    return {threads(base.threads) / threads(changed.threads), "prior: ideal scaling over cores"};
  }
  if (key == "data.num_workers") {
    const bool on = changed.data.num_workers > 0, was = base.data.num_workers > 0;
    return {on == was ? 1 : (on ? 0.97 : 1 / 0.97), "prior: fixed"};
  }
  if (key == "ddp.bucket_mb") return {0.98, "prior: fixed"};
  if (key == "train.cuda_expandable_segments") {
    return {1,
            "prior: memory, not speed (the planned peak drops by the caching allocator's "
            "fragmentation allowance)"};
  }
  const auto& p = priors();
  for (const auto& [on, ratio] : p) {
    if (key_of(on) != key) continue;
    const bool now = config::get_value(changed, key) == value_of(on);
    const bool was = config::get_value(base, key) == value_of(on);
    return {now == was ? 1 : (now ? ratio : 1 / ratio), "prior: fixed"};
  }
  return {1, "none: no model of " + key};
}

}  // namespace

std::string_view numerics_name(Numerics n) { return n == Numerics::kKept ? "kept" : "changed"; }

double Knob::effect() const {
  double e = 0;
  for (const KnobValue& v : values) e = std::max(e, std::abs(std::log(v.prediction.ratio)));
  return e;
}

Numerics numerics_of(const std::string& key, const config::Config& base) {
  static const std::set<std::string> kept = {"threads",
                                             "optim.fused",
                                             "model.fused_loss",
                                             "model.fused_norm",
                                             "model.fused_swiglu",
                                             "ddp.bucket_mb",
                                             "ddp.first_bucket_mb",
                                             "ddp.overlap",
                                             "data.num_workers",
                                             "train.cuda_graphs",
                                             "train.cuda_expandable_segments",
                                             "model.attention",
                                             "train.test_step_sleep_ms",
                                             "profile.level",
                                             "train.batch_size+train.grad_accum_steps"};
  if (kept.count(key)) return Numerics::kKept;
  // Checkpointing recomputes each block's forward: the same numbers unless dropout draws anew.
  if (key == "train.activation_checkpointing" && base.model.dropout == 0) return Numerics::kKept;
  return Numerics::kChanged;
}

Prediction predict(const config::Config& base,
                   const std::vector<std::string>& sets,
                   const Machine& machine) {
  Prediction out{1, ""};
  config::Config changed = base;
  for (const std::string& s : sets) config::apply_override(changed, s);
  std::set<std::string> sources;
  bool batch_done = false;
  for (const std::string& s : sets) {
    const std::string key = key_of(s);
    const bool batch = key == "train.batch_size" || key == "train.grad_accum_steps";
    if (batch && batch_done) continue;  // one prediction for the pair
    batch_done = batch_done || batch;
    const Prediction p = predict_key(s, base, changed, machine);
    out.ratio *= p.ratio;
    sources.insert(p.source);
  }
  for (const std::string& s : sources) out.source += (out.source.empty() ? "" : "; ") + s;
  return out;
}

std::vector<std::string> keep_numerics_only(std::vector<Knob>& knobs) {
  std::vector<std::string> dropped;
  for (const Knob& k : knobs) {
    if (k.numerics == Numerics::kChanged) dropped.push_back(k.key);
  }
  knobs.erase(std::remove_if(knobs.begin(), knobs.end(),
                             [](const Knob& k) { return k.numerics == Numerics::kChanged; }),
              knobs.end());
  return dropped;
}

}  // namespace llmprof::tune
