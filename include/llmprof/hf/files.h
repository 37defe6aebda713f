// The file names of a Hugging Face checkpoint folder and of the tokenizer files llmprof reads and
// writes: one table for hf/ (folder detection, config.json, weights), data/'s tokenizers (their
// save_files), and checkpoint/'s checkpoints and export. Header only, so the torch-free data
// concern includes it without linking hf.
#pragma once

#include <string>
#include <string_view>

namespace llmprof::hf {

// The model.
inline constexpr std::string_view kConfigJson = "config.json";  // model_type and shape
inline constexpr std::string_view kSafetensors = "model.safetensors";
inline constexpr std::string_view kPytorchBin = "pytorch_model.bin";  // read, never written
// Sharded checkpoints' indexes: recognised to refuse them with a clear message.
inline constexpr std::string_view kSafetensorsIndex = "model.safetensors.index.json";
inline constexpr std::string_view kPytorchBinIndex = "pytorch_model.bin.index.json";

// The tokenizer.
inline constexpr std::string_view kVocabJson = "vocab.json";  // GPT-2 BPE (and llmprof's char)
inline constexpr std::string_view kMergesTxt = "merges.txt";  // GPT-2 BPE ranked merges
inline constexpr std::string_view kVocabTxt = "vocab.txt";    // WordPiece, one token per line
inline constexpr std::string_view kTokenizerJson = "tokenizer.json";  // the tokenizers library's
inline constexpr std::string_view kTokenizerConfigJson = "tokenizer_config.json";

// The schema_version of the descriptor each of llmprof's tokenizers writes with save(dir) (its
// type and what it was built from): bumped when a key changes meaning or goes away.
inline constexpr int kCharVocabSchemaVersion = 1;           // char: vocab.json, the characters
inline constexpr int kGpt2TokenizerSchemaVersion = 1;       // gpt2 BPE: tokenizer.json
inline constexpr int kWordPieceTokenizerSchemaVersion = 1;  // WordPiece: tokenizer.json
inline constexpr int kHfTokenizerSchemaVersion = 1;         // hf (a tokenizer.json as it is)

// folder + "/" + name, exactly (a folder given with a trailing '/' keeps it).
inline std::string in_folder(std::string_view folder, std::string_view name) {
  std::string p(folder);
  p += '/';
  p += name;
  return p;
}

}  // namespace llmprof::hf
