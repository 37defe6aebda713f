// llmprof tokenize (hidden): a tokenizer.json's ids for texts, as JSON, so a script can compare
// them with the tokenizers library's (scripts/hf/check_tokenizer_ids.py).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "llmprof/base/printable.h"
#include "llmprof/data/corpus.h"
#include "llmprof/data/hf_tokenizer.h"
#include "llmprof/error.h"

namespace llmprof::cli {

void add_tokenize_command(CLI::App& app, int& exit_code) {
  struct Args {
    std::string tokenizer;
    std::vector<std::string> texts;
    std::string texts_json;
    bool plain = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "tokenize", "Print a tokenizer.json's ids for texts as a JSON array of id lists");
  sub->group("");  // a checking aid, not part of the documented interface
  sub->add_option("--tokenizer", args->tokenizer, "A Hugging Face tokenizer.json")->required();
  sub->add_option("--text", args->texts, "A text to encode (repeatable)");
  sub->add_option("--texts-json", args->texts_json, "A file holding a JSON array of texts");
  sub->add_flag("--plain", args->plain, "Without the post-processor's BOS/EOS");
  sub->callback([args, &exit_code]() {
    std::vector<std::string> texts = args->texts;
    if (!args->texts_json.empty()) {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(data::read_text_file(args->texts_json));
      } catch (const nlohmann::json::exception& e) {
        throw DataError(args->texts_json + ": not valid JSON: " + printable(e.what(), 200));
      }
      if (!j.is_array()) throw DataError(args->texts_json + ": expected a JSON array of strings");
      for (const auto& t : j) {
        if (!t.is_string()) throw DataError(args->texts_json + ": expected only strings");
        texts.push_back(t.get<std::string>());
      }
    }
    if (texts.empty()) throw UsageError("tokenize: give --text or --texts-json");
    const auto tok = data::load_hf_tokenizer(args->tokenizer);
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& t : texts)
      out.push_back(args->plain ? tok->encode_plain(t) : tok->encode(t));
    fmt::print("{}\n", out.dump());
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
