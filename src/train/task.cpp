#include "llmprof/train/task.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "llmprof/config/config.h"
#include "llmprof/data/encoder_data.h"
#include "llmprof/device/context.h"
#include "llmprof/device/device.h"
#include "llmprof/error.h"
#include "llmprof/model/distilbert.h"
#include "llmprof/model/flops.h"
#include "llmprof/model/fused_loss.h"
#include "llmprof/model/fused_norm.h"
#include "llmprof/model/llama.h"
#include "llmprof/train/task_model.h"

namespace llmprof::train {

namespace {

torch::Tensor wrap(const int64_t* p, int64_t rows, int64_t cols) {
  return torch::from_blob(const_cast<int64_t*>(p), {rows, cols}, torch::kLong);
}

// ---------------------------------------------------------------------------------------------
// lm: a decoder (nanoGPT's or the Llama family's), next-token cross-entropy over all B * T
// positions. The overrides are written once, in DecoderTask; a Family says what differs: the
// model, its shape and FLOP functions, the formula's text and the K/V and query widths per token
// its KV-cache decoder holds.

// nanoGPT's decoder.
struct GptFamily {
  using Model = model::Gpt;
  using Shape = model::GptShape;
  static Shape shape(const Model& m) {
    const auto& o = m->options();
    return {o.n_layer, o.n_head, o.n_embd, o.block_size, o.vocab_size, o.bias};
  }
  static int64_t kv_width(const Shape& s) { return 2 * s.n_layer * s.n_embd; }
  static int64_t query_width(const Shape& s) { return 2 * s.n_layer * s.n_embd; }
  static double forward_flops(const Shape& s) { return model::gpt_forward_flops_per_sequence(s); }
  static double train_flops(const Shape& s, int64_t B, int64_t A, bool ckpt) {
    return model::gpt_train_flops_per_step(s, B, A, ckpt);
  }
  static profile::ScopeFlops scope_flops(const Shape& s, int64_t B) {
    return model::gpt_scope_forward_flops(s, B);
  }
  static constexpr const char* kFormula =
      "per sequence forward = L*(24*T*C^2 + 4*T^2*C) + 2*T*C*V (matmuls only); "
      "step = 3 x forward x batch_size x grad_accum_steps";
};

// The Llama-family decoder: RoPE, RMSNorm, SwiGLU, grouped-query attention.
struct LlamaFamily {
  using Model = model::Llama;
  using Shape = model::LlamaShape;
  static Shape shape(const Model& m) {
    const model::LlamaOptions& o = m->options();
    return {o.n_layer,     o.n_head,     o.kv_heads(), o.n_embd,         o.head_width(),
            o.ffn_width(), o.block_size, o.vocab_size, o.tie_embeddings, o.attention_bias};
  }
  static int64_t kv_width(const Shape& s) { return 2 * s.n_layer * s.n_kv_head * s.head_dim; }
  static int64_t query_width(const Shape& s) { return 2 * s.n_layer * s.n_head * s.head_dim; }
  static double forward_flops(const Shape& s) { return model::llama_forward_flops_per_sequence(s); }
  static double train_flops(const Shape& s, int64_t B, int64_t A, bool ckpt) {
    return model::llama_train_flops_per_step(s, B, A, ckpt);
  }
  static profile::ScopeFlops scope_flops(const Shape& s, int64_t B) {
    return model::llama_scope_forward_flops(s, B);
  }
  static constexpr const char* kFormula =
      "per sequence forward = L*(2*T*C*(2*nh*hd + 2*nkv*hd) + 6*T*C*F + "
      "4*T^2*nh*hd) + 2*T*C*V (matmuls only: q, k, v, o, SwiGLU, attention "
      "core, lm_head); step = 3 x forward x batch_size x grad_accum_steps";
};

template <typename Family>
class DecoderTask : public Task {
 public:
  explicit DecoderTask(typename Family::Model m)
      : model_(std::move(m)),
        shape_(Family::shape(model_)),
        decoder_(model_, Family::kv_width(shape_), Family::query_width(shape_)) {}
  config::TaskKind kind() const override { return config::TaskKind::kLm; }
  torch::nn::Module& module() override { return *model_; }
  int64_t num_parameters() override { return model_->num_parameters(); }
  torch::Tensor loss(const Batch& b) override { return model_->loss(model_->forward(b.x), b.y); }
  torch::Tensor logits(const Batch& b) override { return model_->forward(b.x); }
  double forward_flops_per_sequence() const override { return Family::forward_flops(shape_); }
  double train_flops_per_step(int64_t B, int64_t A, bool ckpt) const override {
    return Family::train_flops(shape_, B, A, ckpt);
  }
  profile::ScopeFlops scope_forward_flops(int64_t B) const override {
    return Family::scope_flops(shape_, B);
  }
  std::string flops_formula(bool ckpt) const override {
    return std::string(Family::kFormula) + (ckpt ? " + recomputed block forwards" : "");
  }
  model::Decoder* decoder() override { return &decoder_; }

