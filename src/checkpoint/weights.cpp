#include "llmprof/checkpoint/weights.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "llmprof/base/printable.h"
#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "llmprof/hf/files.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/rundir/files.h"

namespace llmprof::checkpoint {

namespace fs = std::filesystem;

namespace {

std::string shape_text(const torch::Tensor& t) {
  std::string s = "(";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + ")";
}

// Every named parameter and buffer, tied tensors once (by name, as named_parameters gives them).
std::vector<std::pair<std::string, torch::Tensor>> named_tensors(torch::nn::Module& m) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : m.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : m.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

const std::string kTokenizerDir(rundir::kCheckpointTokenizerDir);
const std::string kHfConfigCopy(rundir::kCheckpointHfConfig);

// checkpoint.json's tokenizer: its files copied into tmp_dir/tokenizer and their content hash. A
// tokenizer without files or hash (a test's fake) is recorded as before: type and path only.
void save_tokenizer(const fs::path& tmp_dir, const config::Config& cfg,
                    const data::Tokenizer* tokenizer, rundir::CheckpointMeta& meta) {
  const config::DataConfig& d = cfg.data;
  if (tokenizer == nullptr || tokenizer->fingerprint().empty()) {
    meta.tokenizer_ref = rundir::CheckpointTokenizerRef{std::string(config::name(d.tokenizer)),
                                                        d.vocab_path};
    return;
  }
  fs::create_directories(tmp_dir / kTokenizerDir);
  const std::vector<std::string> files = tokenizer->save_files((tmp_dir / kTokenizerDir).string());
  std::string source = d.tokenizer == config::TokenizerKind::kChar && d.vocab_path.empty()
                           ? "built from the corpus " + (d.path.empty() ? "(generated)" : d.path)
                           : d.vocab_path;
  if (d.tokenizer == config::TokenizerKind::kGpt2) source += ", " + d.merges_path;
  meta.tokenizer = rundir::CheckpointTokenizer{std::string(tokenizer->name()),
                                               tokenizer->fingerprint(),
                                               tokenizer->vocab_size(),
                                               d.lower_case,
                                               kTokenizerDir,
                                               files,
                                               source,
                                               cfg.given_tokenizer_keys};
}

// The Hugging Face config.json this run's weights started from: model.init_from's, or the copy an
// llmprof checkpoint it started from kept. Empty when there is none.
std::string source_hf_config(const config::Config& cfg) {
  const std::string& from = cfg.model.init_from;
  if (from.empty()) return {};
  if (is_hf_folder(from)) return (fs::path(from) / hf::kConfigJson).string();
  std::error_code ec;
  for (const fs::path& dir : {fs::path(from), fs::path(from) / rundir::kCheckpoint}) {
    if (fs::is_regular_file(dir / kHfConfigCopy, ec)) return (dir / kHfConfigCopy).string();
  }
  return {};
}

// The checkpoint files into tmp_dir (created).
void write_checkpoint(const fs::path& tmp_dir, torch::nn::Module& model, const config::Config& cfg,
                     config::TaskKind task, int64_t step, const data::Tokenizer* tokenizer) {
  fs::create_directories(tmp_dir);
  torch::serialize::OutputArchive archive;
  rundir::CheckpointMeta meta;
  for (const auto& [name, t] : named_tensors(model)) {
    archive.write(name, t.detach().to(torch::kCPU), /*is_buffer=*/false);
    meta.tensors.push_back({name, t.sizes().vec()});
  }
  archive.save_to((tmp_dir / rundir::kCheckpointWeights).string());
  const config::ModelConfig& m = cfg.model;
  meta.model_type = config::name(m.type);
  meta.task = config::name(task);
  meta.step = step;
  meta.model = rundir::CheckpointModelShape{m.n_layer,  m.n_head,        m.n_embd,
                                            m.block_size, m.ffn_dim, m.max_positions,
                                            m.num_labels};
  save_tokenizer(tmp_dir, cfg, tokenizer, meta);
  // A run keeps the Hugging Face config.json it started from, so export needs no folder but it.
  if (const std::string hf = source_hf_config(cfg); !hf.empty()) {
    std::error_code ec;
    fs::copy_file(hf, tmp_dir / kHfConfigCopy, ec);
    if (ec) {
      spdlog::warn("checkpoint {}: cannot copy {} ({}); export will write config.json from the "
                   "model's shape alone",
                   tmp_dir.string(), hf, ec.message());
    } else {
      meta.hf_config = kHfConfigCopy;
    }
  }
  rundir::write_checkpoint_meta(rundir::path(tmp_dir.string(), rundir::kCheckpointMeta), meta);
  output::write_file_atomic(rundir::path(tmp_dir.string(), rundir::kConfig), config::to_yaml(cfg));
}

}  // namespace

void save_checkpoint(const std::string& dir, torch::nn::Module& model, const config::Config& cfg,
                     config::TaskKind task, int64_t step, const data::Tokenizer* tokenizer,
                     const std::function<void(const std::string& tmp_dir)>& more_files) {
  const fs::path final_dir(dir), tmp_dir(dir + ".tmp");
  std::error_code ec;
  fs::remove_all(tmp_dir, ec);
  try {
    write_checkpoint(tmp_dir, model, cfg, task, step, tokenizer);
    if (more_files) more_files(tmp_dir.string());
    fs::remove_all(final_dir, ec);
    fs::rename(tmp_dir, final_dir);
  } catch (const Error&) {
    fs::remove_all(tmp_dir, ec);
    throw;
  } catch (const std::exception& e) {  // LibTorch's writer, std::filesystem: disk full, permission
    fs::remove_all(tmp_dir, ec);
    const std::string what = e.what();
    throw IoError("cannot save checkpoint '" + dir + "': " + what.substr(0, what.find('\n')));
  }
}

namespace {

// A data-parallel run's top directory stands for its run: rank 0 writes the checkpoints into its
// own directory, so <top>/checkpoint-stepN is <top>/rank0/checkpoint-stepN and <top> is
// <top>/rank0. The path itself where that is not so.
fs::path through_rank0(const fs::path& p) {
  std::error_code ec;
  const fs::path rank0 = std::string(rundir::kRankDirPrefix) + "0";
  const fs::path parent = p.filename().empty() ? p.parent_path().parent_path() : p.parent_path();
  const fs::path name = p.filename().empty() ? p.parent_path().filename() : p.filename();
  if (!fs::exists(p, ec) && fs::is_directory(parent / rank0 / name, ec)) {
    return parent / rank0 / name;
  }
  if (fs::is_directory(p, ec) && !fs::exists(p / rundir::kCheckpointWeights, ec) &&
      !fs::exists(p / rundir::kCheckpoint, ec) && fs::is_directory(p / rank0, ec)) {
    return p / rank0;
  }
  return p;
}

}  // namespace

std::string resolve_checkpoint_dir(const std::string& path, const config::Config& cfg,
                                   const std::string& key) {
  const fs::path p = through_rank0(fs::path(path));
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    throw ConfigError(fmt::format("{}: '{}' does not exist", key, path), cfg.source_file, key);
  }
  if (!fs::is_directory(p, ec)) {
    throw ConfigError(fmt::format("{}: '{}' is a file; give the checkpoint directory (the one "
                                  "holding model.pt) or the run directory",
                                  key, path),
                      cfg.source_file, key);
  }
  if (fs::exists(p / rundir::kCheckpointWeights)) return p.string();
  if (fs::exists(p / rundir::kCheckpoint / rundir::kCheckpointWeights)) return (p / rundir::kCheckpoint).string();
  if (fs::exists(p / hf::kSafetensors, ec) || fs::exists(p / hf::kPytorchBin, ec)) {
    if (!fs::exists(p / hf::kConfigJson, ec)) {
      throw ConfigError(fmt::format("{}: '{}' holds Hugging Face weights but no config.json "
                                    "naming its model_type (gpt2 or distilbert); copy the "
                                    "checkpoint's config.json beside them",
                                    key, path),
                        cfg.source_file, key);
    }
    throw ConfigError(fmt::format("{}: '{}' is a Hugging Face folder (config.json and weights), "
                                  "not an llmprof checkpoint or run directory",
                                  key, path),
                      cfg.source_file, key);
  }
  throw ConfigError(fmt::format("{}: '{}' holds no checkpoint (no model.pt there or in "
                                "checkpoint/); train with train.save_checkpoint=true first",
                                key, path),
                    cfg.source_file, key);
}

