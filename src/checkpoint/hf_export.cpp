// `llmprof export --format hf`: an llmprof checkpoint as a Hugging Face folder. Everything comes
// from the checkpoint itself (weights, config.yaml, its copy of the tokenizer and of the
// config.json the run started from), and the folder is written whole or not at all.
#include <fmt/format.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "hf_names.h"
#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/config/config.h"
#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "llmprof/hf/files.h"
#include "llmprof/hf/hf_config.h"
#include "llmprof/hf/safetensors.h"
#include "llmprof/hf/staged_folder.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/rundir/files.h"

namespace fs = std::filesystem;

namespace llmprof::checkpoint {

using detail::HfModelNames;
using detail::Layout;
using detail::TensorMap;

namespace {

// The checkpoint's tensors under Hugging Face's names, in its layout (contiguous float32).
std::vector<std::pair<std::string, torch::Tensor>> hf_tensors(torch::nn::Module& module,
                                                              const config::Config& cfg) {
  const HfModelNames names = detail::names_for(cfg);
  std::map<std::string, torch::Tensor> ours;
  for (const auto& p : module.named_parameters()) ours.emplace(p.key(), p.value());
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const TensorMap& m : names.tensors) {
    auto it = ours.find(m.ours);
    if (it == ours.end()) continue;
    torch::Tensor t = it->second.detach().to(torch::kFloat);
    const std::string prefix = m.body ? names.body_prefix : "";
    if (m.layout == Layout::kRowsOf3) {
      auto parts = t.chunk(3, 0);
      for (size_t i = 0; i < 3; ++i) {
        tensors.emplace_back(prefix + m.theirs[i], parts[i].contiguous());
      }
    } else {
      tensors.emplace_back(prefix + m.theirs[0],
                           (m.layout == Layout::kTransposed ? t.t() : t).contiguous());
    }
  }
  return tensors;
}

// A Llama run's config.json: model_type and token ids from the config.json it started from (llama,
// qwen2 or mistral), else llama (qwen2 when it has q/k/v biases: LlamaConfig's attention_bias
// would add one to o_proj too).
hf::HfModelConfig llama_config_for(const config::Config& cfg, int64_t vocab,
                                   const std::optional<hf::HfModelConfig>& base) {
  const config::ModelConfig& m = cfg.model;
  hf::HfModelConfig hc = base && base->llama_family() ? *base : hf::HfModelConfig{};
  const bool bias = m.attention_bias;
  if (!(base && base->llama_family()) || (bias && hc.model_type != hf::HfModelType::kQwen2)) {
    hc.model_type = bias ? hf::HfModelType::kQwen2 : hf::HfModelType::kLlama;
  }
  hc.file.clear();
  hc.defaulted.clear();
  hc.id2label.clear();
  hc.vocab_size = vocab;
  hc.torch_dtype = "float32";  // what model.safetensors holds
  hc.tie_word_embeddings = m.tie_embeddings;
  const bool qwen2 = hc.model_type == hf::HfModelType::kQwen2;
  hc.architectures = {qwen2 ? "Qwen2ForCausalLM"
                      : hc.model_type == hf::HfModelType::kMistral ? "MistralForCausalLM"
                                                                   : "LlamaForCausalLM"};
  hf::LlamaFields& l = hc.llama;
  l.num_hidden_layers = m.n_layer;
  l.num_attention_heads = m.n_head;
  l.num_key_value_heads = m.n_kv_head > 0 ? m.n_kv_head : m.n_head;
  l.hidden_size = m.n_embd;
  l.head_dim = m.head_dim > 0 ? m.head_dim : m.n_embd / m.n_head;
  l.intermediate_size = m.intermediate_size > 0 ? m.intermediate_size : 4 * m.n_embd;
  l.max_position_embeddings = m.max_positions > 0 ? m.max_positions : m.block_size;
  l.rope_theta = m.rope_theta;
  l.rms_norm_eps = m.rms_norm_eps;
  l.attention_bias = bias;
  l.attention_dropout = m.dropout;
  l.hidden_act = "silu";
  l.mlp_bias = false;
  if (m.sliding_window > 0) {
    l.sliding_window = m.sliding_window;
    l.use_sliding_window = true;
  } else if (qwen2) {
    l.use_sliding_window = false;  // keeps the file's sliding_window, switched off
  } else {
    l.sliding_window.reset();
  }
  if (m.rope_scaling_type == config::RopeScaling::kNone) {
    l.rope_scaling.reset();
  } else {
    hf::RopeScaling r;
    r.type = "llama3";
    r.factor = m.rope_scaling_factor;
    r.low_freq_factor = m.rope_scaling_low_freq_factor;
    r.high_freq_factor = m.rope_scaling_high_freq_factor;
    r.original_max_position_embeddings = m.rope_scaling_original_max_position_embeddings;
    l.rope_scaling = r;
  }
  return hc;
}

// config.json: the model's shape from the run; what the run does not decide (token ids,
// initializer range, class names when the count is the same) from the config.json it started
// from, when the checkpoint keeps one (base).
hf::HfModelConfig hf_config_for(const config::Config& cfg,
                                int64_t vocab,
                                const std::optional<hf::HfModelConfig>& base,
                                const std::string& ckpt_yaml) {
  const config::ModelConfig& m = cfg.model;
  if (m.type == config::ModelType::kLlama) return llama_config_for(cfg, vocab, base);
  const bool gpt = m.type == config::ModelType::kGpt;
  const hf::HfModelType type = gpt ? hf::HfModelType::kGpt2 : hf::HfModelType::kDistilBert;
  hf::HfModelConfig hc = base && base->model_type == type ? *base : hf::HfModelConfig{};
  hc.file.clear();
  hc.defaulted.clear();
  hc.model_type = type;
  hc.vocab_size = vocab;
  hc.tie_word_embeddings = true;
  hc.torch_dtype = "float32";  // what model.safetensors holds
  const int64_t positions = m.max_positions > 0 ? m.max_positions : m.block_size;
  if (gpt) {
    if (!m.bias) {
      throw ConfigError(
          fmt::format("{}: model.bias=false has no GPT-2 equivalent (GPT-2 has "
                      "biases)",
                      ckpt_yaml));
    }
    hc.architectures = {"GPT2LMHeadModel"};
    hc.gpt2.n_layer = m.n_layer;
    hc.gpt2.n_head = m.n_head;
    hc.gpt2.n_embd = m.n_embd;
    hc.gpt2.n_positions = positions;
    hc.gpt2.n_inner.reset();  // 4 x n_embd, llmprof's only width
    hc.gpt2.layer_norm_epsilon = 1e-5;
    hc.gpt2.activation_function =
        m.activation == config::Activation::kGeluTanh ? "gelu_new" : "gelu";
    hc.gpt2.resid_pdrop = hc.gpt2.embd_pdrop = hc.gpt2.attn_pdrop = m.dropout;
    return hc;
  }
  const bool classify = cfg.train.task == config::TaskKind::kClassify;
  hc.architectures = {classify ? "DistilBertForSequenceClassification" : "DistilBertForMaskedLM"};
  hc.distilbert.n_layers = m.n_layer;
  hc.distilbert.n_heads = m.n_head;
  hc.distilbert.dim = m.n_embd;
  hc.distilbert.hidden_dim = m.ffn_dim > 0 ? m.ffn_dim : 4 * m.n_embd;
  hc.distilbert.max_position_embeddings = positions;
  hc.distilbert.dropout = hc.distilbert.attention_dropout = m.dropout;
  hc.distilbert.activation = "gelu";
  hc.distilbert.sinusoidal_pos_embds = false;
  if (classify && static_cast<int64_t>(hc.id2label.size()) != m.num_labels) {
    hc.id2label.clear();
    for (int64_t i = 0; i < m.num_labels; ++i) hc.id2label.push_back(fmt::format("LABEL_{}", i));
  }
  if (!classify) hc.id2label.clear();
  return hc;
}

// The tokenizer files to copy: the checkpoint's own copy, checked against the hash it records;
// for a checkpoint saved before tokenizers were recorded, the files config.yaml names.
config::DataConfig tokenizer_files(const std::string& dir,
                                   const rundir::CheckpointMeta& meta,
                                   const config::Config& cfg) {
  config::DataConfig d = cfg.data;
  if (meta.tokenizer) {
    config::Config copy = cfg;
    copy.given_keys.clear();  // the run's own config names the run's tokenizer
    copy.model.init_from.clear();
    const RunTokenizer rt = take_checkpoint_tokenizer(copy, dir, "export");
    check_run_tokenizer(rt, *data::make_tokenizer(copy.data, ""), dir);
    return copy.data;
  }
  std::error_code ec;
  for (const std::string& f : {d.vocab_path, d.merges_path}) {
    if (f.empty() || fs::is_regular_file(f, ec)) continue;
    throw ConfigError(
        fmt::format("export: checkpoint {} keeps no copy of its tokenizer (saved by "
                    "an earlier llmprof) and the file its config.yaml names, '{}', "
                    "is gone: put it back, or train again to get a checkpoint that "
                    "keeps its tokenizer",
                    dir, f));
  }
  return d;
}

// Copies the tokenizer files into folder; returns a note when transformers has no class for it.
std::string write_tokenizer(const config::DataConfig& d,
                            const std::string& folder,
                            int64_t positions,
                            std::vector<std::string>& files) {
  auto copy = [&](const std::string& from, const std::string& name) {
    fs::copy_file(from, fs::path(folder) / name);
    files.push_back(name);
  };
  if (d.tokenizer == config::TokenizerKind::kGpt2) {
    copy(d.vocab_path, std::string(hf::kVocabJson));
    copy(d.merges_path, std::string(hf::kMergesTxt));
    return {};
  }
  if (d.tokenizer == config::TokenizerKind::kHf) {
    // tokenizer.json as the run read it; transformers' AutoTokenizer takes it through
    // PreTrainedTokenizerFast (its post-processor adds BOS/EOS as the original did).
    copy(d.vocab_path, std::string(hf::kTokenizerJson));
    hf::write_tokenizer_config(folder, {"PreTrainedTokenizerFast", positions, std::nullopt});
    files.push_back(std::string(hf::kTokenizerConfigJson));
    return {};
  }
  if (d.tokenizer == config::TokenizerKind::kWordpiece) {
    copy(d.vocab_path, std::string(hf::kVocabTxt));
    hf::write_tokenizer_config(folder, {"DistilBertTokenizer", positions, d.lower_case});
    files.push_back(std::string(hf::kTokenizerConfigJson));
    return {};
  }
  return fmt::format(
      "data.tokenizer={} has no transformers tokenizer class: the folder holds "
      "the model only; map text to ids with the run's own vocabulary",
      config::name(d.tokenizer));
}

// The checkpoint's tensors fix the vocabulary (model.vocab_size 0 means "the tokenizer's"):
// the rows of the token embedding that checkpoint.json lists.
int64_t checkpoint_vocab(const rundir::CheckpointMeta& meta, const config::Config& cfg) {
  return meta.rows_of({"wte.weight", "word_embeddings.weight", "embed_tokens.weight"})
      .value_or(cfg.model.vocab_size);
}

// model.safetensors, config.json and the tokenizer files into the staged folder, stopping at a
// signal between files.
void write_folder(const hf::StagedFolder& staged,
                  const std::vector<hf::TensorToWrite>& to_write,
                  const hf::HfModelConfig& hc,
                  const config::DataConfig& tok,
                  const config::Config& cfg,
                  HfExport& result) {
  hf::write_safetensors((fs::path(staged.path()) / hf::kSafetensors).string(), to_write,
                        hf::SafetensorsMetadata{{"format", "pt"}});
  result.tensors = static_cast<int64_t>(to_write.size());
  result.files.push_back(std::string(hf::kSafetensors));
  staged.check_interrupted();
  hf::write_hf_config(staged.path(), hc);
  result.files.push_back(std::string(hf::kConfigJson));
  staged.check_interrupted();
  const int64_t positions =
      cfg.model.max_positions > 0 ? cfg.model.max_positions : cfg.model.block_size;
  if (std::string note = write_tokenizer(tok, staged.path(), positions, result.files);
      !note.empty()) {
    result.notes.push_back(std::move(note));
  }
  staged.check_interrupted();
}

}  // namespace

