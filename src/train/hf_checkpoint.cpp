// Hugging Face folders in and out: the name table, adopting a folder's model and tokenizer into a
// config, loading its weights, and exporting an llmprof checkpoint as one.
#include "llmprof/train/hf_checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "llmprof/config/config.h"
#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/hf/hf_config.h"
#include "llmprof/hf/safetensors.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/train/task.h"

namespace fs = std::filesystem;

namespace llmprof::train {

namespace {

// How a Hugging Face tensor becomes llmprof's.
enum class Layout {
  kSame,
  kTransposed,  // GPT-2's Conv1D stores (in, out); llmprof's Linear is (out, in)
  kRowsOf3,     // llmprof's fused qkv_lin = [q_lin; k_lin; v_lin] along dim 0
};

struct TensorMap {
  std::string ours;
  std::vector<std::string> theirs;  // one, or three for kRowsOf3; without the body prefix
  Layout layout = Layout::kSame;
  bool body = true;  // under the body prefix (transformer. / distilbert.) in a full model's file
};

// Tensors of a full Hugging Face model that llmprof computes without storing: the tied LM head
// (checked equal to the embedding) and GPT-2's causal-mask buffers.
struct HfModelNames {
  std::string body_prefix;  // "transformer." (GPT2LMHeadModel), "distilbert."
  std::vector<TensorMap> tensors;
  std::string tied_head;     // lm_head.weight / vocab_projector.weight
  std::string tied_to;       // its llmprof twin: wte.weight / word_embeddings.weight
  std::vector<std::string> buffer_suffixes;  // ".attn.bias", ".attn.masked_bias"
};

HfModelNames gpt2_names(int64_t n_layer) {
  HfModelNames n;
  n.body_prefix = "transformer.";
  n.tied_head = "lm_head.weight";
  n.tied_to = "wte.weight";
  n.buffer_suffixes = {".attn.bias", ".attn.masked_bias"};
  auto same = [&](const std::string& ours, const std::string& theirs) {
    n.tensors.push_back({ours, {theirs}, Layout::kSame});
  };
  auto conv1d = [&](const std::string& ours, const std::string& theirs) {
    n.tensors.push_back({ours, {theirs}, Layout::kTransposed});
  };
  same("wte.weight", "wte.weight");
  same("wpe.weight", "wpe.weight");
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string o = fmt::format("h{}.", i), t = fmt::format("h.{}.", i);
    for (const char* ln : {"ln_1", "ln_2"}) {
      same(o + ln + ".weight", t + ln + ".weight");
      same(o + ln + ".bias", t + ln + ".bias");
    }
    for (const char* lin : {"attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"}) {
      conv1d(o + lin + ".weight", t + lin + ".weight");
      same(o + lin + ".bias", t + lin + ".bias");
    }
  }
  same("ln_f.weight", "ln_f.weight");
  same("ln_f.bias", "ln_f.bias");
  return n;
}

HfModelNames distilbert_names(int64_t n_layer, bool mlm_head) {
  HfModelNames n;
  n.body_prefix = "distilbert.";
  n.buffer_suffixes = {"embeddings.position_ids"};
  auto same = [&](const std::string& ours, const std::string& theirs, bool body = true) {
    n.tensors.push_back({ours, {theirs}, Layout::kSame, body});
  };
  same("word_embeddings.weight", "embeddings.word_embeddings.weight");
  same("position_embeddings.weight", "embeddings.position_embeddings.weight");
  same("emb_layer_norm.weight", "embeddings.LayerNorm.weight");
  same("emb_layer_norm.bias", "embeddings.LayerNorm.bias");
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string o = fmt::format("layers.{}.", i), t = fmt::format("transformer.layer.{}.", i);
    for (const char* part : {"weight", "bias"}) {
      const std::string p = std::string(".") + part;
      n.tensors.push_back({o + "attention.qkv_lin" + p,
                           {t + "attention.q_lin" + p, t + "attention.k_lin" + p,
                            t + "attention.v_lin" + p},
                           Layout::kRowsOf3});
      for (const char* m : {"attention.out_lin", "sa_layer_norm", "ffn.lin1", "ffn.lin2",
                            "output_layer_norm"}) {
        same(o + m + p, t + m + p);
      }
    }
  }
  if (mlm_head) {
    n.tied_head = "vocab_projector.weight";
    n.tied_to = "word_embeddings.weight";
    for (const char* m : {"vocab_transform", "vocab_layer_norm"}) {
      same(std::string(m) + ".weight", std::string(m) + ".weight", false);
      same(std::string(m) + ".bias", std::string(m) + ".bias", false);
    }
    same("vocab_projector_bias", "vocab_projector.bias", false);
  } else {
    for (const char* m : {"pre_classifier", "classifier"}) {
      same(std::string(m) + ".weight", std::string(m) + ".weight", false);
      same(std::string(m) + ".bias", std::string(m) + ".bias", false);
    }
  }
  return n;
}

