// eval.json (llmprof eval) as one typed document: the setting, the tokenizer, and each set's
// loss, perplexity or accuracy. eval computes the figures, rundir writes and reads them. Schema
// kEvalSchemaVersion (rundir/files.h); fields in docs/eval.md. Nullopt is JSON null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::rundir {

// One evaluated set (one row of eval_sets.csv).
struct EvalSetFigures {
  std::string name;              // val | name from eval.paths
  std::string source;            // file
  std::string sampling;          // how a limited set was drawn; empty = whole set, in order
  int64_t available_sequences = 0;  // sequences (lm: windows) in the whole set
  int64_t batches = 0;
  int64_t sequences = 0;         // real sequences evaluated
  int64_t targets = 0;           // tokens (lm, mlm) or sequences (classify) scored
  double loss = 0;               // mean cross-entropy per target, nats
  std::optional<double> perplexity;  // exp(loss); lm and mlm only
  std::optional<double> accuracy;  // classify
  double seconds = 0;
  double samples_per_s = 0;      // NaN (null) when nothing was timed
  double tokens_per_s = 0;       // input positions (sequences x T) per second
};

// The tokenizer the figures were computed with (eval.json and bench.json "tokenizer").
struct DocTokenizer {
  std::string type;
  int64_t vocab_size = 0;
  std::optional<std::string> sha256;  // null: a tokenizer without a content hash
};

struct EvalDoc {
  int schema_version = 0;  // as read; the writer writes kEvalSchemaVersion
  config::TaskKind task = config::TaskKind::kLm;
  std::string model;       // Task::describe()
  int64_t parameters = 0;
  std::optional<std::string> checkpoint;  // null: untrained (initial) weights
  std::string checkpoint_note;
  std::string weights;  // checkpoint | partly initial (N tensors at init) | initial
  std::vector<std::string> init_tensors;
  std::optional<std::string> weights_note;  // null for a checkpoint's weights
  std::vector<std::string> model_from_checkpoint, config_notes;
  DocTokenizer tokenizer;
  config::Precision precision = config::Precision::kFp32;
  int64_t threads = 0, batch_size = 0;
  std::string perplexity_note;
  std::vector<std::string> command_line;
  std::vector<EvalSetFigures> sets;

  // Read back, not written: fields this version does not know (JSON pointer -> JSON text).
  std::map<std::string, std::string> unknown;
};

// The document's text: keys in a fixed (sorted) order, two-space indent, a final newline.
std::string eval_doc_text(const EvalDoc& d);
// Writes path (temp + rename).
void write_eval_doc(const std::string& path, const EvalDoc& d);
// Parses an eval.json text; errors name `file`: invalid JSON, a missing first-version field, a
// field of the wrong type, a newer schema_version, an unknown task or precision.
EvalDoc parse_eval_doc(const std::string& text, const std::string& file);
EvalDoc read_eval_doc(const std::string& path);
// docs/eval.md: every field, its type and when it is written, from the writer.
std::string eval_doc_fields_doc();

}  // namespace llmprof::rundir
