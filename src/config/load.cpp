// load_config, apply_override and validate: a file (YAML or JSON) is applied over the defaults,
// then each --set in order, then the cross-key checks. Every key remembers where it was last set,
// so even a cross-key error points at the file line or --set argument that caused it.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "doc_tree.h"
#include "key_spec.h"
#include "llmprof/base/printable.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"

namespace llmprof::config {
namespace {

namespace fs = std::filesystem;
using detail::DocNode;
using detail::KeySpec;
using detail::Origin;

// Where each key was last set (by path); keys left at their default are absent.
using Origins = std::map<std::string, Origin>;

// A failed cross-key check: the keys it concerns (the first is blamed) and the message.
struct Problem {
  std::vector<std::string> keys;
  std::string message;
};

// The whole file as text; a missing or unreadable file is a ConfigError.
std::string read_text(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw ConfigError("config file '" + path + "' not found", path);
  if (fs::is_directory(path, ec)) {
    throw ConfigError("config file '" + path + "' is a directory, expected a YAML or JSON file",
                      path);
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) throw ConfigError("cannot read config file '" + path + "'", path);
  return ss.str();
}

// True for a .json file (any case); everything else is read as YAML.
bool is_json_path(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".json";
}

// Every key path and group name: what an unknown name may have meant.
std::vector<std::string> suggestion_candidates() {
  std::vector<std::string> out;
  for (const KeySpec& s : detail::key_table()) {
    std::string group = detail::group_of(s.path);
    if (!group.empty() && std::find(out.begin(), out.end(), group) == out.end()) {
      out.push_back(group);
    }
    out.push_back(s.path);
  }
  return out;
}

// The first key of a group in schema order ("model.type" for "model").
std::string first_key_of(const std::string& group) {
  for (const KeySpec& s : detail::key_table()) {
    if (detail::group_of(s.path) == group) return s.path;
  }
  return group;
}

// Throws "unknown key 'P' in FILE line L col C; did you mean 'Q'?" (or "in --set ARG").
[[noreturn]] void unknown_key(const std::string& path, const Origin& origin) {
  std::string where = !origin.set_arg.empty() ? "--set " + printable(origin.set_arg)
                                              : fmt::format("{} line {} col {}", origin.file,
                                                            origin.mark.line, origin.mark.column);
  std::string hint = detail::did_you_mean(path, suggestion_candidates());
  if (hint.empty()) hint = "; `llmprof config keys` lists the known keys";
  throw ConfigError("unknown key '" + printable(path) + "' in " + where + hint, origin.file, path,
                    origin.mark.line, origin.mark.column);
}

// Stores one file value, refusing a key given twice in the same file.
void set_from_file(Config& cfg,
                   const KeySpec& spec,
                   const detail::DocEntry& entry,
                   const Origin& origin,
                   Origins& origins) {
  auto seen = origins.find(spec.path);
  if (seen != origins.end() && seen->second.set_arg.empty()) {
    throw ConfigError(fmt::format("duplicate key '{}' in {} line {} col {} (first set at line {})",
                                  spec.path, origin.file, entry.key_mark.line,
                                  entry.key_mark.column, seen->second.mark.line),
                      origin.file, spec.path, entry.key_mark.line, entry.key_mark.column);
  }
  detail::assign_value(spec, cfg, entry.value, origin);
  origins[spec.path] = origin;
}

// Applies a parsed document: groups of keys (`model: {n_layer: 4}`), top-level keys
// (`threads: 2`) and, as a convenience, flat dotted keys (`model.n_layer: 4`).
void apply_document(Config& cfg, const DocNode& root, const std::string& file, Origins& origins) {
  using Kind = DocNode::Kind;
  if (root.kind == Kind::kNull) {
    // An empty file is more likely a wrong path or a truncated copy than a wish for all defaults.
    throw ConfigError(file +
                          ": the config file is empty (no keys, only whitespace or comments); "
                          "give at least one key, e.g. `model: {n_layer: 4}`",
                      file);
  }
  if (root.kind != Kind::kMap) {
    throw ConfigError(
        fmt::format("{}: expected a mapping of config groups and keys at top level, "
                    "got {} (line {}, col {})",
                    file, detail::describe_node(root), root.mark.line, root.mark.column),
        file, "", root.mark.line, root.mark.column);
  }
  for (const detail::DocEntry& entry : root.entries) {
    // `sweep:` (grids for `llmprof sweep`, read by sweep/grid.h) is not part of a run's config.
    if (entry.key == "sweep" && (entry.value.kind == Kind::kMap || entry.value.kind == Kind::kNull))
      continue;
    if (detail::is_group(entry.key)) {
      if (entry.value.kind == Kind::kNull) continue;  // `model:` with nothing under it
      if (entry.value.kind != Kind::kMap) {
        Origin at{file, entry.value.mark, ""};
        throw ConfigError(
            fmt::format("{}: expected a mapping of its keys (e.g. {}: {{key: value}}), "
                        "got {} {}",
                        entry.key, entry.key, detail::describe_node(entry.value),
                        detail::describe(at)),
            file, entry.key, at.mark.line, at.mark.column);
      }
      for (const detail::DocEntry& sub : entry.value.entries) {
        std::string path = entry.key + "." + sub.key;
        const KeySpec* spec = detail::find_key(path);
        if (spec == nullptr) unknown_key(path, Origin{file, sub.key_mark, ""});
        set_from_file(cfg, *spec, sub, Origin{file, sub.value.mark, ""}, origins);
      }
    } else if (const KeySpec* spec = detail::find_key(entry.key)) {
      set_from_file(cfg, *spec, entry, Origin{file, entry.value.mark, ""}, origins);
    } else {
      unknown_key(entry.key, Origin{file, entry.key_mark, ""});
    }
  }
}

// Applies one `key=value`, recording its origin when origins is given.
void apply_override_impl(Config& cfg, const std::string& assignment, Origins* origins) {
  auto eq = assignment.find('=');
  auto trim = [](const std::string& s) {
    auto b = s.find_first_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(" \t") - b + 1);
  };
  std::string key = eq == std::string::npos ? std::string() : trim(assignment.substr(0, eq));
  if (key.empty()) {
    throw ConfigError("malformed override '" + printable(assignment) +
                      "': expected --set key=value, e.g. --set model.n_layer=4");
  }
  Origin origin{"", {}, assignment};
  const KeySpec* spec = detail::find_key(key);
  if (spec == nullptr && detail::is_group(key)) {
    throw ConfigError("--set " + printable(assignment) + ": '" + key +
                          "' is a group, not a key; set one of its keys, e.g. --set " +
                          first_key_of(key) + "=...",
                      "", key);
  }
  if (spec == nullptr && (key == "sweep" || key.rfind("sweep.", 0) == 0)) {
    // `llmprof config keys` lists the sweep section too: say who reads it, not "unknown key".
    throw ConfigError("--set " + printable(assignment) + ": '" + printable(key) +
                          "' belongs to the sweep section, read by `llmprof sweep` alone (give "
                          "it there, or in the config file's sweep: section); a run has no such "
                          "key",
                      "", key);
  }
  if (spec == nullptr) unknown_key(key, origin);
  detail::assign_value(*spec, cfg, detail::parse_override_value(assignment.substr(eq + 1)), origin);
  if (origins != nullptr) (*origins)[spec->path] = origin;
}

// The model's type against the task, tokenizer and data, and its shape.
std::optional<Problem> model_problem(const Config& cfg) {
  const ModelConfig& m = cfg.model;
  const TaskKind task = cfg.train.task;
  const bool gpt = m.type == ModelType::kGpt, distilbert = m.type == ModelType::kDistilbert;
  if (!distilbert && task != TaskKind::kLm) {
    return Problem{{"train.task", "model.type"},
                   fmt::format("train.task: {} needs model.type=distilbert (model.type={} trains "
                               "with train.task=lm)",
                               name(task), name(m.type))};
  }
  if (distilbert && task == TaskKind::kLm) {
    return Problem{{"train.task", "model.type"},
                   "train.task: lm is the gpt objective; model.type=distilbert trains with "
                   "train.task=mlm or classify"};
  }
  if (distilbert && cfg.data.tokenizer != TokenizerKind::kWordpiece) {
    return Problem{{"data.tokenizer", "model.type"},
                   fmt::format("data.tokenizer: {} cannot feed model.type=distilbert, which needs "
                               "the [CLS]/[SEP]/[MASK] tokens of data.tokenizer=wordpiece",
                               name(cfg.data.tokenizer))};
  }
  if (distilbert && cfg.data.path.empty()) {
    return Problem{{"data.path", "model.type"},
                   "data.path: model.type=distilbert needs a dataset file (text, jsonl, csv or "
                   "tsv); the generated corpus is for gpt"};
  }
  if (gpt && m.ffn_dim != 0 && m.ffn_dim != 4 * m.n_embd) {
    return Problem{{"model.ffn_dim", "model.type"},
                   fmt::format("model.ffn_dim: {} is not used by model.type=gpt, whose MLP is "
                               "4 * n_embd = {}; leave it 0",
                               m.ffn_dim, 4 * m.n_embd)};
  }
  if (m.max_positions != 0 && m.max_positions < m.block_size) {
    return Problem{{"model.max_positions", "model.block_size"},
                   fmt::format("model.max_positions: {} is smaller than model.block_size={}",
                               m.max_positions, m.block_size)};
  }
  if (distilbert && m.block_size < 3) {
    return Problem{{"model.block_size"},
                   fmt::format("model.block_size: {} leaves no room for a token between [CLS] "
                               "and [SEP]; use at least 3",
                               m.block_size)};
  }
  return std::nullopt;
}

// The training task's inputs and checkpointing.
std::optional<Problem> train_problem(const Config& cfg) {
  if (cfg.train.task == TaskKind::kClassify && cfg.data.label_column.empty()) {
    return Problem{{"data.label_column", "train.task"},
                   "data.label_column: train.task=classify needs the label column's header"};
  }
  if (cfg.train.checkpoint_interval > 0 && !cfg.train.save_checkpoint) {
    return Problem{
        {"train.checkpoint_interval", "train.save_checkpoint"},
        "train.checkpoint_interval: set train.save_checkpoint=true to write checkpoints"};
  }
  return std::nullopt;
}

// The bench.variants and bench.batch_sizes lists.
std::optional<Problem> bench_problem(const Config& cfg) {
  for (const std::string& v : split_list(cfg.bench.variants)) {
    if (!find_enum<BenchVariant>(v)) {
      return Problem{{"bench.variants"},
                     fmt::format("bench.variants: '{}' is not one of {}", printable(v),
                                 fmt::join(EnumTable<BenchVariant>::names, "|"))};
    }
  }
  if (split_list(cfg.bench.variants).empty()) {
    return Problem{{"bench.variants"}, "bench.variants: empty; list fp32, bf16 and/or int8"};
  }
  for (const std::string& b : split_list(cfg.bench.batch_sizes)) {
    char* end = nullptr;
    const long long v = std::strtoll(b.c_str(), &end, 10);
    if (end == b.c_str() || *end != '\0' || v < 1 || v > (1 << 20)) {
      return Problem{
          {"bench.batch_sizes"},
          fmt::format("bench.batch_sizes: '{}' is not a batch size in [1, 1048576]", printable(b))};
    }
  }
  if (split_list(cfg.bench.batch_sizes).empty()) {
    return Problem{{"bench.batch_sizes"}, "bench.batch_sizes: empty; list at least one size"};
  }
  return std::nullopt;
}

// The llama keys: grouped-query heads, the window, the RoPE scaling; llama keys on another type.
std::optional<Problem> llama_problem(const Config& cfg) {
  const ModelConfig& m = cfg.model;
  if (m.type != ModelType::kLlama) {
    const ModelConfig d;
    const bool set = m.n_kv_head != d.n_kv_head || m.intermediate_size != d.intermediate_size ||
                     m.head_dim != d.head_dim || m.tie_embeddings || m.attention_bias ||
                     m.sliding_window != 0 || m.rope_scaling_type != RopeScaling::kNone;
    if (m.fused_swiglu) {
      return Problem{{"model.fused_swiglu", "model.type"},
                     fmt::format("model.fused_swiglu: model.type {} has no SwiGLU (llama's MLP); "
                                 "set it to false",
                                 name(m.type))};
    }
    if (!set) return std::nullopt;
    return Problem{{"model.type"},
                   fmt::format("model.type: {} has no grouped-query heads, SwiGLU width, head_dim, "
                               "tied-embedding, attention_bias, sliding_window or rope_scaling "
                               "keys (those are model.type=llama's); leave them at their defaults",
                               name(m.type))};
  }
  if (m.n_kv_head > 0 && m.n_head % m.n_kv_head != 0) {
    return Problem{{"model.n_kv_head", "model.n_head"},
                   fmt::format("model.n_kv_head: {} does not divide model.n_head={} (each key/value "
                               "head serves n_head / n_kv_head query heads)",
                               m.n_kv_head, m.n_head)};
  }
  if (m.head_dim % 2 != 0) {
    return Problem{{"model.head_dim"},
                   fmt::format("model.head_dim: the rotary embedding needs an even head width, "
                               "got {}",
                               m.head_dim)};
  }
  // head_dim 0: the width is n_embd / n_head, in the keys the user set; a width that does not
  // divide is heads_problem's.
  if (m.head_dim == 0 && m.n_embd % m.n_head == 0 && (m.n_embd / m.n_head) % 2 != 0) {
    return Problem{{"model.n_embd", "model.n_head"},
                   fmt::format("model.n_embd: {} / model.n_head={} gives heads {} wide; the rotary "
                               "embedding needs an even head width: change either, or set "
                               "model.head_dim",
                               m.n_embd, m.n_head, m.n_embd / m.n_head)};
  }
  if (m.sliding_window > 0 && m.sliding_window < m.block_size) {
    return Problem{{"model.sliding_window", "model.block_size"},
                   fmt::format("model.sliding_window: {} is smaller than model.block_size={}; "
                               "llmprof attends over the whole block (no sliding-window "
                               "attention): lower model.block_size to at most the window",
                               m.sliding_window, m.block_size)};
  }
  if (m.rope_scaling_type == RopeScaling::kLlama3 &&
      m.rope_scaling_high_freq_factor <= m.rope_scaling_low_freq_factor) {
    return Problem{{"model.rope_scaling.high_freq_factor", "model.rope_scaling.low_freq_factor"},
                   fmt::format("model.rope_scaling.high_freq_factor: {} must exceed "
                               "low_freq_factor={}",
                               m.rope_scaling_high_freq_factor, m.rope_scaling_low_freq_factor)};
  }
  return std::nullopt;
}

// Heads that split the embedding evenly (llama with head_dim set: any width).
std::optional<Problem> heads_problem(const Config& cfg) {
  const ModelConfig& m = cfg.model;
  if (m.type == ModelType::kLlama && m.head_dim > 0) return std::nullopt;
  if (m.n_embd % m.n_head != 0) {
    return Problem{
        {"model.n_head", "model.n_embd"},
        fmt::format("model.n_head: {} does not divide model.n_embd={}", m.n_head, m.n_embd)};
  }
  return std::nullopt;
}

// The files each tokenizer needs, unless model.init_from brings them.
std::optional<Problem> tokenizer_problem(const Config& cfg) {
  const DataConfig& d = cfg.data;
  // model.init_from gives the tokenizer files (a Hugging Face folder's, a run's own copy); where
  // it gives none, building the tokenizer says so.
  const bool files_from_init = !cfg.model.init_from.empty();
  if (d.tokenizer == TokenizerKind::kWordpiece && d.vocab_path.empty() && !files_from_init) {
    return Problem{{"data.tokenizer", "data.vocab_path"},
                   "data.tokenizer: wordpiece needs data.vocab_path (a BERT vocab.txt, e.g. "
                   "bert-base-uncased-vocab.txt)"};
  }
  if (d.tokenizer == TokenizerKind::kHf && d.vocab_path.empty() && !files_from_init) {
    return Problem{{"data.tokenizer", "data.vocab_path"},
                   "data.tokenizer: hf needs data.vocab_path (a Hugging Face tokenizer.json)"};
  }
  if (d.tokenizer == TokenizerKind::kGpt2 && (d.vocab_path.empty() || d.merges_path.empty()) &&
      !files_from_init) {
    const char* missing = d.vocab_path.empty() ? "data.vocab_path" : "data.merges_path";
    return Problem{{"data.tokenizer", missing},
                   fmt::format("data.tokenizer: gpt2 needs data.vocab_path (encoder.json) and "
                               "data.merges_path (vocab.bpe); {} is empty",
                               missing)};
  }
  return std::nullopt;
}

// The learning-rate schedule.
std::optional<Problem> schedule_problem(const Config& cfg) {
  const ScheduleConfig& s = cfg.schedule;
  if (s.warmup_steps > s.max_steps) {
    return Problem{{"schedule.warmup_steps", "schedule.max_steps"},
                   fmt::format("schedule.warmup_steps: {} exceeds schedule.max_steps={}",
                               s.warmup_steps, s.max_steps)};
  }
  if (s.min_lr > cfg.optim.lr) {
    return Problem{{"schedule.min_lr", "optim.lr"},
                   fmt::format("schedule.min_lr: {} exceeds optim.lr={}", s.min_lr, cfg.optim.lr)};
  }
  return std::nullopt;
}

// What needs device=cuda, and what CUDA graphs cannot capture.
std::optional<Problem> device_problem(const Config& cfg) {
  if (cfg.train.precision == Precision::kFp16 && !cfg.device.is_cuda()) {
    return Problem{
        {"train.precision", "device"},
        fmt::format("train.precision: fp16 needs device=cuda (device={}); on CPU use bf16",
                    name(cfg.device.kind))};
  }
  if (cfg.model.fused_loss && !cfg.device.is_cuda()) {
    return Problem{{"model.fused_loss", "device"},
                   fmt::format("model.fused_loss: true runs llmprof's CUDA kernels and needs "
                               "device=cuda (device={}); set model.fused_loss=false",
                               name(cfg.device.kind))};
  }
  if (cfg.train.cuda_expandable_segments && !cfg.device.is_cuda()) {
    return Problem{{"train.cuda_expandable_segments", "device"},
                   fmt::format("train.cuda_expandable_segments: true configures the CUDA caching "
                               "allocator and needs device=cuda (device={}); set "
                               "train.cuda_expandable_segments=false",
                               name(cfg.device.kind))};
  }
  if (cfg.train.cuda_graphs) {
    const char* why = nullptr;
    std::vector<std::string> keys{"train.cuda_graphs"};
    if (!cfg.device.is_cuda()) {
      why = "needs device=cuda";
      keys.push_back("device");
    } else if (cfg.train.precision == Precision::kFp16) {
      why = "cannot replay fp16's loss scaler, which reads an inf/NaN flag on the host each step; "
            "use train.precision=bf16";
      keys.push_back("train.precision");
    } else if (cfg.train.grad_accum_steps != 1) {
      why = "captures one micro-batch per step; set train.grad_accum_steps=1";
      keys.push_back("train.grad_accum_steps");
    } else if (!cfg.optim.fused || cfg.optim.name == Optimizer::kSgd) {
      why = "needs the fused optimizer, whose learning rate and step count live on the device; "
            "set optim.name=adamw and optim.fused=true";
      keys.push_back("optim.fused");
    } else if (cfg.profile.level >= ProfileLevel::kModules) {
      why = "replays kernels without running the module scopes or ops that "
            "profile.level=modules/ops record; use profile.level=phases (kernels: ncu/nsys)";
      keys.push_back("profile.level");
    } else if (cfg.train.activation_checkpointing) {
      why = "does not capture activation checkpointing's recompute; set "
            "train.activation_checkpointing=false";
      keys.push_back("train.activation_checkpointing");
    }
    if (why != nullptr) {
      return Problem{keys, fmt::format("train.cuda_graphs: true {}", why)};
    }
  }
  return std::nullopt;
}

// The ddp section: nccl needs a CUDA device.
std::optional<Problem> ddp_problem(const Config& cfg) {
  if (cfg.ddp.backend == DdpBackend::kNccl && cfg.device.kind != DeviceKind::kCuda) {
    return Problem{{"ddp.backend", "device"},
                   "ddp.backend: nccl needs device=cuda; use gloo (or auto) on cpu"};
  }
  return std::nullopt;
}

// The first failed check of cfg: each key's range and choices, then the cross-key rules.
std::optional<Problem> find_problem(const Config& cfg) {
  for (const KeySpec& spec : detail::key_table()) {
    if (auto why = detail::range_problem(spec, cfg))
      return Problem{{spec.path}, spec.path + ": " + *why};
  }
  for (auto* check : {model_problem, llama_problem, train_problem, bench_problem, heads_problem,
                      tokenizer_problem, schedule_problem, device_problem, ddp_problem}) {
    if (std::optional<Problem> problem = check(cfg)) return problem;
  }
  return std::nullopt;
}

// Throws the ConfigError for a failed check, located at the first of its keys that was set
// explicitly (file line or --set), else naming the config file.
// The message is escaped whole (printable leaves escaped text as it is): a check that quotes a
// value from the file cannot carry its raw bytes to the terminal.
[[noreturn]] void throw_problem(const Problem& p, const Config& cfg, const Origins& origins) {
  const std::string message = printable(p.message, 0);
  for (const std::string& key : p.keys) {
    auto it = origins.find(key);
    if (it == origins.end()) continue;
    const Origin& o = it->second;
    throw ConfigError(message + " " + detail::describe(o), cfg.source_file, p.keys.front(),
                      o.mark.line, o.mark.column);
  }
  std::string where =
      cfg.source_file.empty() ? "" : " (config " + printable(cfg.source_file, 0) + ")";
  throw ConfigError(message + where, cfg.source_file, p.keys.front());
}

// A run shorter than its warm-up (the quick start shortened with --set schedule.max_steps=30)
// warms up for the whole run: the warm-up is clamped, with a note, instead of refused.
void clamp_warmup(Config& cfg) {
  ScheduleConfig& s = cfg.schedule;
  if (s.warmup_steps <= s.max_steps) return;
  cfg.notes.push_back(
      fmt::format("schedule.warmup_steps {} exceeds schedule.max_steps {}: "
                  "warming up for all {} steps instead (schedule.warmup_steps={})",
                  s.warmup_steps, s.max_steps, s.max_steps, s.max_steps));
  s.warmup_steps = s.max_steps;
}

}  // namespace

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::string text = read_text(path);
  DocNode root =
      is_json_path(path) ? detail::parse_json(text, path) : detail::parse_yaml(text, path);
  Config cfg;
  cfg.source_file = path;
  Origins origins;
  apply_document(cfg, root, path, origins);
  for (const std::string& assignment : overrides) apply_override_impl(cfg, assignment, &origins);
  for (const auto& [key, origin] : origins) {
    if (!origin.set_arg.empty()) cfg.set_keys.emplace_back(key, origin.set_arg);
    cfg.given_keys.emplace_back(key, !origin.set_arg.empty() ? "--set " + origin.set_arg
                                     : origin.mark.line > 0
                                         ? fmt::format("{} line {}", origin.file, origin.mark.line)
                                         : origin.file);
  }
  clamp_warmup(cfg);
  if (auto problem = find_problem(cfg)) throw_problem(*problem, cfg, origins);
  return cfg;
}

void apply_override(Config& cfg, const std::string& assignment) {
  apply_override_impl(cfg, assignment, nullptr);
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    std::string item = value.substr(start, comma - start);
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b != std::string::npos) items.push_back(item.substr(b, e - b + 1));
    start = comma + 1;
  }
  return items;
}

std::vector<int64_t> bench_batch_sizes(const Config& cfg) {
  validate(cfg);
  std::vector<int64_t> sizes;
  for (const std::string& b : split_list(cfg.bench.batch_sizes)) sizes.push_back(std::stoll(b));
  return sizes;
}

std::vector<BenchVariant> bench_variants(const Config& cfg) {
  validate(cfg);
  std::vector<BenchVariant> variants;
  for (const std::string& v : split_list(cfg.bench.variants)) {
    variants.push_back(parse_enum<BenchVariant>(v));
  }
  return variants;
}

void validate(const Config& cfg) {
  if (auto problem = find_problem(cfg)) throw_problem(*problem, cfg, Origins{});
}

}  // namespace llmprof::config
