// GPT-2's byte-level BPE on arbitrary bytes, with the real vocabulary (shared/data/vocab) or the
// tiny one of the Hugging Face test fixture. Lossless: every byte has a token and merges only
// concatenate bytes, so decode(encode(x)) == x for any bytes, valid UTF-8 or not. Every id is
// below vocab_size.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llmprof/data/tokenizer.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<data::Tokenizer> tok = data::make_gpt2_tokenizer(
      fuzz::vocab_file("vocab/gpt2-encoder.json",
                       "tests/checkpoint/fixtures/hf/gpt2_tiny/vocab.json"),
      fuzz::vocab_file("vocab/gpt2-vocab.bpe",
                       "tests/checkpoint/fixtures/hf/gpt2_tiny/merges.txt"));
  const std::string_view text = fuzz::as_text(data, size);
  const std::vector<int32_t> ids = tok->encode(text);
  for (int32_t id : ids) fuzz::check(id >= 0 && id < tok->vocab_size(), "an id out of range");
  fuzz::check(tok->decode(ids) == text, "decode(encode(x)) != x");
  return 0;
}
