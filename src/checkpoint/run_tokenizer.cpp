// A run's tokenizer for whoever reads the run (eval, bench, export, model.init_from): the copy in
// its checkpoint, checked against the content hash checkpoint.json records and against the
// tokenizer a config names.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "llmprof/base/printable.h"
#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "llmprof/hf/files.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/rundir/files.h"

namespace fs = std::filesystem;

namespace llmprof::checkpoint {

namespace {

// In the order a message names them: the files first.
constexpr const char* kTokenizerKeys[] = {"data.vocab_path", "data.merges_path", "data.lower_case",
                                          "data.tokenizer"};

struct NamedTokenizer {
  config::DataConfig data;
  std::string
      where;  // "configs/x.yaml line 12", "--set data.vocab_path=...", "model.init_from ..."
};

// The tokenizer the config names: model.init_from's Hugging Face folder (which replaces the data.*
// keys when training), else the data.* keys when the file or --set gives one. None: all defaults.
std::optional<NamedTokenizer> named_tokenizer(const config::Config& cfg, const std::string& path) {
  const std::string& from = cfg.model.init_from;
  if (!from.empty() && from != path && is_hf_folder(from)) {
    return NamedTokenizer{hf_tokenizer_data(from), "model.init_from " + from};
  }
  for (const char* k : kTokenizerKeys) {
    for (const auto& [given, where] : cfg.given_keys) {
      if (given == k) return NamedTokenizer{cfg.data, fmt::format("{}: {}", where, k)};
    }
  }
  return std::nullopt;
}

// Whether the config gives the very tokenizer keys (and values) the run's training config gave,
// which model.init_from's Hugging Face folder replaced then (checkpoint.json
// tokenizer.config_keys): the config that trained the run, naming the run's own tokenizer. Any
// other set is a third one.
bool gives_trained_keys(const config::Config& cfg, const rundir::CheckpointTokenizer& t) {
  if (t.config_keys.empty()) return false;
  std::vector<std::pair<std::string, std::string>> given;
  for (const char* k : kTokenizerKeys) {
    for (const auto& g : cfg.given_keys) {
      if (g.first == k) {
        given.emplace_back(k, config::get_value(cfg, k));
        break;
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> trained = t.config_keys;
  std::sort(given.begin(), given.end());
  std::sort(trained.begin(), trained.end());
  return given == trained;
}

// "gpt2 vocab.json, merges.txt", "wordpiece vocab.txt (lower-cased)", "char".
std::string describe(const config::DataConfig& d) {
  std::string s(config::name(d.tokenizer));
  if (!d.vocab_path.empty()) s += " " + d.vocab_path;
  if (d.tokenizer == config::TokenizerKind::kGpt2 && !d.merges_path.empty()) {
    s += ", " + d.merges_path;
  }
  if (d.tokenizer == config::TokenizerKind::kWordpiece) {
    s += d.lower_case ? " (lower-cased)" : " (cased)";
  }
  return s;
}

}  // namespace

RunTokenizer take_checkpoint_tokenizer(config::Config& cfg,
                                       const std::string& path,
                                       const std::string& key) {
  const std::string dir = resolve_checkpoint_dir(path, cfg, key);
  rundir::CheckpointMeta meta;
  try {
    meta = rundir::read_checkpoint_meta(rundir::path(dir, rundir::kCheckpointMeta));
  } catch (const DataError& e) {
    throw ConfigError(fmt::format("{}: {}", key, e.what()), cfg.source_file, key);
  }
  if (!meta.tokenizer) {
    return {"", fmt::format("checkpoint {} records no tokenizer (saved by an earlier llmprof): "
                            "tokenizing with the config's {}, which may not be the run's",
                            dir, describe(cfg.data))};
  }
  const rundir::CheckpointTokenizer& t = *meta.tokenizer;
  const auto kind = config::find_enum<config::TokenizerKind>(t.type);
  if (!kind) {
    throw ConfigError(fmt::format("{}: {}: tokenizer.type '{}' is not char, gpt2, wordpiece or hf", key,
                                  rundir::path(dir, rundir::kCheckpointMeta), printable(t.type)),
                      cfg.source_file, key);
  }
  const fs::path files = fs::path(dir) / t.dir;
  config::DataConfig run = cfg.data;
  run.tokenizer = *kind;
  const std::string_view vocab_file = *kind == config::TokenizerKind::kWordpiece ? hf::kVocabTxt
                                     : *kind == config::TokenizerKind::kHf ? hf::kTokenizerJson
                                                                           : hf::kVocabJson;
  run.vocab_path = (files / vocab_file).string();
  run.merges_path = *kind == config::TokenizerKind::kGpt2 ? (files / hf::kMergesTxt).string() : "";
  run.lower_case = t.lower_case;
  const std::optional<NamedTokenizer> named =
      gives_trained_keys(cfg, t) ? std::nullopt : named_tokenizer(cfg, path);
  if (named) {
    // A char vocabulary is the corpus's, and a kind without files names no vocabulary: the
    // config names the kind only.
    const config::DataConfig& d = named->data;
    const bool same_kind = d.tokenizer == *kind;
    std::unique_ptr<data::Tokenizer> theirs;
    if (same_kind && *kind != config::TokenizerKind::kChar && !d.vocab_path.empty()) {
      theirs = data::make_tokenizer(d, "");
    }
    if (!same_kind || (theirs && theirs->fingerprint() != t.sha256)) {
      throw ConfigError(
          fmt::format("{}: checkpoint {} was trained with the {} tokenizer sha256 {} ({} tokens, "
                      "read from {}), but the config names {} ({}){}. A run is measured with its "
                      "own tokenizer, kept in {}: drop the data.* tokenizer keys from the config "
                      "or name the run's files",
                      key, dir, t.type, t.sha256.substr(0, 12), t.vocab_size, t.source, describe(d),
                      named->where,
                      theirs
                          ? fmt::format(", sha256 {} ({} tokens)",
                                        theirs->fingerprint().substr(0, 12), theirs->vocab_size())
                          : "",
                      files.string()),
          cfg.source_file, key);
    }
  }
  cfg.data.tokenizer = run.tokenizer;
  cfg.data.vocab_path = run.vocab_path;
  cfg.data.merges_path = run.merges_path;
  cfg.data.lower_case = run.lower_case;
  return {t.sha256, ""};
}

void check_run_tokenizer(const RunTokenizer& rt,
                         const data::Tokenizer& tokenizer,
                         const std::string& checkpoint) {
  if (rt.sha256.empty() || tokenizer.fingerprint() == rt.sha256) return;
  throw DataError(
      fmt::format("checkpoint {}: its tokenizer files build a tokenizer with sha256 {}, "
                  "not the {} checkpoint.json records: they were changed after the run",
                  checkpoint, tokenizer.fingerprint().substr(0, 12), rt.sha256.substr(0, 12)));
}

}  // namespace llmprof::checkpoint