LoadReport load_checkpoint(const std::string& path, torch::nn::Module& model,
                           const config::Config& cfg, const std::string& key) {
  if (is_hf_folder(path)) return load_hf_checkpoint(path, model, cfg, key);
  LoadReport r;
  r.path = resolve_checkpoint_dir(path, cfg, key);
  rundir::CheckpointMeta meta;
  try {
    meta = rundir::read_checkpoint_meta(rundir::path(r.path, rundir::kCheckpointMeta));
  } catch (const DataError& e) {
    throw ConfigError(fmt::format("{}: {}", key, e.what()), cfg.source_file, key);
  }
  if (config::find_enum<config::ModelType>(meta.model_type) != cfg.model.type) {
    throw ConfigError(fmt::format("{}: checkpoint {} is a model.type={} model, this run is {}", key,
                                  r.path, printable(meta.model_type), config::name(cfg.model.type)),
                      cfg.source_file, key);
  }
  r.task = meta.task;
  r.step = meta.step;
  const std::vector<std::string> names = meta.tensor_names();
  const std::set<std::string> saved(names.begin(), names.end());

  torch::serialize::InputArchive archive;
  try {
    archive.load_from((fs::path(r.path) / rundir::kCheckpointWeights).string());
  } catch (const c10::Error& e) {
    const std::string what = e.what();
    throw ConfigError(fmt::format("{}: cannot load {}/model.pt: {}", key, r.path,
                                  what.substr(0, what.find('\n'))),
                      cfg.source_file, key);
  }
  torch::NoGradGuard no_grad;
  std::set<std::string> seen;
  for (auto& [name, t] : named_tensors(model)) {
    seen.insert(name);
    if (!saved.count(name)) {
      r.missing.push_back(name);
      continue;
    }
    torch::Tensor v;
    if (!archive.try_read(name, v)) {
      throw ConfigError(fmt::format("{}: {}/model.pt lacks '{}', which checkpoint.json lists", key,
                                    r.path, name),
                        cfg.source_file, key);
    }
    if (!v.sizes().equals(t.sizes())) {
      throw ConfigError(fmt::format("{}: '{}' is {} in checkpoint {} but {} in this model; the "
                                    "model.* sizes must match the checkpoint's",
                                    key, name, shape_text(v), r.path, shape_text(t)),
                        cfg.source_file, key);
    }
    t.copy_(v);
    ++r.loaded;
  }
  for (const std::string& name : saved) {
    if (!seen.count(name)) r.unexpected.push_back(name);
  }
  return r;
}

