// The char tokenizer built from the input as its corpus. Lossless: its vocabulary is every byte
// of the corpus, so decode(encode(x)) == x for any bytes x. Also: every id is below vocab_size,
// and the tokenizer saved and loaded back encodes the same. An empty corpus is a DataError.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  if (text.empty()) {
    try {
      data::make_char_tokenizer(text);
      fuzz::fail("an empty corpus built a char tokenizer");
    } catch (const DataError&) {
    }
    return 0;
  }
  const auto tok = data::make_char_tokenizer(text);
  const std::vector<int32_t> ids = tok->encode(text);
  for (int32_t id : ids) fuzz::check(id >= 0 && id < tok->vocab_size(), "an id out of range");
  fuzz::check(tok->decode(ids) == text, "decode(encode(x)) != x");
  const std::string dir = fuzz::scratch_dir() + "/char";
  tok->save(dir);
  fuzz::check(data::load_char_tokenizer(dir)->encode(text) == ids,
              "the saved tokenizer encodes differently");
  return 0;
}