HfModelNames names_for(const config::Config& cfg) {
  if (cfg.model.type == config::ModelType::kGpt) return gpt2_names(cfg.model.n_layer);
  return distilbert_names(cfg.model.n_layer, cfg.train.task == config::TaskKind::kMlm);
}

std::string shape_text(at::IntArrayRef s) { return fmt::format("({})", fmt::join(s, ", ")); }

// A folder's tensors by name, as float32 torch tensors.
class HfTensors {
 public:
  virtual ~HfTensors() = default;
  virtual const std::string& file() const = 0;
  virtual std::vector<std::string> names() const = 0;
  virtual std::optional<torch::Tensor> get(const std::string& name) const = 0;
};

class SafetensorsTensors final : public HfTensors {
 public:
  explicit SafetensorsTensors(const std::string& path) : file_(hf::SafetensorsFile::open(path)) {}
  const std::string& file() const override { return file_.path(); }
  std::vector<std::string> names() const override { return file_.names(); }
  std::optional<torch::Tensor> get(const std::string& name) const override {
    const hf::TensorView* v = file_.find(name);
    if (v == nullptr) return std::nullopt;
    std::vector<float> values = hf::to_float(*v);  // F32, F16, BF16; others: DataError
    return torch::from_blob(values.data(), v->shape, torch::kFloat).clone();
  }

 private:
  hf::SafetensorsFile file_;
};

