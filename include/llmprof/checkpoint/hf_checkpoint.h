// Hugging Face checkpoint folders (config.json, model.safetensors or pytorch_model.bin, tokenizer
// files) for GPT-2 and DistilBERT: model.init_from takes one as it is (the model's shape and the
// tokenizer come from the folder), and `llmprof export --format hf` writes one back that
// transformers' from_pretrained loads. One name table maps llmprof's tensors to Hugging Face's
// both ways: GPT-2's Conv1D weights are stored transposed; DistilBERT's q_lin, k_lin and v_lin are
// llmprof's fused qkv_lin, in that order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "llmprof/checkpoint/weights.h"

namespace llmprof::config {
struct Config;
struct DataConfig;
}

namespace llmprof::checkpoint {

// True when path is a folder with a config.json beside Hugging Face weights (model.safetensors,
// pytorch_model.bin) or naming a model_type: a Hugging Face checkpoint, read as one, so that a
// config.json that is not valid JSON is reported as such (file, line, column).
bool is_hf_folder(const std::string& path);

// The tokenizer keys the folder gives (data.tokenizer, vocab_path, merges_path, lower_case), as
// adopt_hf_model sets them. A folder without them: DataError naming it.
config::DataConfig hf_tokenizer_data(const std::string& folder);

// Sets cfg's model (type, every shape key, the activation, bias) and tokenizer (data.tokenizer,
// data.vocab_path, data.merges_path, data.lower_case) from the folder's config.json and
// tokenizer files. A shape key the user set (config file or --set) that disagrees is a
// ConfigError naming both values; a folder llmprof cannot build (an MLP width other than
// 4 x n_embd, a ReLU DistilBERT, sinusoidal positions, untied embeddings) is a ConfigError saying
// why. Returns one note per data.* key the user set that the folder's tokenizer replaces; keys
// left at their defaults are set silently (a default is no disagreement).
std::vector<std::string> adopt_hf_model(config::Config& cfg, const std::string& folder,
                                        const std::string& key);

// Loads the folder's weights into model (built from cfg after adopt_hf_model): loaded, missing
// (kept at init, e.g. the classifier a fine-tuning run adds) and unused tensors are reported.
// A tensor whose shape differs, or a file llmprof cannot read, is a ConfigError naming `key`,
// the file and the tensor.
LoadReport load_hf_checkpoint(const std::string& folder, torch::nn::Module& model,
                              const config::Config& cfg, const std::string& key);

struct HfExport {
  std::string folder;                 // written
  std::string architecture;           // GPT2LMHeadModel, DistilBertForMaskedLM, ...
  int64_t tensors = 0;                // in model.safetensors
  std::vector<std::string> files;     // written, in order
  std::vector<std::string> notes;     // e.g. a tokenizer transformers has no class for
};

// Builds the model a checkpoint's config describes, its parameters named as in model.pt, with
// vocab_size tokens (train::task_model: the run's model with its task's head). The checkpoint
// concern reads and writes tensors; which model a config trains is train's.
using ModelFactory = std::function<std::shared_ptr<torch::nn::Module>(const config::Config& cfg,
                                                                      int64_t vocab_size)>;

// Writes a Hugging Face folder for the llmprof checkpoint at path (a checkpoint or run
// directory): model.safetensors (F32), config.json and the tokenizer files, all from the
// checkpoint (its weights loaded into the model build_model makes, its copy of the tokenizer,
// checked against the hash it records, and of the config.json the run started from), so the
// folder a run started from may be gone. out must not exist (results are never overwritten); it
// is staged beside out and renamed at the end, and an error or SIGINT/SIGTERM (Interrupted)
// leaves nothing behind. Bad input: ConfigError; a Hugging Face folder given as path is one too,
// saying so.
HfExport export_hf(const std::string& path,
                   const std::string& out,
                   const ModelFactory& build_model);

}  // namespace llmprof::checkpoint