 protected:
  typename Family::Model model_;
  typename Family::Shape shape_;
  model::DecoderOf<typename Family::Model> decoder_;
};

class LmTask : public DecoderTask<GptFamily> {
 public:
  explicit LmTask(model::Gpt m) : DecoderTask(std::move(m)) {}
  std::string describe() const override {
    return fmt::format("gpt L={} H={} C={} T={} V={}", shape_.n_layer, shape_.n_head,
                       shape_.n_embd, shape_.block_size, shape_.vocab_size);
  }
  model::Gpt* gpt() override { return &model_; }
};

class LlamaTask : public DecoderTask<LlamaFamily> {
 public:
  // precision: the run's train.precision, the dtype of the K/V the log line counts.
  LlamaTask(model::Llama m, config::Precision precision)
      : DecoderTask(std::move(m)), precision_(precision) {}
  std::string describe() const override;
  std::optional<rundir::ModelFigures> model_figures(int64_t kv_element_bytes) const override;

 private:
  config::Precision precision_;
};

std::string LlamaTask::describe() const {
  const model::LlamaShape& s = shape_;
  std::string text =
      fmt::format("llama L={} H={} KV={} C={} hd={} F={} T={} V={}{}", s.n_layer, s.n_head,
                  s.n_kv_head, s.n_embd, s.head_dim, s.intermediate_size, s.block_size,
                  s.vocab_size, s.tie_embeddings ? " tied" : "");
  if (s.n_kv_head == s.n_head) return text;
  // GQA against a multi-head model of the same width, the cache in the run's precision (as
  // summary.json's model.gqa counts it: 4 bytes per element in fp32, 2 in bf16 and fp16).
  const model::GqaSavings g =
      model::llama_gqa_savings(s, precision_ == config::Precision::kFp32 ? 4 : 2);
  return text + fmt::format(
                    "; GQA: KV cache {} B/token in {} vs {} for MHA ({:.2f}x less), attention "
                    "forward {:.3g} vs {:.3g} MFLOP/token (k/v projections {:.3g} vs {:.3g})",
                    g.kv_bytes_per_token, config::name(precision_), g.mha_kv_bytes_per_token,
                    static_cast<double>(g.mha_kv_bytes_per_token) /
                        static_cast<double>(g.kv_bytes_per_token),
                    g.attention_flops_per_token * 1e-6, g.mha_attention_flops_per_token * 1e-6,
                    g.kv_proj_flops_per_token * 1e-6, g.mha_kv_proj_flops_per_token * 1e-6);
}

std::optional<rundir::ModelFigures> LlamaTask::model_figures(int64_t kv_element_bytes) const {
  const model::LlamaShape& s = shape_;
  const model::GqaSavings g = model::llama_gqa_savings(s, kv_element_bytes);
  rundir::GqaSummary q{s.n_head,
                       s.n_kv_head,
                       s.head_dim,
                       s.n_layer,
                       s.block_size,
                       kv_element_bytes,
                       g.kv_bytes_per_token,
                       g.mha_kv_bytes_per_token,
                       g.attention_flops_per_token,
                       g.mha_attention_flops_per_token,
                       g.kv_proj_flops_per_token,
                       g.mha_kv_proj_flops_per_token,
                       "analytic, forward: against a multi-head model of the same width "
                       "(n_kv_head = n_head); KV cache = n_layer * 2 * kv heads * head_dim * "
                       "kv_element_bytes; attention = the q, k, v, o projections and the scores "
                       "and mix at T = block_size, per token"};
  return rundir::ModelFigures{"llama", q};
}

// The llama options of cfg's model keys.
model::LlamaOptions llama_options(const config::Config& cfg, int64_t vocab) {
  const config::ModelConfig& m = cfg.model;
  model::LlamaOptions o;
  o.n_layer = m.n_layer;
  o.n_head = m.n_head;
  o.n_kv_head = m.n_kv_head;
  o.n_embd = m.n_embd;
  o.head_dim = m.head_dim;
  o.intermediate_size = m.intermediate_size;
  o.block_size = m.block_size;
  o.vocab_size = vocab;
  o.rope_theta = m.rope_theta;
  o.rms_norm_eps = m.rms_norm_eps;
  o.tie_embeddings = m.tie_embeddings;
  o.attention_bias = m.attention_bias;
  o.rope_llama3 = m.rope_scaling_type == config::RopeScaling::kLlama3;
  o.rope_factor = m.rope_scaling_factor;
  o.rope_low_freq_factor = m.rope_scaling_low_freq_factor;
  o.rope_high_freq_factor = m.rope_scaling_high_freq_factor;
  o.rope_original_max_positions = m.rope_scaling_original_max_position_embeddings;
  o.activation_checkpointing = cfg.train.activation_checkpointing;
  o.sdpa = m.attention == config::Attention::kSdpa;
  o.fused_loss = m.fused_loss;
  o.fused_norm = m.fused_norm;
  o.fused_swiglu = m.fused_swiglu;
  return o;
}

// ---------------------------------------------------------------------------------------------
// mlm / classify: the DistilBERT encoder with one of its two heads.

class EncoderTask : public Task {
 public:
  EncoderTask(model::DistilBert m, model::EncoderShape shape)
      : model_(std::move(m)), shape_(shape) {}
  config::TaskKind kind() const override {
    return model_->options().head == model::EncoderHead::kMaskedLm ? config::TaskKind::kMlm
                                                                   : config::TaskKind::kClassify;
  }
  torch::nn::Module& module() override { return *model_; }
  int64_t num_parameters() override { return model_->num_parameters(); }
  torch::Tensor loss(const Batch& b) override {
    // mlm: logits (B, P, V) vs y (B, P); classify: logits (B, K) vs y (B, 1) -> (B).
    return model_->loss(logits(b), b.pos.defined() ? b.y : b.y.reshape({-1}));
  }
  torch::Tensor logits(const Batch& b) override {
    torch::Tensor hidden = model_->encode(b.x, b.mask);  // (B, T, C)
    if (model_->options().head == model::EncoderHead::kMaskedLm) {
      return model_->mlm_logits(hidden, b.pos);  // (B, P, V)
    }
    return model_->classify_logits(hidden);  // (B, K)
  }
  double forward_flops_per_sequence() const override {
    return model::encoder_forward_flops_per_sequence(shape_);
  }
  double train_flops_per_step(int64_t B, int64_t A, bool /*ckpt*/) const override {
    return model::encoder_train_flops_per_step(shape_, B, A);
  }
  profile::ScopeFlops scope_forward_flops(int64_t B) const override {
    return model::encoder_scope_forward_flops(shape_, B);
  }
  std::string flops_formula(bool /*ckpt*/) const override {
    return shape_.mlm_predictions > 0
               ? "per sequence forward = L*(8*T*C^2 + 4*T*C*F + 4*T^2*C) + P*(2*C^2 + 2*C*V) "
                 "(matmuls only; MLM head at the P masked positions); step = 3 x forward x "
                 "batch_size x grad_accum_steps"
               : "per sequence forward = L*(8*T*C^2 + 4*T*C*F + 4*T^2*C) + 2*C^2 + 2*C*K "
                 "(matmuls only; classifier on [CLS]); step = 3 x forward x batch_size x "
                 "grad_accum_steps";
  }
  std::string describe() const override {
    return fmt::format("distilbert L={} H={} C={} F={} T={} V={}, {}", shape_.n_layer,
                       shape_.n_head, shape_.n_embd, shape_.ffn_dim, shape_.block_size,
                       shape_.vocab_size,
                       shape_.mlm_predictions > 0
                           ? fmt::format("masked-LM head at P={} positions", shape_.mlm_predictions)
                           : fmt::format("classifier over {} labels", shape_.num_labels));
  }