// pytorch_model.bin: torch.save's zip archive of a state dict, read with LibTorch's unpickler.
class PickleTensors final : public HfTensors {
 public:
  explicit PickleTensors(const std::string& path) : path_(path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw IoError(fmt::format("{}: cannot read", path));
    torch::IValue v;
    try {
      v = torch::pickle_load(bytes);
    } catch (const c10::Error& e) {
      const std::string what = e.what();
      throw DataError(fmt::format("{}: LibTorch cannot read this pytorch_model.bin ({}); convert "
                                  "it to model.safetensors",
                                  path, what.substr(0, what.find('\n'))));
    }
    if (!v.isGenericDict()) {
      throw DataError(fmt::format("{}: not a state dict (a {})", path, v.tagKind()));
    }
    for (const auto& kv : v.toGenericDict()) {
      if (!kv.key().isString() || !kv.value().isTensor()) continue;
      tensors_.emplace(kv.key().toStringRef(), kv.value().toTensor().to(torch::kFloat));
      order_.push_back(kv.key().toStringRef());
    }
  }
  const std::string& file() const override { return path_; }
  std::vector<std::string> names() const override { return order_; }
  std::optional<torch::Tensor> get(const std::string& name) const override {
    auto it = tensors_.find(name);
    if (it == tensors_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::string path_;
  std::map<std::string, torch::Tensor> tensors_;
  std::vector<std::string> order_;
};

std::unique_ptr<HfTensors> open_weights(const std::string& folder) {
  const hf::HfWeightsFile w = hf::find_weights(folder);
  if (w.format == hf::HfWeightsFormat::kSafetensors) {
    return std::make_unique<SafetensorsTensors>(w.path);
  }
  return std::make_unique<PickleTensors>(w.path);
}

ConfigError key_error(const config::Config& cfg, const std::string& key, const std::string& what) {
  return ConfigError(fmt::format("{}: {}", key, what), cfg.source_file, key);
}

}  // namespace

bool is_hf_folder(const std::string& path) {
  if (path.empty()) return false;
  std::error_code ec;
  const fs::path config = fs::path(path) / "config.json";
  if (!fs::is_regular_file(config, ec)) return false;
  std::ifstream in(config);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("model_type");
}

std::vector<std::string> adopt_hf_model(config::Config& cfg, const std::string& folder,
                                        const std::string& key) {
  hf::HfModelConfig hc;
  hf::HfTokenizerFiles tok;
  try {
    hc = hf::read_hf_config(folder);
    tok = hf::find_tokenizer_files(folder, hc.model_type);
  } catch (const DataError& e) {
    throw key_error(cfg, key, e.what());
  }
  if (!hc.tie_word_embeddings) {
    throw key_error(cfg, key, fmt::format("{} has tie_word_embeddings=false; llmprof's models "
                                          "tie the LM head to the token embedding",
                                          hc.file));
  }
  // (key, value) pairs the folder fixes, in the order they are reported.
  std::vector<std::pair<std::string, std::string>> wanted;
  const bool gpt2 = hc.model_type == hf::HfModelType::kGpt2;
  if (gpt2) {
    const hf::Gpt2Fields& g = hc.gpt2;
    if (g.n_inner && *g.n_inner != 4 * g.n_embd) {
      throw key_error(cfg, key, fmt::format("{}: n_inner {} is not 4 x n_embd ({}); llmprof's "
                                            "GPT MLP is 4 x n_embd wide",
                                            hc.file, *g.n_inner, 4 * g.n_embd));
    }
    if (g.activation_function != "gelu_new" && g.activation_function != "gelu") {
      throw key_error(cfg, key, fmt::format("{}: activation_function {} is not supported (gelu_new "
                                            "or gelu)",
                                            hc.file, g.activation_function));
    }
    if (g.layer_norm_epsilon != 1e-5) {
      throw key_error(cfg, key, fmt::format("{}: layer_norm_epsilon {} differs from llmprof's "
                                            "GPT (1e-5)",
                                            hc.file, g.layer_norm_epsilon));
    }
    wanted = {{"model.type", "gpt"},
              {"model.n_layer", std::to_string(g.n_layer)},
              {"model.n_head", std::to_string(g.n_head)},
              {"model.n_embd", std::to_string(g.n_embd)},
              {"model.max_positions", std::to_string(g.n_positions)},
              {"model.vocab_size", std::to_string(hc.vocab_size)},
              {"model.bias", "true"},
              {"model.activation", g.activation_function == "gelu_new" ? "gelu_tanh" : "gelu"},
              {"data.tokenizer", "gpt2"},
              {"data.vocab_path", tok.vocab_json},
              {"data.merges_path", tok.merges_txt}};
  } else {
    const hf::DistilBertFields& d = hc.distilbert;
    if (d.activation != "gelu") {
      throw key_error(cfg, key, fmt::format("{}: activation {} is not supported (gelu)", hc.file,
                                            d.activation));
    }
    if (d.sinusoidal_pos_embds) {
      throw key_error(cfg, key, fmt::format("{}: sinusoidal_pos_embds=true is not supported "
                                            "(learned positions only)",
                                            hc.file));
    }
    wanted = {{"model.type", "distilbert"},
              {"model.n_layer", std::to_string(d.n_layers)},
              {"model.n_head", std::to_string(d.n_heads)},
              {"model.n_embd", std::to_string(d.dim)},
              {"model.ffn_dim", std::to_string(d.hidden_dim)},
              {"model.max_positions", std::to_string(d.max_position_embeddings)},
              {"model.vocab_size", std::to_string(hc.vocab_size)},
              {"data.tokenizer", "wordpiece"},
              {"data.vocab_path", tok.vocab_txt},
              {"data.lower_case", tok.do_lower_case ? "true" : "false"}};
    const bool classifier = std::find(hc.architectures.begin(), hc.architectures.end(),
                                      "DistilBertForSequenceClassification") !=
                            hc.architectures.end();
    if (classifier && cfg.train.task == config::TaskKind::kClassify) {
      wanted.emplace_back("model.num_labels", std::to_string(hc.num_labels()));
    }
  }
  std::vector<std::string> notes;
  for (const auto& [k, theirs] : wanted) {
    const std::string ours = config::get_value(cfg, k);
    if (ours == theirs) continue;
    // The model's shape is the checkpoint's: a shape the user gave that differs is an error. The
    // tokenizer files are the folder's, whatever data.* said (a config runnable without weights).
    const bool shape = k.rfind("model.", 0) == 0;
    for (const auto& [given, where] : cfg.given_keys) {
      if (!shape || given != k) continue;
      throw ConfigError(fmt::format("{}: {} sets {}={} but the checkpoint {} has {}={}; the "
                                    "model and tokenizer come from the checkpoint: drop the key "
                                    "or give another checkpoint",
                                    k, where, k, ours, folder, k, theirs),
                        cfg.source_file, k);
    }
    config::apply_override(cfg, k + "=" + theirs);
    notes.push_back(fmt::format("{}={} from {} (in place of {})", k, theirs, folder,
                                ours.empty() ? "\"\"" : ours));
  }
  if (cfg.model.block_size > cfg.model.max_positions) {
    throw ConfigError(fmt::format("model.block_size: {} exceeds the checkpoint's {} positions ({})",
                                  cfg.model.block_size, cfg.model.max_positions, hc.file),
                      cfg.source_file, "model.block_size");
  }
  return notes;
}

LoadReport load_hf_checkpoint(const std::string& folder, torch::nn::Module& model,
                              const config::Config& cfg, const std::string& key) {
  std::unique_ptr<HfTensors> file;
  try {
    file = open_weights(folder);
  } catch (const DataError& e) {
    throw key_error(cfg, key, e.what());
  }
  const HfModelNames names = names_for(cfg);
  std::map<std::string, torch::Tensor> ours;
  for (const auto& p : model.named_parameters()) ours.emplace(p.key(), p.value());

  LoadReport r;
  r.path = folder;
  r.task = "pretrained (Hugging Face)";
  std::set<std::string> used;
  // A full model's file prefixes the body (transformer., distilbert.); a bare body's does not.
  auto find = [&](const TensorMap& m, const std::string& name) -> std::optional<torch::Tensor> {
    if (m.body) {
      if (auto t = file->get(names.body_prefix + name)) {
        used.insert(names.body_prefix + name);
        return t;
      }
    }
    if (auto t = file->get(name)) {
      used.insert(name);
      return t;
    }
    return std::nullopt;
  };
  torch::NoGradGuard no_grad;
  for (const TensorMap& m : names.tensors) {
    auto it = ours.find(m.ours);
    if (it == ours.end()) continue;  // e.g. a bias-free model
    std::vector<torch::Tensor> parts;
    for (const std::string& t : m.theirs) {
      if (auto v = find(m, t)) parts.push_back(*v);
    }
    if (parts.size() != m.theirs.size()) {
      r.missing.push_back(m.ours);
      continue;
    }
    torch::Tensor v = m.layout == Layout::kTransposed ? parts[0].t()
                      : m.layout == Layout::kRowsOf3  ? torch::cat(parts, 0)
                                                      : parts[0];
    if (!v.sizes().equals(it->second.sizes())) {
      throw key_error(cfg, key, fmt::format("'{}' ({}) is {} in {} but llmprof's '{}' is {}",
                                            fmt::join(m.theirs, "', '"),
                                            m.layout == Layout::kTransposed ? "transposed" : "as stored",
                                            shape_text(v.sizes()), file->file(), m.ours,
                                            shape_text(it->second.sizes())));
    }
    it->second.copy_(v);
    ++r.loaded;
  }
  if (!names.tied_head.empty()) {
    if (auto head = file->get(names.tied_head)) {
      used.insert(names.tied_head);
      auto twin = ours.find(names.tied_to);
      if (twin != ours.end() && !torch::equal(head->to(twin->second.dtype()), twin->second)) {
        throw key_error(cfg, key, fmt::format("{}: {} differs from the token embedding; llmprof's "
                                              "models tie them",
                                              file->file(), names.tied_head));
      }
    }
  }
  for (const std::string& name : file->names()) {
    if (used.count(name)) continue;
    bool buffer = false;
    for (const std::string& suffix : names.buffer_suffixes) {
      buffer |= name.size() >= suffix.size() &&
                name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    }
    if (!buffer) r.unexpected.push_back(name);
  }
  return r;
}

HfExport export_hf(const std::string& path, const std::string& out) {
  config::Config probe;
  const std::string key = "export";
  const std::string dir = resolve_checkpoint_dir(path, probe, key);
  const std::string ckpt_yaml = rundir::path(dir, rundir::kConfig);
  if (!fs::exists(ckpt_yaml)) {
    throw ConfigError(fmt::format("{}: checkpoint {} has no config.yaml; it was not written by "
                                  "llmprof train",
                                  path, dir));
  }
  if (fs::exists(out)) {
    throw ConfigError(fmt::format("--out: '{}' exists; results are never overwritten", out));
  }
  config::Config cfg = config::load_config(ckpt_yaml);
  // The checkpoint's tensors fix the vocabulary (model.vocab_size 0 means "the tokenizer's").
  std::ifstream meta_in(rundir::path(dir, rundir::kCheckpointMeta));
  const nlohmann::json meta = nlohmann::json::parse(meta_in, nullptr, false);
  int64_t vocab = cfg.model.vocab_size;
  if (meta.is_object() && meta.contains("tensors")) {
    for (const auto& t : meta["tensors"]) {
      const std::string name = t.value("name", "");
      if (name == "wte.weight" || name == "word_embeddings.weight") vocab = t["shape"][0];
    }
  }
  std::unique_ptr<Task> task = make_task(cfg, vocab, /*mlm_predictions=*/1);
  load_checkpoint(dir, task->module(), cfg, key);

  // Hugging Face's names for llmprof's tensors, in the inverse layout.
  const HfModelNames names = names_for(cfg);
  std::map<std::string, torch::Tensor> ours;
  for (const auto& p : task->module().named_parameters()) ours.emplace(p.key(), p.value());
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
  std::vector<hf::TensorToWrite> to_write;
  for (const auto& [name, t] : tensors) {
    to_write.push_back({name, hf::DType::kF32, t.sizes().vec(), t.data_ptr(),
                        static_cast<size_t>(t.numel()) * sizeof(float)});
  }

  HfExport result;
  hf::HfModelConfig hc;
  hc.vocab_size = vocab;
  const config::ModelConfig& m = cfg.model;
  const int64_t positions = m.max_positions > 0 ? m.max_positions : m.block_size;
  if (m.type == config::ModelType::kGpt) {
    hc.model_type = hf::HfModelType::kGpt2;
    hc.architectures = {"GPT2LMHeadModel"};
    hc.gpt2.n_layer = m.n_layer;
    hc.gpt2.n_head = m.n_head;
    hc.gpt2.n_embd = m.n_embd;
    hc.gpt2.n_positions = positions;
    hc.gpt2.activation_function =
        m.activation == config::Activation::kGeluTanh ? "gelu_new" : "gelu";
    hc.gpt2.resid_pdrop = hc.gpt2.embd_pdrop = hc.gpt2.attn_pdrop = m.dropout;
    if (!m.bias) {
      throw ConfigError(fmt::format("{}: model.bias=false has no GPT-2 equivalent (GPT-2 has "
                                    "biases)",
                                    ckpt_yaml));
    }
  } else {
    hc.model_type = hf::HfModelType::kDistilBert;
    const bool classify = cfg.train.task == config::TaskKind::kClassify;
    hc.architectures = {classify ? "DistilBertForSequenceClassification"
                                 : "DistilBertForMaskedLM"};
    hc.distilbert.n_layers = m.n_layer;
    hc.distilbert.n_heads = m.n_head;
    hc.distilbert.dim = m.n_embd;
    hc.distilbert.hidden_dim = m.ffn_dim > 0 ? m.ffn_dim : 4 * m.n_embd;
    hc.distilbert.max_position_embeddings = positions;
    hc.distilbert.dropout = hc.distilbert.attention_dropout = m.dropout;
    if (classify) {
      for (int64_t i = 0; i < m.num_labels; ++i) hc.id2label.push_back(fmt::format("LABEL_{}", i));
    }
  }
  result.architecture = hc.architectures.front();

  const std::string tmp = out + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp);
  hf::write_safetensors((fs::path(tmp) / "model.safetensors").string(), to_write,
                        hf::SafetensorsMetadata{{"format", "pt"}});
  result.tensors = static_cast<int64_t>(to_write.size());
  result.files.push_back("model.safetensors");
  hf::write_hf_config(tmp, hc);
  result.files.push_back("config.json");
  auto copy = [&](const std::string& from, const std::string& name) {
    fs::copy_file(from, fs::path(tmp) / name, fs::copy_options::overwrite_existing);
    result.files.push_back(name);
  };
  if (cfg.data.tokenizer == config::TokenizerKind::kGpt2) {
    copy(cfg.data.vocab_path, "vocab.json");
    copy(cfg.data.merges_path, "merges.txt");
  } else if (cfg.data.tokenizer == config::TokenizerKind::kWordpiece) {
    copy(cfg.data.vocab_path, "vocab.txt");
    const nlohmann::json tc = {{"do_lower_case", cfg.data.lower_case},
                               {"model_max_length", positions},
                               {"tokenizer_class", "DistilBertTokenizer"}};
    output::write_file_atomic((fs::path(tmp) / "tokenizer_config.json").string(),
                              tc.dump(2) + "\n");
    result.files.push_back("tokenizer_config.json");
  } else {
    result.notes.push_back(fmt::format(
        "data.tokenizer={} has no transformers tokenizer class: the folder holds the model only; "
        "map text to ids with the run's own vocabulary",
        config::name(cfg.data.tokenizer)));
  }
  fs::rename(tmp, out);
  result.folder = out;
  return result;
}

}  // namespace llmprof::train
