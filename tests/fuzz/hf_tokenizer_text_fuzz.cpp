// Llama 3's shape of tokenizer.json (Split with its regex through PCRE2, ByteLevel, ignore_merges)
// on arbitrary bytes, valid UTF-8 or not: every id is below vocab_size and, with no special token
// in the text, decode(encode_plain(x)) == x (byte-level BPE loses nothing). The TinyLlama shape
// (Prepend/Replace, byte_fallback) gives ids in range and decodes them without throwing.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llmprof/data/hf_tokenizer.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = std::string(LLMPROF_SOURCE_DIR) + "/tests/fuzz/corpus/hf_tokenizer/";
  // Without PCRE2 in the build the regex shape is refused: the TinyLlama shape alone is fuzzed.
  static const std::unique_ptr<data::HfTokenizer> llama3 =
      data::hf_tokenizer_regex_available() ? data::load_hf_tokenizer(dir + "llama3.json") : nullptr;
  static const std::unique_ptr<data::HfTokenizer> tinyllama =
      data::load_hf_tokenizer(dir + "tinyllama.json");
  const std::string_view text = fuzz::as_text(data, size);
  if (llama3) {
    const std::vector<int32_t> ids = llama3->encode_plain(text);
    for (int32_t id : ids) fuzz::check(id >= 0 && id < llama3->vocab_size(), "an id out of range");
    if (text.find("<|") == std::string_view::npos) {
      fuzz::check(llama3->decode(ids) == text, "decode(encode_plain(x)) != x");
    }
  }
  const std::vector<int32_t> sp = tinyllama->encode(text);
  for (int32_t id : sp) fuzz::check(id >= 0 && id < tinyllama->vocab_size(), "an id out of range");
  tinyllama->decode(sp);
  return 0;
}
