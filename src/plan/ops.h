// Private to plan: a training step as a list of ops, each with the bytes autograd saves for its
// backward and the bytes live only while it runs, that memory.cpp walks forward and backward.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/plan/plan.h"

namespace llmprof::plan::detail {

// Which component an op's saved bytes belong to.
enum class Saves : int { kActivations = 0, kLoss = 1 };

struct Op {
  std::string module;  // "h0.attn.softmax", "lm_head", "loss"
  int block = -1;      // transformer block index, -1 outside the blocks
  Saves kind = Saves::kActivations;
  int64_t saved = 0;       // saved for backward (excluding autocast copies), freed at its backward
  int64_t autocast = 0;    // autocast weight/input casts it saves
  int64_t fwd_temp = 0;    // live on top while it runs forward (outputs not saved, temporaries)
  int64_t bwd_temp = 0;    // live on top while its backward runs (incoming and outgoing grads)
  int64_t param_grad = 0;  // gradient bytes its backward allocates (persist until the optimizer)
  int64_t params = 0;      // parameter count it owns (tied weights counted once)
  std::string dtype;       // dtype of what it saves, for the per-module table
};

// The shape and precision facts every model builder needs.
struct Shape {
  int64_t B = 0, T = 0, C = 0, L = 0, H = 0, V = 0, F = 0;  // F: MLP width
  int64_t kv_heads = 0, head_dim = 0;                       // llama (GQA)
  int64_t mlm_positions = 0;    // distilbert mlm: predicted positions per sequence
  bool tie_embeddings = true;   // llama: lm_head shares embed_tokens
  bool attention_bias = false;  // llama: q/k/v biases
  int64_t act = 4;              // bytes of a matmul output: 4 fp32, 2 bf16/fp16 under autocast
  bool autocast = false;
  bool cuda = false;
  bool sdpa = false;
  bool bias = true;
  bool fused_loss = false;
  double dropout = 0;
  int64_t N() const { return B * T; }
  // A tensor's bytes as the allocator is asked for them (CUDA: 512-byte blocks).
  int64_t t(int64_t bytes) const;
};

// The ops of one step's forward in order (embedding, blocks, head, loss), and the parameters and
// buffers the model holds. Each builder follows its model's forward in src/model/.
struct Graph {
  std::vector<Op> ops;
  int64_t buffer_bytes = 0;
  int64_t largest_param = 0;  // elements of the largest parameter tensor (optimizer temporaries)
  std::vector<std::string> notes;
};

Graph gpt_graph(const Shape& s, const config::Config& cfg);
Graph distilbert_graph(const Shape& s, const config::Config& cfg);
Graph llama_graph(const Shape& s, const config::Config& cfg);

// The largest single tensor of the step: the logits (or LibTorch's fp32 log-probabilities), the
// manual attention's scores, the MLP's hidden activations or the embedding's gradient.
int64_t largest_tensor(const Shape& s);

// Shared pieces: a Linear (in -> out features) whose input is already saved by its producer.
Op linear_op(const Shape& s,
             const std::string& module,
             int block,
             int64_t in,
             int64_t out,
             bool bias,
             int64_t input_elems,
             int64_t pending);

// The largest n in [0, 2^20] with fits(n), fits being monotone (true up to an edge); 0 if none.
int64_t largest_fitting(const std::function<bool(int64_t)>& fits);

}  // namespace llmprof::plan::detail
