// The vocabulary a run's tokenizer would have, read without building it (llmprof plan).
#include <array>
#include <fstream>
#include <iterator>
#include <string>

#include "llmprof/plan/plan.h"

namespace llmprof::plan {

int64_t tokenizer_vocab_size(const config::Config& cfg) {
  if (cfg.model.vocab_size > 0) return cfg.model.vocab_size;
  switch (cfg.data.tokenizer) {
    case config::TokenizerKind::kGpt2:
      return 50257;  // GPT-2's encoder.json
    case config::TokenizerKind::kWordpiece: {
      std::ifstream in(cfg.data.vocab_path);
      if (!in) return 0;
      int64_t lines = 0;
      for (std::string line; std::getline(in, line);) ++lines;
      return lines;
    }
    case config::TokenizerKind::kChar: {
      // The char tokenizer's vocabulary: the distinct bytes of the corpus.
      const std::string& p = cfg.data.path;
      if (p.empty() || (p.size() > 3 && p.compare(p.size() - 3, 3, ".gz") == 0)) return 0;
      std::ifstream in(p, std::ios::binary);
      if (!in) return 0;
      std::array<bool, 256> seen{};
      for (auto it = std::istreambuf_iterator<char>(in); it != std::istreambuf_iterator<char>();
           ++it) {
        seen[static_cast<unsigned char>(*it)] = true;
      }
      int64_t n = 0;
      for (bool s : seen) n += s ? 1 : 0;
      return n;
    }
  }
  return 0;
}

}  // namespace llmprof::plan