 private:
  model::DistilBert model_;
  model::EncoderShape shape_;
};

int64_t resolve_vocab(const config::Config& cfg, int64_t tokenizer_vocab_size) {
  const int64_t vocab = cfg.model.vocab_size;
  if (vocab == 0) return tokenizer_vocab_size;
  if (vocab < tokenizer_vocab_size) {
    throw ConfigError(
        fmt::format("model.vocab_size: {} is smaller than the {} tokenizer's {} tokens", vocab,
                    config::name(cfg.data.tokenizer), tokenizer_vocab_size),
        cfg.source_file, "model.vocab_size");
  }
  return vocab;
}

}  // namespace

Batch wrap_batch(const data::BatchView& v) {
  const data::BatchLayout& l = v.layout;
  Batch b;
  b.x = wrap(v.x, l.batch_size, l.block_size);
  b.y = wrap(v.y, l.batch_size, l.y_cols);
  if (l.has_mask) b.mask = wrap(v.mask, l.batch_size, l.block_size);
  if (l.pos_cols > 0) b.pos = wrap(v.pos, l.batch_size, l.pos_cols);
  return b;
}

Batch make_batch(const data::BatchSampler& sampler, int64_t index) {
  const data::BatchLayout l = sampler.layout();
  Batch b;
  b.x = torch::empty({l.batch_size, l.block_size}, torch::kLong);
  b.y = torch::empty({l.batch_size, l.y_cols}, torch::kLong);
  data::BatchBuffers out{b.x.data_ptr<int64_t>(), b.y.data_ptr<int64_t>(), nullptr, nullptr};
  if (l.has_mask) {
    b.mask = torch::empty({l.batch_size, l.block_size}, torch::kLong);
    out.mask = b.mask.data_ptr<int64_t>();
  }
  if (l.pos_cols > 0) {
    b.pos = torch::empty({l.batch_size, l.pos_cols}, torch::kLong);
    out.pos = b.pos.data_ptr<int64_t>();
  }
  sampler.fill(index, out);
  return b;
}

void Task::eval_batch(const Batch& b, EvalSums& sums) {
  torch::Tensor lg = logits(b);
  const int64_t K = lg.size(-1);
  torch::Tensor flat = lg.reshape({-1, K}).to(torch::kFloat);
  torch::Tensor labels = b.y.reshape({-1});
  torch::Tensor ce = torch::nn::functional::cross_entropy(
      flat, labels,
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(data::kIgnoreLabel).reduction(
          torch::kSum));
  torch::Tensor counted = labels.ne(data::kIgnoreLabel);
  sums.loss_sum += ce.item<double>();  // sync: eval reads its sums per batch
  sums.targets += counted.sum().item<int64_t>();
  if (reports_accuracy()) {
    sums.correct += (flat.argmax(-1).eq(labels) & counted).sum().item<int64_t>();
  }
  // Rows with at least one scored target are real (sequential eval pads its last batch).
  const int64_t real_rows = counted.view({b.y.size(0), -1}).any(1).sum().item<int64_t>();
  sums.batches += 1;
  sums.rows += real_rows;
  sums.tokens += real_rows * b.x.size(1);
}

std::unique_ptr<Task> make_task(const config::Config& cfg, int64_t tokenizer_vocab_size,
                                int64_t mlm_predictions) {
  const config::ModelConfig& m = cfg.model;
  if (m.fused_loss && !model::fused_cross_entropy_available()) {
    throw ConfigError("model.fused_loss: true, but this llmprof was built without its CUDA "
                      "kernels (scripts/build_gpu.sh builds them where nvcc is found); set "
                      "model.fused_loss=false",
                      cfg.source_file, "model.fused_loss");
  }
  if ((m.fused_norm || m.fused_swiglu) && device::capabilities(cfg.device).fused_kernels &&
      !model::fused_norm_kernels_available()) {
    spdlog::warn(
        "model.fused_norm, model.fused_swiglu: this llmprof was built without their CUDA "
        "kernels (scripts/build_gpu.sh builds them where nvcc is found): the fused ops run as "
        "LibTorch ops");
  }
  const int64_t vocab = resolve_vocab(cfg, tokenizer_vocab_size);
  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  if (m.type == config::ModelType::kGpt) {
    model::GptOptions opt;
    opt.n_layer = m.n_layer;
    opt.n_head = m.n_head;
    opt.n_embd = m.n_embd;
    opt.block_size = m.block_size;
    opt.max_positions = m.max_positions;
    opt.vocab_size = vocab;
    opt.gelu_tanh = m.activation == config::Activation::kGeluTanh;
    opt.sdpa = m.attention == config::Attention::kSdpa;
    opt.fused_loss = m.fused_loss;
    opt.fused_norm = m.fused_norm;
    opt.dropout = m.dropout;
    opt.bias = m.bias;
    opt.activation_checkpointing = cfg.train.activation_checkpointing;
    return std::make_unique<LmTask>(model::Gpt(opt));
  }
  if (m.type == config::ModelType::kLlama) {
    if (m.dropout > 0) {
      throw ConfigError("model.dropout: model.type=llama has no dropout (as Llama's attention "
                        "and MLP in inference and most fine-tuning); set it to 0",
                        cfg.source_file, "model.dropout");
    }
    return std::make_unique<LlamaTask>(model::Llama(llama_options(cfg, vocab)),
                                       cfg.train.precision);
  }
  if (cfg.train.activation_checkpointing) {
    throw ConfigError("train.activation_checkpointing: not implemented for model.type=distilbert "
                      "(gpt only); set it to false",
                      cfg.source_file, "train.activation_checkpointing");
  }
  model::DistilBertOptions opt;
  opt.n_layer = m.n_layer;
  opt.n_head = m.n_head;
  opt.dim = m.n_embd;
  opt.hidden_dim = m.ffn_dim > 0 ? m.ffn_dim : 4 * m.n_embd;
  opt.vocab_size = vocab;
  opt.max_positions = m.max_positions > 0 ? m.max_positions : m.block_size;
  opt.dropout = m.dropout;
  opt.attention_dropout = m.dropout;
  opt.classifier_dropout = m.dropout;
  opt.num_labels = m.num_labels;
  const bool mlm = cfg.train.task == config::TaskKind::kMlm;
  opt.head = mlm ? model::EncoderHead::kMaskedLm : model::EncoderHead::kClassify;
  opt.fused_loss = m.fused_loss;
  opt.fused_norm = m.fused_norm;
  model::EncoderShape shape{};
  shape.n_layer = opt.n_layer;
  shape.n_head = opt.n_head;
  shape.n_embd = opt.dim;
  shape.ffn_dim = opt.hidden_dim;
  shape.block_size = m.block_size;
  shape.vocab_size = opt.vocab_size;
  shape.max_positions = opt.max_positions;
  shape.num_labels = opt.num_labels;
  shape.mlm_predictions = mlm ? mlm_predictions : 0;
  return std::make_unique<EncoderTask>(model::DistilBert(opt), shape);
}

std::shared_ptr<torch::nn::Module> task_model(const config::Config& cfg, int64_t vocab_size) {
  std::shared_ptr<Task> task = make_task(cfg, vocab_size, /*mlm_predictions=*/1);
  return std::shared_ptr<torch::nn::Module>(task, &task->module());  // keeps the task alive
}

Batch to_device(device::DeviceContext& device, const Batch& b) {
  return {device.to_device(b.x), device.to_device(b.y), device.to_device(b.mask),
          device.to_device(b.pos)};
}

Batch copy_to_device(const device::DeviceContext& device, const Batch& b) {
  return {device.copy_to_device(b.x), device.copy_to_device(b.y), device.copy_to_device(b.mask),
          device.copy_to_device(b.pos)};
}

}  // namespace llmprof::train
