// Hugging Face checkpoint folders of GPT-2, DistilBERT and the Llama family (llama, qwen2,
// mistral): config.json read and written, and which tokenizer and weights files a folder holds.
// Keys and defaults are those of transformers' GPT2Config, DistilBertConfig, LlamaConfig,
// Qwen2Config and MistralConfig; shape keys have no default here (a model is never guessed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::hf {

// config.json's model_type. Values are stable.
enum class HfModelType : int { kGpt2 = 0, kDistilBert = 1, kLlama = 2, kQwen2 = 3, kMistral = 4 };

// "gpt2", "distilbert", "llama", "qwen2" or "mistral".
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

// rope_scaling (or transformers 5's rope_parameters): the type as the file names it ("llama3",
// "linear", "yarn" ...; read from rope_type or type) and llama3's four numbers (0 when absent).
struct RopeScaling {
  std::string type;
  double factor = 0.0;
  double low_freq_factor = 0.0;
  double high_freq_factor = 0.0;
  int64_t original_max_position_embeddings = 0;
};

// LlamaConfig's keys, shared by Qwen2Config and MistralConfig (LlamaForCausalLM,
// Qwen2ForCausalLM, MistralForCausalLM).
struct LlamaFields {
  int64_t num_hidden_layers = 0;        // required
  int64_t num_attention_heads = 0;      // required
  int64_t num_key_value_heads = 0;      // absent or null: num_attention_heads (plain MHA)
  int64_t hidden_size = 0;              // required
  int64_t intermediate_size = 0;        // required: the SwiGLU width
  int64_t max_position_embeddings = 0;  // required
  std::optional<int64_t> head_dim;      // absent or null: hidden_size / num_attention_heads
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  std::optional<RopeScaling> rope_scaling;  // absent, null or type "default": none
  // Biases on q/k/v/o (llama's attention_bias); Qwen2 always has q/k/v biases and no o bias, which
  // is what `attention_bias` means here for qwen2 (written back as Qwen2Config has no such key).
  bool attention_bias = false;
  bool mlp_bias = false;
  std::string hidden_act = "silu";
  double attention_dropout = 0.0;
  std::optional<int64_t> sliding_window;  // mistral; qwen2 only with use_sliding_window
  bool use_sliding_window = false;        // qwen2's switch for sliding_window
  // Token ids as the file gives them (eos_token_id may be a list, as in Llama 3): raw JSON, "" when
  // absent.
  std::string bos_token_id_json;
  std::string eos_token_id_json;
  std::string pad_token_id_json;

  int64_t head_dim_or_default() const {
    return head_dim ? *head_dim : hidden_size / std::max<int64_t>(num_attention_heads, 1);
  }
  // The sliding window that applies to attention: mistral's when set, qwen2's when switched on.
  std::optional<int64_t> active_window(bool qwen2) const {
    return qwen2 && !use_sliding_window ? std::nullopt : sliding_window;
  }
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
  LlamaFields llama;                   // read and written for kLlama, kQwen2 and kMistral

  bool llama_family() const {
    return model_type == HfModelType::kLlama || model_type == HfModelType::kQwen2 ||
           model_type == HfModelType::kMistral;
  }

  int64_t num_labels() const {
    return id2label.empty() ? 2 : static_cast<int64_t>(id2label.size());
  }
};

// Reads <folder>/config.json. A model_type not named above, a missing required key, a
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

// tokenizer_config.json as llmprof writes it beside the tokenizer files it exports: the
// transformers class that reads them, the longest input, and WordPiece's lower-casing.
struct HfTokenizerConfig {
  std::string tokenizer_class;        // PreTrainedTokenizerFast | DistilBertTokenizer
  int64_t model_max_length = 0;       // the model's positions
  std::optional<bool> do_lower_case;  // WordPiece only
};

// The text write_tokenizer_config writes: keys sorted, 2-space indent, a final newline.
std::string tokenizer_config_json(const HfTokenizerConfig& config);
// Writes <folder>/tokenizer_config.json (folder must exist) through a .tmp and a rename.
void write_tokenizer_config(const std::string& folder, const HfTokenizerConfig& config);

// Whether <folder>/config.json is a JSON object naming a model_type (a folder without weights
// may still be a Hugging Face folder). Missing, unreadable or invalid: false, never an error.
bool config_names_model_type(const std::string& folder);

// The tokenizer files of a checkpoint folder.
enum class HfTokenizerKind : int { kGpt2Bpe = 0, kWordPiece = 1, kTokenizerJson = 2 };

struct HfTokenizerFiles {
  HfTokenizerKind kind = HfTokenizerKind::kGpt2Bpe;
  std::string vocab_json;  // GPT-2 BPE: token -> id (the same JSON as OpenAI's encoder.json)
  std::string merges_txt;  // GPT-2 BPE: ranked merges (the same file as OpenAI's vocab.bpe)
  std::string vocab_txt;   // WordPiece: one token per line, id = line number
  std::string tokenizer_config_json;     // path when present, else empty
  std::string tokenizer_json;            // the "fast" tokenizer.json when present (read for the
                                         // Llama family: kTokenizerJson)
  bool do_lower_case = true;             // WordPiece only; see find_tokenizer_files
  bool do_lower_case_from_file = false;  // false: tokenizer_config.json did not say
};

// Finds the tokenizer files of folder: vocab.json + merges.txt (GPT-2), vocab.txt (BERT) or
// tokenizer.json (the Llama family, which needs it), and do_lower_case from tokenizer_config.json. With expected, requires that model's files; without,
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
