// Text datasets for the encoder: plain text (one record per non-blank line, e.g. WikiText-2's
// tokenized v1 files, one paragraph per line), JSONL (GSM8K: chosen string fields joined by a
// newline) and CSV/TSV with a text column and an optional integer label column (IMDB). Files
// ending in .gz are decompressed with zlib. Bad rows (missing field, bad label, invalid UTF-8,
// malformed JSON or CSV) are counted and kept with their line numbers, never silently dropped;
// a file with no usable row is a DataError naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::data {

struct TextReadOptions {
  config::DataFormat format = config::DataFormat::kAuto;  // kAuto: by extension, .gz stripped
  std::vector<std::string> jsonl_fields = {"text"};  // jsonl: string fields joined with "\n"
  std::string text_column = "text";                  // csv/tsv: header name of the text column
  std::string label_column;                          // csv/tsv: label header; empty = no labels
  int64_t num_labels = 0;                            // labels must be integers in [0, num_labels)
  int64_t max_records = 0;  // 0 = all; else a seeded random subset of the good rows, file order kept
  uint64_t seed = 0;        // for max_records
};

struct TextRecord {
  std::string text;
  int32_t label = -1;  // -1 without a label column
  int64_t line = 0;    // 1-based line in the (decompressed) file
};

struct BadRow {
  int64_t line = 0;    // 1-based
  std::string reason;  // "missing field 'answer'", "label 'x' is not an integer in [0, 2)", ...
};

inline constexpr size_t kMaxBadRowExamples = 20;

struct TextDataset {
  std::string path;
  config::DataFormat format = config::DataFormat::kText;  // resolved: never kAuto
  std::vector<TextRecord> records;
  int64_t rows_read = 0;           // data rows seen (blank text lines and the CSV header excluded)
  int64_t bad_rows = 0;            // rows rejected
  std::vector<BadRow> bad_row_examples;  // the first kMaxBadRowExamples of them
};

// Reads a whole dataset file. Throws DataError for a missing/unreadable file, a CSV without the
// named columns (naming the header it found), or a file with no usable rows.
TextDataset read_text_dataset(const std::string& path, const TextReadOptions& opt);

// The bytes of a file, gunzipped when it ends in .gz. Throws DataError naming the file.
std::string read_file_maybe_gzip(const std::string& path);

}  // namespace llmprof::data
