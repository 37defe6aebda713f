// BERT's uncased WordPiece on arbitrary bytes, with the real vocabulary (shared/data/vocab) or the
// tiny one of the DistilBERT test fixture. Lossy by design (lower-cases, strips accents and
// control characters, collapses whitespace, maps unsplittable words to [UNK]), so no round trip:
// every id must be below vocab_size and decode must take them back without error.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llmprof/data/wordpiece.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<data::WordPieceTokenizer> tok = data::make_wordpiece_tokenizer(
      fuzz::vocab_file("vocab/bert-base-uncased-vocab.txt",
                       "tests/checkpoint/fixtures/hf/distilbert_tiny/vocab.txt"));
  const std::vector<int32_t> ids = tok->encode(fuzz::as_text(data, size));
  for (int32_t id : ids) fuzz::check(id >= 0 && id < tok->vocab_size(), "an id out of range");
  tok->decode(ids);
  return 0;
}
