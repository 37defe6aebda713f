// The vocabulary a run's tokenizer will have (llmprof plan), built as `llmprof train` builds it
// (src/train/run_data.cpp): the char tokenizer over the same corpus (the generated play script
// of data.generated_chars characters seeded by train.seed, or data.path), or the tokenizer files.
#include <string>

#include "llmprof/data/corpus.h"
#include "llmprof/data/text_dataset.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/plan/plan.h"

namespace llmprof::plan {

namespace {

// The text train hands the char tokenizer: generating 1,000,000 characters takes ~0.1 s.
std::string char_corpus(const config::Config& cfg) {
  if (cfg.data.path.empty()) {
    return data::generate_corpus(static_cast<uint64_t>(cfg.train.seed), cfg.data.generated_chars);
  }
  return data::read_file_maybe_gzip(cfg.data.path);
}

}  // namespace

int64_t tokenizer_vocab_size(const config::Config& cfg) {
  if (cfg.model.vocab_size > 0) return cfg.model.vocab_size;
  const config::DataConfig& d = cfg.data;
  switch (d.tokenizer) {
    case config::TokenizerKind::kGpt2:
      // GPT-2's encoder.json when the files are not named (model.init_from's folder has them).
      if (d.vocab_path.empty() || d.merges_path.empty()) return 50257;
      return data::make_tokenizer(d, "")->vocab_size();
    case config::TokenizerKind::kWordpiece:
    case config::TokenizerKind::kHf:
      if (d.vocab_path.empty()) return 0;  // model.init_from's folder names it at run time
      return data::make_tokenizer(d, "")->vocab_size();
    case config::TokenizerKind::kChar:
      if (!d.vocab_path.empty()) return data::make_tokenizer(d, "")->vocab_size();
      return data::make_tokenizer(d, char_corpus(cfg))->vocab_size();
  }
  return 0;
}

}  // namespace llmprof::plan
