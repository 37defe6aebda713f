// The tokenizer.json reader (data::parse_hf_tokenizer) on any bytes, seeded with the test suite's
// Llama 3, Qwen2, SmolLM2, TinyLlama and Mistral shapes. Properties: the input loads or throws a
// DataError that names it and is readable; a loaded tokenizer encodes a few hard strings to ids
// below vocab_size, and decode takes them back without throwing.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llmprof/data/hf_tokenizer.h"
#include "llmprof/error.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string origin = "fuzz/tokenizer.json";
  try {
    const auto tok = data::parse_hf_tokenizer(std::string(fuzz::as_text(data, size)), origin);
    for (const char* text :
         {"Hello world, don't 1234567!", "\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\xA4\x96", "  a\n\nb  ",
          "<s>x</s><|begin_of_text|>", "\xFF\xC3"}) {
      try {
        const std::vector<int32_t> ids = tok->encode(text);
        for (int32_t id : ids) fuzz::check(id >= 0 && id < tok->vocab_size(), "an id out of range");
        tok->decode(ids);
      } catch (const DataError& e) {  // a regex that hits PCRE2's match limit
        fuzz::check_readable(e.what());
      }
    }
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(origin) != std::string::npos ||
                    std::string(e.what()).find("tokenizer regex") != std::string::npos,
                "a tokenizer.json DataError does not name the file");
  }
  return 0;
}