HfExport export_hf(const std::string& path,
                   const std::string& out,
                   const ModelFactory& build_model) {
  config::Config probe;
  const std::string key = "export";
  if (is_hf_folder(path)) {
    throw ConfigError(
        fmt::format("export: '{}' is a Hugging Face folder, not an llmprof run or "
                    "checkpoint: it already is what export writes "
                    "(from_pretrained loads it as it is)",
                    path));
  }
  const std::string dir = resolve_checkpoint_dir(path, probe, key);
  const std::string ckpt_yaml = rundir::path(dir, rundir::kConfig);
  if (!fs::exists(ckpt_yaml)) {
    throw ConfigError(
        fmt::format("{}: checkpoint {} has no config.yaml; it was not written by "
                    "llmprof train",
                    path, dir));
  }
  if (fs::exists(out)) {
    throw ConfigError(fmt::format("--out: '{}' exists; results are never overwritten", out));
  }
  const config::Config cfg = config::load_config(ckpt_yaml);
  const std::string meta_path = rundir::path(dir, rundir::kCheckpointMeta);
  rundir::CheckpointMeta meta;
  try {
    meta = rundir::read_checkpoint_meta(meta_path);
  } catch (const DataError& e) {
    throw ConfigError(fmt::format("export: {}", e.what()));
  }
  const int64_t vocab = checkpoint_vocab(meta, cfg);
  const config::DataConfig tok = tokenizer_files(dir, meta, cfg);
  std::optional<hf::HfModelConfig> base;
  if (!meta.hf_config.empty()) base = hf::read_hf_config_file(rundir::path(dir, meta.hf_config));
  const hf::HfModelConfig hc = hf_config_for(cfg, vocab, base, ckpt_yaml);

  const std::shared_ptr<torch::nn::Module> model = build_model(cfg, vocab);
  load_checkpoint(dir, *model, cfg, key);
  const auto tensors = hf_tensors(*model, cfg);
  std::vector<hf::TensorToWrite> to_write;
  for (const auto& [name, t] : tensors) {
    to_write.push_back({name, hf::DType::kF32, t.sizes().vec(), t.data_ptr(),
                        static_cast<size_t>(t.numel()) * sizeof(float)});
  }

  HfExport result;
  result.architecture = hc.architectures.front();
  hf::StagedFolder staged(out);  // from here: an error or a signal leaves nothing behind
  try {
    write_folder(staged, to_write, hc, tok, cfg, result);
  } catch (const fs::filesystem_error& e) {  // disk full, permission: the staged folder goes
    throw IoError(fmt::format("export to '{}': {}", out, e.what()));
  }
  staged.commit();
  result.folder = out;
  return result;
}

}  // namespace llmprof::checkpoint
