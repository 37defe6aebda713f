// Which tokenizer and weights files a checkpoint folder holds.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "json_fields.h"
#include "llmprof/error.h"
#include "llmprof/hf/files.h"
#include "llmprof/hf/hf_config.h"

namespace fs = std::filesystem;

namespace llmprof::hf {

namespace {

// "holds a.txt, b.json" or "is empty", for messages; folders end in '/'. At most 20 names.
std::string folder_listing(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string() + (it->is_directory(ec) ? "/" : ""));
  }
  if (names.empty()) return "is empty";
  std::sort(names.begin(), names.end());
  const size_t shown = std::min<size_t>(names.size(), 20);
  std::string more = names.size() > shown ? fmt::format(" and {} more", names.size() - shown) : "";
  return fmt::format("holds {}{}", fmt::join(names.begin(), names.begin() + shown, ", "), more);
}

void require_folder(const std::string& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw DataError(fmt::format("'{}' is not a checkpoint folder: {}", folder,
                                fs::exists(folder, ec) ? "it is a file" : "no such directory"));
  }
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

}  // namespace

HfTokenizerFiles find_tokenizer_files(const std::string& folder,
                                      std::optional<HfModelType> expected) {
  require_folder(folder);
  HfTokenizerFiles files;
  if (expected && *expected != HfModelType::kGpt2 && *expected != HfModelType::kDistilBert) {
    files.kind = HfTokenizerKind::kTokenizerJson;
    files.tokenizer_json = in_folder(folder, kTokenizerJson);
    if (!is_file(files.tokenizer_json)) {
      throw DataError(fmt::format("'{}' has no tokenizer.json (it {}; a {} folder's tokenizer is "
                                  "read from tokenizer.json, the tokenizers library's format)",
                                  folder, folder_listing(folder), model_type_name(*expected)));
    }
    const std::string config = in_folder(folder, kTokenizerConfigJson);
    if (is_file(config)) files.tokenizer_config_json = config;
    return files;
  }
  const std::string vocab_json = in_folder(folder, kVocabJson);
  const std::string merges = in_folder(folder, kMergesTxt);
  const std::string vocab_txt = in_folder(folder, kVocabTxt);
  const bool has_bpe = is_file(vocab_json) || is_file(merges);
  const bool has_wordpiece = is_file(vocab_txt);
  if (!expected && has_bpe && has_wordpiece) {
    throw DataError(
        fmt::format("'{}' holds both GPT-2 (vocab.json, merges.txt) and BERT "
                    "(vocab.txt) tokenizer files: say which model it is",
                    folder));
  }
  const bool bpe = expected ? *expected == HfModelType::kGpt2 : !has_wordpiece;
  if (bpe) {
    for (const std::string& f : {vocab_json, merges}) {
      if (!is_file(f)) {
        throw DataError(
            fmt::format("'{}' has no GPT-2 tokenizer file {} (it {}; a GPT-2 folder "
                        "needs vocab.json and merges.txt)",
                        folder, fs::path(f).filename().string(), folder_listing(folder)));
      }
    }
    files.kind = HfTokenizerKind::kGpt2Bpe;
    files.vocab_json = vocab_json;
    files.merges_txt = merges;
  } else {
    if (!is_file(vocab_txt)) {
      throw DataError(fmt::format("'{}' has no BERT tokenizer file vocab.txt (it {})", folder,
                                  folder_listing(folder)));
    }
    files.kind = HfTokenizerKind::kWordPiece;
    files.vocab_txt = vocab_txt;
  }
  if (const std::string json = in_folder(folder, kTokenizerJson); is_file(json)) {
    files.tokenizer_json = json;
  }
  const std::string config = in_folder(folder, kTokenizerConfigJson);
  // Without a do_lower_case in tokenizer_config.json (or without the file), lower-casing is on:
  // the default of transformers' BertTokenizer and DistilBertTokenizer, and what the uncased
  // checkpoints (distilbert-base-uncased, bert-base-uncased) need. A cased folder says false.
  if (is_file(config)) {
    files.tokenizer_config_json = config;
    const nlohmann::json doc = detail::read_json_object(config);
    const detail::JsonFields keys(doc, config);
    files.do_lower_case_from_file = keys.has("do_lower_case");
    files.do_lower_case = keys.boolean("do_lower_case", true);
  }
  return files;
}

HfWeightsFile find_weights(const std::string& folder) {
  require_folder(folder);
  if (const std::string st = in_folder(folder, kSafetensors); is_file(st)) {
    return {HfWeightsFormat::kSafetensors, st};
  }
  if (const std::string bin = in_folder(folder, kPytorchBin); is_file(bin)) {
    return {HfWeightsFormat::kPytorchBin, bin};
  }
  for (const std::string_view index : {kSafetensorsIndex, kPytorchBinIndex}) {
    if (is_file(in_folder(folder, index))) {
      throw DataError(
          fmt::format("'{}' holds a sharded checkpoint ({}): only a single "
                      "model.safetensors or pytorch_model.bin is read",
                      folder, index));
    }
  }
  throw DataError(
      fmt::format("'{}' has no weights file, model.safetensors or pytorch_model.bin "
                  "(it {})",
                  folder, folder_listing(folder)));
}

bool config_names_model_type(const std::string& folder) {
  std::ifstream in(in_folder(folder, kConfigJson));
  if (!in) return false;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("model_type");
}

}  // namespace llmprof::hf
