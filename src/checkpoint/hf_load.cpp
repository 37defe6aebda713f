// Hugging Face folders in, the weights half: a folder's tensors (model.safetensors or
// pytorch_model.bin) copied into a model built from the adopted config, through the name table
// (hf_names.cpp; the config half: hf_adopt.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "hf_errors.h"
#include "hf_names.h"
#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/config/config.h"
#include "llmprof/config/enums.h"
#include "llmprof/error.h"
#include "llmprof/hf/files.h"
#include "llmprof/hf/safetensors.h"

namespace llmprof::checkpoint {

using detail::HfModelNames;
using detail::key_error;
using detail::Layout;
using detail::names_for;
using detail::TensorMap;

namespace {

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
      throw DataError(
          fmt::format("{}: LibTorch cannot read this pytorch_model.bin ({}); convert "
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

// One load: the folder's file, the model's parameters by name, and what was taken from the file.
struct HfLoad {
  const HfTensors& file;
  const HfModelNames& names;
  std::map<std::string, torch::Tensor> ours;
  std::set<std::string> used;

  // A tensor of the file under its name, prefixed by the body (transformer., distilbert.) in a
  // full model's file or bare in a body's.
  std::optional<torch::Tensor> find(const TensorMap& m, const std::string& name) {
    if (m.body) {
      if (auto t = file.get(names.body_prefix + name)) {
        used.insert(names.body_prefix + name);
        return t;
      }
    }
    if (auto t = file.get(name)) {
      used.insert(name);
      return t;
    }
    return std::nullopt;
  }
};

// Copies every tensor of the name table the file holds into the model (in llmprof's layout); one
// it lacks is missing (kept at init). A shape that differs is a ConfigError naming key.
void copy_tensors(HfLoad& load, const config::Config& cfg, const std::string& key, LoadReport& r) {
  torch::NoGradGuard no_grad;
  for (const TensorMap& m : load.names.tensors) {
    auto it = load.ours.find(m.ours);
    if (it == load.ours.end()) continue;  // e.g. a bias-free model
    std::vector<torch::Tensor> parts;
    for (const std::string& t : m.theirs) {
      if (auto v = load.find(m, t)) parts.push_back(*v);
    }
    if (parts.size() != m.theirs.size()) {
      r.missing.push_back(m.ours);
      continue;
    }
    torch::Tensor v = m.layout == Layout::kTransposed ? parts[0].t()
                      : m.layout == Layout::kRowsOf3  ? torch::cat(parts, 0)
                                                      : parts[0];
    if (!v.sizes().equals(it->second.sizes())) {
      throw key_error(
          cfg, key,
          fmt::format("'{}' ({}) is {} in {} but llmprof's '{}' is {}", fmt::join(m.theirs, "', '"),
                      m.layout == Layout::kTransposed ? "transposed" : "as stored",
                      shape_text(v.sizes()), load.file.file(), m.ours,
                      shape_text(it->second.sizes())));
    }
    it->second.copy_(v);
    ++r.loaded;
  }
}

// The LM head a full model's file stores beside the embedding must equal it: llmprof ties them.
void check_tied_head(HfLoad& load, const config::Config& cfg, const std::string& key) {
  const HfModelNames& names = load.names;
  if (names.tied_head.empty()) return;
  auto head = load.file.get(names.tied_head);
  if (!head) return;
  load.used.insert(names.tied_head);
  auto twin = load.ours.find(names.tied_to);
  if (twin != load.ours.end() && !torch::equal(head->to(twin->second.dtype()), twin->second)) {
    throw key_error(cfg, key,
                    fmt::format("{}: {} differs from the token embedding; llmprof's "
                                "models tie them",
                                load.file.file(), names.tied_head));
  }
}

// Every tensor of a Llama-family folder is the model's: none is a head a run adds, so a missing
// one is a ConfigError naming the first.
void check_llama_complete(const HfLoad& load,
                          const config::Config& cfg,
                          const std::string& key,
                          const LoadReport& r) {
  if (cfg.model.type != config::ModelType::kLlama || r.missing.empty()) return;
  const std::string& m = r.missing.front();
  throw key_error(
      cfg, key,
      fmt::format("{} has no tensor '{}{}'{} ({} missing in all)", load.file.file(),
                  m == "lm_head.weight" ? "" : "model.", m,
                  m == "lm_head.weight" ? " (config.json says tie_word_embeddings=false)" : "",
                  r.missing.size()));
}

// The file's tensors nothing took, but for the buffers llmprof computes (GPT-2's causal masks).
std::vector<std::string> unused_tensors(const HfLoad& load) {
  std::vector<std::string> out;
  for (const std::string& name : load.file.names()) {
    if (load.used.count(name)) continue;
    bool buffer = false;
    for (const std::string& suffix : load.names.buffer_suffixes) {
      buffer |= name.size() >= suffix.size() &&
                name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    }
    if (!buffer) out.push_back(name);
  }
  return out;
}

}  // namespace

LoadReport load_hf_checkpoint(const std::string& folder,
                              torch::nn::Module& model,
                              const config::Config& cfg,
                              const std::string& key) {
  std::unique_ptr<HfTensors> file;
  try {
    file = open_weights(folder);
  } catch (const DataError& e) {
    throw key_error(cfg, key, e.what());
  }
  const HfModelNames names = names_for(cfg);
  HfLoad load{*file, names, {}, {}};
  for (const auto& p : model.named_parameters()) load.ours.emplace(p.key(), p.value());

  LoadReport r;
  r.path = folder;
  r.task = "pretrained (Hugging Face)";
  copy_tensors(load, cfg, key, r);
  check_tied_head(load, cfg, key);
  check_llama_complete(load, cfg, key, r);
  r.unexpected = unused_tensors(load);
  return r;
}

}  // namespace llmprof::checkpoint
