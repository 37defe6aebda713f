// The knobs of a search: parsed from --space, or generated from the config and the machine; and
// the candidates they make (llmprof/tune/space.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/device.h"
#include "llmprof/error.h"
#include "llmprof/tune/space.h"
#include "sets_util.h"

namespace llmprof::tune {

namespace {

using detail::key_of;
using detail::plus;
using detail::value_of;

constexpr const char* kBatchPair = "train.batch_size+train.grad_accum_steps";

const std::set<std::string>& trial_keys() {
  static const std::set<std::string> keys = {"schedule.max_steps",
                                             "train.seed",
                                             "train.eval_interval",
                                             "train.eval_steps",
                                             "train.save_checkpoint",
                                             "train.checkpoint_interval",
                                             "train.resume_from",
                                             "output.dir",
                                             "output.name",
                                             "model.init_from",
                                             "device",
                                             "device_index"};
  return keys;
}

// Why key is not a knob of cfg's model type ("" when it is): DistilBERT has neither activation
// checkpointing nor an attention implementation to choose (src/train/task.cpp).
std::string not_for_model(const std::string& key, const config::Config& cfg) {
  if (cfg.model.type != config::ModelType::kDistilbert) return "";
  if (key == "train.activation_checkpointing" || key == "model.attention") {
    return fmt::format("{}: model.type=distilbert has no such choice (gpt and llama do)", key);
  }
  return "";
}

void sort_by_effect(std::vector<Knob>& knobs) {
  std::stable_sort(knobs.begin(), knobs.end(),
                   [](const Knob& a, const Knob& b) { return a.effect() > b.effect(); });
}

// Whether config_path loads with the sets (a key the model type has, a value in its domain).
bool loads(const std::string& config_path, const std::vector<std::string>& sets) {
  try {
    config::load_config(config_path, sets);
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

// A generated knob: each value kept where the config loads with it.
void propose(std::vector<Knob>& knobs,
             const std::string& key,
             const std::vector<std::vector<std::string>>& values,
             const std::string& config_path,
             const std::vector<std::string>& check_sets,
             const config::Config& base,
             const Machine& machine) {
  if (!not_for_model(key, base).empty()) return;
  Knob k;
  k.key = key;
  k.numerics = numerics_of(key, base);
  for (const auto& sets : values) {
    if (!loads(config_path, plus(check_sets, sets))) continue;
    config::Config on_device = base;
    if (machine.device.cuda) config::apply_override(on_device, "device=cuda");
    k.values.push_back({sets, predict(on_device, sets, machine)});
  }
  if (!k.values.empty()) knobs.push_back(std::move(k));
}

std::string flag(bool b) { return b ? "true" : "false"; }

}  // namespace

std::vector<Knob> parse_space(const std::string& config_path,
                              const std::vector<std::string>& base_sets,
                              const std::vector<std::string>& space,
                              const Machine& machine) {
  const config::Config base = config::load_config(config_path, base_sets);
  std::vector<Knob> knobs;
  std::set<std::string> seen;
  for (const std::string& arg : space) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(fmt::format("--space {}: give KEY=V1,V2,... (e.g. threads=1,2)", arg));
    }
    const std::string key = arg.substr(0, eq);
    if (trial_keys().count(key)) {
      throw UsageError(fmt::format(
          "--space {}: {} is fixed by each trial (or is not about speed); search another key", arg,
          key));
    }
    if (!seen.insert(key).second) {
      throw UsageError(
          fmt::format("--space {}: {} is given twice; list its values once", arg, key));
    }
    if (const std::string why = not_for_model(key, base); !why.empty()) {
      throw UsageError("--space " + arg + ": " + why);
    }
    const std::vector<std::string> values = config::split_list(arg.substr(eq + 1));
    if (values.empty()) throw UsageError(fmt::format("--space {}: no values", arg));
    Knob k;
    k.key = key;
    k.numerics = numerics_of(key, base);
    for (const std::string& v : values) {
      const std::string set = key + "=" + v;
      config::load_config(config_path, plus(base_sets, {set}));  // ConfigError names key, value
      k.values.push_back({{set}, predict(base, {set}, machine)});
    }
    knobs.push_back(std::move(k));
  }
  sort_by_effect(knobs);
  return knobs;
}

std::vector<Knob> default_space(const std::string& config_path,
                                const std::vector<std::string>& base_sets,
                                const Machine& machine) {
  const config::Config base = config::load_config(config_path, base_sets);
  std::vector<std::string> check = base_sets;
  // The named device has CUDA's caching allocator, the config's device none (the CPU).
  if (machine.device.cuda && !device::capabilities(base.device).caching_allocator) {
    check.push_back("device=cuda");  // the space of the named device, not of the config's
  }
  const bool cuda = machine.device.cuda;
  const int64_t B = base.train.batch_size, A = base.train.grad_accum_steps;
  const int64_t largest = machine.largest_batch;
  std::vector<Knob> knobs;
  auto add = [&](const std::string& key, const std::vector<std::vector<std::string>>& values) {
    propose(knobs, key, values, config_path, check, base, machine);
  };
  std::vector<std::vector<std::string>> batch;  // the global batch B x A kept
  if (B % 2 == 0)
    batch.push_back({fmt::format("train.batch_size={}", B / 2),
                     fmt::format("train.grad_accum_steps={}", A * 2)});
  if (A % 2 == 0 && (largest == 0 || 2 * B <= largest)) {
    batch.push_back({fmt::format("train.batch_size={}", B * 2),
                     fmt::format("train.grad_accum_steps={}", A / 2)});
  }
  add(kBatchPair, batch);
  if (largest >= 2 * B) add("train.batch_size", {{fmt::format("train.batch_size={}", 2 * B)}});
  if (!cuda && machine.cores > 1) {
    std::vector<std::vector<std::string>> threads;
    const int64_t now = base.threads > 0 ? base.threads : machine.cores;
    for (int64_t t : {int64_t{1}, machine.cores}) {
      if (t != now) threads.push_back({fmt::format("threads={}", t)});
    }
    add("threads", threads);
  }
  const bool fp32 = base.train.precision == config::Precision::kFp32;
  add("train.precision", {{std::string("train.precision=") + (fp32 ? "bf16" : "fp32")}});
  add("train.activation_checkpointing",
      {{"train.activation_checkpointing=" + flag(!base.train.activation_checkpointing)}});
  const bool sdpa = config::get_value(base, "model.attention") == "sdpa";
  add("model.attention", {{std::string("model.attention=") + (sdpa ? "manual" : "sdpa")}});
  if (cuda) add("model.fused_loss", {{"model.fused_loss=" + flag(!base.model.fused_loss)}});
  if (cuda) add("model.fused_norm", {{"model.fused_norm=" + flag(!base.model.fused_norm)}});
  if (cuda) add("model.fused_swiglu", {{"model.fused_swiglu=" + flag(!base.model.fused_swiglu)}});
  if (base.optim.name != config::Optimizer::kSgd) {
    add("optim.fused", {{"optim.fused=" + flag(!base.optim.fused)}});
  }
  add("data.num_workers",
      {{fmt::format("data.num_workers={}", base.data.num_workers > 0 ? 0 : 1)}});
  if (cuda && !base.train.cuda_graphs) {
    add("train.cuda_graphs", {{"train.cuda_graphs=true", "optim.fused=true"}});
  }
  if (cuda && !base.train.cuda_expandable_segments) {
    add("train.cuda_expandable_segments", {{"train.cuda_expandable_segments=true"}});
  }
  if (machine.nproc > 1) add("ddp.bucket_mb", {{"ddp.bucket_mb=5"}, {"ddp.bucket_mb=100"}});
  sort_by_effect(knobs);
  return knobs;
}

std::vector<CandidateSets> candidates_of(const std::vector<Knob>& knobs,
                                         const std::string& config_path,
                                         const std::vector<std::string>& base_sets) {
  const config::Config base = config::load_config(config_path, base_sets);
  const std::string start = config::to_yaml(base);
  // A knob whose values include the start's (--space threads=1,2 from threads=1) needs no
  // "unchanged" option of its own in the grid; a generated knob (values other than the start's)
  // does.
  std::vector<int64_t> options(knobs.size());
  std::vector<int> start_value(knobs.size(), -1);  // the value that is the start's, if any
  int64_t grid = 1;
  for (size_t i = 0; i < knobs.size(); ++i) {
    for (size_t v = 0; v < knobs[i].values.size(); ++v) {
      const auto& sets = knobs[i].values[v].sets;
      if (config::to_yaml(config::load_config(config_path, plus(base_sets, sets))) == start) {
        start_value[i] = static_cast<int>(v);
      }
    }
    options[i] = static_cast<int64_t>(knobs[i].values.size()) + (start_value[i] >= 0 ? 0 : 1);
    grid *= options[i];
  }
  // Each point: per knob, no value (-1) or one of its values.
  std::vector<std::vector<int>> points;
  if (grid - 1 <= kMaxGridCandidates) {
    std::vector<int> idx(knobs.size(), -1);
    for (int64_t n = 0; n < grid; ++n) {
      int64_t rest = n;
      for (size_t i = 0; i < knobs.size(); ++i) {
        const int64_t unchanged = options[i] - static_cast<int64_t>(knobs[i].values.size());
        idx[i] = static_cast<int>(rest % options[i] - unchanged);
        rest /= options[i];
      }
      points.push_back(idx);
    }
  } else {
    for (size_t i = 0; i < knobs.size(); ++i) {
      for (size_t v = 0; v < knobs[i].values.size(); ++v) {
        std::vector<int> idx(knobs.size(), -1);
        idx[i] = static_cast<int>(v);
        points.push_back(idx);
      }
    }
  }
  std::vector<CandidateSets> out;
  std::set<std::string> configs = {start};  // a point equal to the start or to an earlier one
  for (const auto& idx : points) {
    CandidateSets c;
    c.prediction = {1, ""};
    std::set<std::string> sources;
    bool changed = false;
    for (size_t i = 0; i < knobs.size(); ++i) {
      if (idx[i] < 0 || idx[i] == start_value[i]) continue;  // the knob left at the start's
      const KnobValue& v = knobs[i].values[static_cast<size_t>(idx[i])];
      c.sets = plus(c.sets, v.sets);
      c.prediction.ratio *= v.prediction.ratio;
      sources.insert(v.prediction.source);
      changed = changed || knobs[i].numerics == Numerics::kChanged;
    }
    if (c.sets.empty()) continue;
    const config::Config cfg = config::load_config(config_path, plus(base_sets, c.sets));
    if (!configs.insert(config::to_yaml(cfg)).second) continue;  // the start, or seen
    // Micro-batch and accumulation changed together keep the numbers when the global batch stays.
    const bool only_batch = std::all_of(c.sets.begin(), c.sets.end(), [](const std::string& s) {
      const std::string k = key_of(s);
      return k == "train.batch_size" || k == "train.grad_accum_steps";
    });
    if (only_batch) {
      changed = cfg.train.batch_size * cfg.train.grad_accum_steps !=
                base.train.batch_size * base.train.grad_accum_steps;
    }
    c.numerics = changed ? Numerics::kChanged : Numerics::kKept;
    for (const std::string& s : sources) {
      c.prediction.source += (c.prediction.source.empty() ? "" : "; ") + s;
    }
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const CandidateSets& a, const CandidateSets& b) {
    return std::abs(std::log(a.prediction.ratio)) > std::abs(std::log(b.prediction.ratio));
  });
  return out;
}

}  // namespace llmprof::tune
