// checkpoint.json, beside the weights (model.pt) of a checkpoint `llmprof train` saves: what the
// loader checks before it reads any weight. Torch-free; the weights are read in train.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
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
  // The data.* tokenizer keys the training config gave, as given (key, value), when
  // model.init_from's Hugging Face folder supplied the tokenizer instead: the same keys at eval
  // name the run's own tokenizer, no conflict. Empty otherwise (and before it was recorded).
  std::vector<std::pair<std::string, std::string>> config_keys;
};

// What a checkpoint saved before tokenizers were recorded held, and a run with a tokenizer that
// has no files (a test's fake) still writes: the kind and the path it was read from.
struct CheckpointTokenizerRef {
  std::string type, vocab_path;
};

// The model's shape (model.* of the run's config), as train wrote it.
struct CheckpointModelShape {
  int64_t n_layer = 0, n_head = 0, n_embd = 0, block_size = 0, ffn_dim = 0, max_positions = 0,
          num_labels = 0;
};

struct CheckpointTensor {
  std::string name;
  std::vector<int64_t> shape;  // empty when not written
};

struct CheckpointMeta {
  int schema_version = 0;            // as read; the writer writes kCheckpointSchemaVersion
  std::string model_type;            // gpt | distilbert, as written
  std::string task;                  // lm | mlm | classify; empty when not written
  int64_t step = 0;                  // the optimizer step it was saved at; 0 when not written
  std::optional<CheckpointModelShape> model;
  std::vector<CheckpointTensor> tensors;  // what model.pt holds, by name
  // Absent in checkpoints saved before tokenizers were recorded (tokenizer.sha256 missing).
  std::optional<CheckpointTokenizer> tokenizer;
  std::optional<CheckpointTokenizerRef> tokenizer_ref;  // the tokenizer without its files
  // The Hugging Face config.json the run started from, copied beside the weights; empty when the
  // run did not start from a Hugging Face folder.
  std::string hf_config;

  // Read back, not written: fields this version does not know (JSON pointer -> JSON text,
  // written back by a rewrite).
  std::map<std::string, std::string> unknown;

  std::vector<std::string> tensor_names() const;
  // The first dimension of the first named tensor found; nullopt when none is there.
  std::optional<int64_t> rows_of(const std::vector<std::string>& names) const;
};

// Reads checkpoint.json at `path`. A missing file, bad JSON (with line and column), a missing
// model_type or tensors list, a newer schema_version, or a field of the wrong type throws
// DataError naming the file and the field; so does a tokenizer with a sha256 but a field missing
// or a file outside its dir.
CheckpointMeta read_checkpoint_meta(const std::string& path);
CheckpointMeta parse_checkpoint_meta(const std::string& text, const std::string& file);
// The document's text: keys in a fixed (sorted) order, two-space indent, a final newline.
std::string checkpoint_meta_text(const CheckpointMeta& m);
// Writes path (temp + rename).
void write_checkpoint_meta(const std::string& path, const CheckpointMeta& m);
// docs/checkpoint.md: every field, its type and when it is written, from the writer.
std::string checkpoint_meta_fields_doc();

}  // namespace llmprof::rundir