namespace {

// The model.* keys that fix the shapes of a checkpoint's tensors. block_size is the position
// table of the decoder only; the encoder's is max_positions (0 there = its block_size), and its
// block_size is the sequence length of the data. num_labels is the classifier's width.
std::vector<std::string> shape_keys(const config::Config& ckpt) {
  std::vector<std::string> keys = {"model.n_layer", "model.n_head",  "model.n_embd",
                                   "model.vocab_size", "model.bias", "model.ffn_dim"};
  if (ckpt.model.type == config::ModelType::kGpt) {
    // wpe has max_positions rows (0: block_size); the MLP's GELU is part of the model.
    keys.insert(keys.end(), {"model.block_size", "model.max_positions", "model.activation"});
  }
  if (ckpt.model.type == config::ModelType::kDistilbert) keys.push_back("model.max_positions");
  if (ckpt.model.type == config::ModelType::kLlama) {
    // RoPE tables have block_size rows but no weights: the block may change; the rest is shape.
    keys.insert(keys.end(), {"model.n_kv_head", "model.intermediate_size", "model.head_dim",
                             "model.tie_embeddings", "model.attention_bias", "model.rope_theta",
                             "model.rms_norm_eps", "model.rope_scaling.type"});
  }
  if (ckpt.train.task == config::TaskKind::kClassify) keys.push_back("model.num_labels");
  return keys;
}

}  // namespace

std::vector<std::string> adopt_checkpoint_model(config::Config& cfg, const std::string& path,
                                                const std::string& key) {
  if (is_hf_folder(path)) return adopt_hf_model(cfg, path, key);
  const std::string dir = resolve_checkpoint_dir(path, cfg, key);
  const std::string ckpt_yaml = rundir::path(dir, rundir::kConfig);
  if (!fs::exists(ckpt_yaml)) {
    throw ConfigError(fmt::format("{}: checkpoint {} has no config.yaml, so its model shape is "
                                  "unknown; it was not written by llmprof train",
                                  key, dir),
                      cfg.source_file, key);
  }
  config::Config ckpt = config::load_config(ckpt_yaml);
  if (ckpt.model.type == config::ModelType::kDistilbert && ckpt.model.max_positions == 0) {
    ckpt.model.max_positions = ckpt.model.block_size;  // what "0 = block_size" built
  }
  if (ckpt.model.type != cfg.model.type) {
    throw ConfigError(fmt::format("{}: checkpoint {} is a model.type={} model, this config is {}",
                                  key, dir, config::name(ckpt.model.type),
                                  config::name(cfg.model.type)),
                      cfg.source_file, "model.type");
  }
  std::vector<std::string> notes;
  for (const std::string& k : shape_keys(ckpt)) {
    const std::string theirs = config::get_value(ckpt, k), ours = config::get_value(cfg, k);
    if (theirs == ours) continue;
    for (const auto& [set_key, assignment] : cfg.set_keys) {
      if (set_key != k) continue;
      throw ConfigError(fmt::format("{}: --set {} conflicts with the checkpoint's {}={} ({}); the "
                                    "model's shape comes from the checkpoint: drop the --set or "
                                    "give another checkpoint",
                                    k, assignment, k, theirs, ckpt_yaml),
                        cfg.source_file, k);
    }
    config::apply_override(cfg, k + "=" + theirs);
    for (const auto& [given, where] : cfg.given_keys) {
      if (given == k) notes.push_back(fmt::format("{} {} from the checkpoint ({} says {})", k,
                                                  theirs, where, ours));
    }
  }
  return notes;
}

}  // namespace llmprof::checkpoint
