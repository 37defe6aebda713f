// Hugging Face checkpoint folders of GPT-2 and DistilBERT: config.json read and written, and which
// tokenizer and weights files a folder holds. Keys and defaults are those of transformers'
// GPT2Config and DistilBertConfig; shape keys have no default here (a model is never guessed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::hf {

// config.json's model_type. Values are stable.
enum class HfModelType : int { kGpt2 = 0, kDistilBert = 1 };

// "gpt2" or "distilbert".
const char* model_type_name(HfModelType type);

// GPT2Config's keys (GPT2LMHeadModel, GPT2Model).
struct Gpt2Fields {
  int64_t n_layer = 0;             // required
  int64_t n_head = 0;              // required; divides n_embd
  int64_t n_embd = 0;              // required
  int64_t n_positions = 0;         // required; n_ctx, the older name, when n_positions is absent
  std::optional<int64_t> n_inner;  // MLP width; absent or null: 4 * n_embd
  double layer_norm_epsilon = 1e-5;
  std::string activation_function = "gelu_new";  // what GPT-2 uses (tanh approximation)
  double resid_pdrop = 0.1;
  double embd_pdrop = 0.1;
  double attn_pdrop = 0.1;
  std::optional<int64_t> bos_token_id;  // 50256 in gpt2's config
  std::optional<int64_t> eos_token_id;
};

// DistilBertConfig's keys (DistilBertForMaskedLM, DistilBertForSequenceClassification).
struct DistilBertFields {
  int64_t n_layers = 0;                 // required
  int64_t n_heads = 0;                  // required; divides dim
  int64_t dim = 0;                      // required
  int64_t hidden_dim = 0;               // required: the FFN width
  int64_t max_position_embeddings = 0;  // required
  std::string activation = "gelu";      // "gelu" or "relu"
  double dropout = 0.1;
  double attention_dropout = 0.1;
  bool sinusoidal_pos_embds = false;
  int64_t pad_token_id = 0;
  double qa_dropout = 0.1;
  double seq_classif_dropout = 0.2;
};

struct HfModelConfig {
  std::string file;  // the config.json read; empty for one built in code
  HfModelType model_type = HfModelType::kGpt2;
  std::vector<std::string> architectures;  // e.g. GPT2LMHeadModel, DistilBertForMaskedLM
  int64_t vocab_size = 0;                  // required
  bool tie_word_embeddings = true;         // the LM head shares the token embedding
  double initializer_range = 0.02;
  std::string torch_dtype;  // as the file says ("float32"); empty when absent
  // Class labels by id (id2label, or LABEL_i for a bare num_labels); empty when the file has
  // neither, for which transformers assumes 2 labels. num_labels() is its size or that 2.
  std::vector<std::string> id2label;
  std::vector<std::string> defaulted;  // optional keys absent from the file, taken at the default
  Gpt2Fields gpt2;                     // read and written when model_type is kGpt2
  DistilBertFields distilbert;         // read and written when model_type is kDistilBert

  int64_t num_labels() const {
    return id2label.empty() ? 2 : static_cast<int64_t>(id2label.size());
  }
};

// Reads <folder>/config.json. A model_type other than gpt2/distilbert, a missing required key, a
// key of the wrong type or an impossible value throws DataError naming the file and the key.
HfModelConfig read_hf_config(const std::string& folder);

// The same for a config.json at path, whatever its name (a run's copy, hf_config.json).
HfModelConfig read_hf_config_file(const std::string& path);

// Checks a config as read_hf_config checks a file; DataError naming `where` and the key.
void validate_hf_config(const HfModelConfig& config, const std::string& where);

// The config.json text write_hf_config writes: keys sorted, 2-space indent, as transformers'
// save_pretrained writes it; torch_dtype "float32" when the config has none; no
// transformers_version (no transformers wrote it).
std::string hf_config_json(const HfModelConfig& config);

// Writes <folder>/config.json (folder must exist) through a .tmp and a rename. A config that
// fails validate_hf_config throws DataError; I/O failure IoError.
void write_hf_config(const std::string& folder, const HfModelConfig& config);

// The tokenizer files of a checkpoint folder.
enum class HfTokenizerKind : int { kGpt2Bpe = 0, kWordPiece = 1 };

struct HfTokenizerFiles {
  HfTokenizerKind kind = HfTokenizerKind::kGpt2Bpe;
  std::string vocab_json;  // GPT-2 BPE: token -> id (the same JSON as OpenAI's encoder.json)
  std::string merges_txt;  // GPT-2 BPE: ranked merges (the same file as OpenAI's vocab.bpe)
  std::string vocab_txt;   // WordPiece: one token per line, id = line number
  std::string tokenizer_config_json;     // path when present, else empty
  std::string tokenizer_json;            // the "fast" tokenizer.json when present (not read)
  bool do_lower_case = true;             // WordPiece only; see find_tokenizer_files
  bool do_lower_case_from_file = false;  // false: tokenizer_config.json did not say
};

// Finds the tokenizer files of folder: vocab.json + merges.txt (GPT-2) or vocab.txt (BERT), and
// do_lower_case from tokenizer_config.json. With expected, requires that model's files; without,
// a folder holding both kinds is refused. Missing or half a pair: DataError listing the folder.
HfTokenizerFiles find_tokenizer_files(const std::string& folder,
                                      std::optional<HfModelType> expected = std::nullopt);

// The weights file of a checkpoint folder.
enum class HfWeightsFormat : int { kSafetensors = 0, kPytorchBin = 1 };

struct HfWeightsFile {
  HfWeightsFormat format = HfWeightsFormat::kSafetensors;
  std::string path;
};

// model.safetensors when present, else pytorch_model.bin. Neither (or only a sharded index):
// DataError listing what the folder holds.
HfWeightsFile find_weights(const std::string& folder);

}  // namespace llmprof::hf
