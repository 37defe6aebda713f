// checkpoint.json, beside the weights (model.pt) of a checkpoint `llmprof train` saves: what the
// loader checks before it reads any weight. Torch-free; the weights are read in train.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::rundir {

// The tokenizer a checkpoint was trained with: a copy of the files that build it, in `dir` under
// the checkpoint, and the content hash of what they build (data::Tokenizer::fingerprint).
struct CheckpointTokenizer {
  std::string type;                // char | gpt2 | wordpiece
  std::string sha256;              // 64 hex digits
  int64_t vocab_size = 0;
  bool lower_case = true;          // wordpiece: tokenizer_config.json's do_lower_case
  std::string dir;                 // relative to the checkpoint ("tokenizer")
  std::vector<std::string> files;  // in dir: vocab.json + merges.txt, vocab.txt + ..., vocab.json
  std::string source;              // what the run read it from (paths), for messages
};

struct CheckpointMeta {
  std::string model_type;            // gpt | distilbert, as written
  std::string task;                  // lm | mlm | classify; empty when not written
  int64_t step = 0;                  // the optimizer step it was saved at; 0 when not written
  std::vector<std::string> tensors;  // the names of the tensors model.pt holds
  // Absent in checkpoints saved before tokenizers were recorded (tokenizer.sha256 missing).
  std::optional<CheckpointTokenizer> tokenizer;
  // The Hugging Face config.json the run started from, copied beside the weights; empty when the
  // run did not start from a Hugging Face folder.
  std::string hf_config;
};

// Reads checkpoint.json at `path`. A missing file, bad JSON (with line and column), a missing
// model_type or tensors list, or a field of the wrong type throws DataError naming the file and
// the field; so does a tokenizer with a sha256 but a field missing or a file outside its dir.
CheckpointMeta read_checkpoint_meta(const std::string& path);

}  // namespace llmprof::rundir
