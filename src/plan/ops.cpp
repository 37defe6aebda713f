// The ops of GPT-2 and DistilBERT steps, as llmprof's models compute them (src/model/gpt.cpp,
// distilbert.cpp), with what autograd saves for each. Notation (B,T,C): N = B*T tokens, H heads,
// F the MLP width, V the vocabulary; a = bytes of a matmul output (4 fp32, 2 under bf16/fp16
// autocast); the residual stream and LayerNorm outputs stay fp32 (4). What the ops save, checked
// against LibTorch's derivatives.yaml:
//   layer_norm     input (its producer's), mean and rstd (N fp32 each), weight, bias
//   linear/addmm   input and weight; under autocast the bf16 copies of both (weight cast cached)
//   matmul (4-d)   bmm saves both operands after matmul's reshape: a transposed view (q, k^T, v)
//                  is copied to contiguous memory first, so the copies are what is saved
//   softmax        its output;  gelu: its input;  dropout (CPU): input * mask, the mask in the
//                  input's dtype (CUDA: native_dropout's bool mask)
//   add, mul_(scalar), masked_fill_(mask)   nothing new
#include <algorithm>

#include "ops.h"

namespace llmprof::plan::detail {

int64_t Shape::t(int64_t bytes) const { return cuda ? cuda_block_bytes(bytes) : bytes; }

Op linear_op(const Shape& s, const std::string& module, int block, int64_t in, int64_t out,
             bool bias, int64_t input_elems, int64_t pending) {
  // input_elems > 0: the input is fp32 (autocast copies it to bf16 and saves the copy).
  Op op;
  op.module = module;
  op.block = block;
  op.params = out * in + (bias ? out : 0);
  const int64_t n = input_elems > 0 ? input_elems / in : 0;
  if (s.autocast) {
    op.autocast = s.t(out * in * 2);
    if (input_elems > 0) op.saved = s.t(input_elems * 2);
  }
  op.dtype = s.autocast ? "bf16" : "fp32";
  // Backward: dY (N,out) in, dX (N,in) out; autocast: dX cast back to fp32, dW computed in
  // bf16 then cast to the fp32 .grad.
  const int64_t rows = n > 0 ? n : s.N();
  op.bwd_temp = s.t(rows * out * s.act) + s.t(rows * in * s.act) + pending;
  if (s.autocast) op.bwd_temp += s.t(out * in * 2) + (input_elems > 0 ? s.t(rows * in * 4) : 0);
  op.param_grad = s.t(out * in * 4) + (bias ? s.t(out * 4) : 0);
  return op;
}

namespace {

Op layer_norm_op(const Shape& s, const std::string& module, int block, int64_t pending,
                 bool bias) {
  const int64_t N = s.N(), C = s.C;
  Op op;
  op.module = module;
  op.block = block;
  // mean and rstd; the output when the next linear saves it (under autocast that linear saves
  // its bf16 copy instead and the fp32 output is freed).
  op.saved = 2 * s.t(N * 4) + (s.autocast ? 0 : s.t(N * C * 4));
  op.dtype = "fp32";
  op.bwd_temp = 2 * s.t(N * C * 4) + pending;
  op.param_grad = s.t(C * 4) + (bias ? s.t(C * 4) : 0);
  op.params = C + (bias ? C : 0);
  return op;
}

// The manual attention core: scores (q, k copies saved), softmax (probabilities saved), optional
// dropout, the weighted sum (v copy saved) and the (B,T,C) contiguous output the projection saves.
void attention_core(const Shape& s, std::vector<Op>& ops, const std::string& p, int block,
                    int64_t live_qkv, int64_t pending, bool causal_sdpa) {
  const int64_t N = s.N(), C = s.C, a = s.act;
  const int64_t scores = s.t(s.B * s.H * s.T * s.T * a), nc = s.t(N * C * a);
  const std::string dt = s.autocast ? "bf16" : "fp32";
  if (causal_sdpa && s.cuda) {
    // Flash / memory-efficient attention: q, k, v (views of qkv, which they keep alive), the
    // output, laid out (B,T,H,hs) so the transpose back is a view the projection saves, and the
    // row log-sum-exp (B,H,T fp32).
    ops.push_back({p + ".core", block, Saves::kActivations, live_qkv + nc + s.t(N * s.H * 4), 0,
                   nc, 3 * nc + nc + pending, 0, 0, dt});
    return;
  }
  // sdpa on the CPU (LibTorch 1.13's math path) saves what the manual path saves (measured).
  const int64_t extra = 0;
  ops.push_back({p + ".scores", block, Saves::kActivations, 2 * nc + extra, 0,
                 live_qkv + scores, scores + 2 * nc + live_qkv + pending, 0, 0, dt});
  int64_t probs = scores;
  // Attention dropout: its mask and its output (what the weighted sum then saves), besides the
  // probabilities softmax saves.
  if (s.dropout > 0) probs += (s.cuda ? s.t(s.B * s.H * s.T * s.T) : scores) + scores;
  // CUDA autocast runs softmax in fp32: its fp32 output is saved, and the weighted sum saves its
  // bf16 cast (CPU autocast leaves softmax in the input's dtype).
  if (s.cuda && s.autocast) probs += s.t(s.B * s.H * s.T * s.T * 4);
  ops.push_back({p + ".softmax", block, Saves::kActivations, probs, 0, live_qkv + 2 * scores,
                 2 * scores + pending, 0, 0, dt});
  ops.push_back({p + ".mix", block, Saves::kActivations, 2 * nc, 0, live_qkv + nc,
                 3 * nc + scores + pending, 0, 0, dt});
}

// Dropout after a (N, width) output: its mask (CPU, LibTorch 1.13: input * noise saves the noise
// in the input's dtype; CUDA: native_dropout's bool mask). Its output takes the place of its input
// wherever that was saved, so it adds the mask only.
int64_t dropout_bytes(const Shape& s, int64_t elems, int64_t elem_bytes) {
  if (s.dropout <= 0) return 0;
  return s.cuda ? s.t(elems) : s.t(elems * elem_bytes);
}

void gpt_block(const Shape& s, std::vector<Op>& ops, int i) {
  const int64_t N = s.N(), C = s.C, F = s.F, a = s.act;
  const std::string p = "h" + std::to_string(i);
  const int64_t pend = s.t(N * C * 4);  // the residual stream's gradient waiting at the add
  const int64_t in_elems = s.autocast ? N * C : 0;
  ops.push_back(layer_norm_op(s, p + ".ln_1", i, pend, s.bias));
  const int64_t qkv = s.t(N * 3 * C * a);
  ops.push_back(linear_op(s, p + ".attn.c_attn", i, C, 3 * C, s.bias, in_elems, pend));
  ops.back().fwd_temp = qkv;
  attention_core(s, ops, p + ".attn", i, qkv, pend, s.sdpa);
  ops.push_back(linear_op(s, p + ".attn.c_proj", i, C, C, s.bias, 0, pend));
  ops.back().saved += dropout_bytes(s, N * C, a);
  ops.back().fwd_temp = qkv + s.t(N * C * a);
  // h = x + attn(ln_1(x)): fp32, saved by ln_2.
  ops.push_back({p + ".residual_1", i, Saves::kActivations, s.t(N * C * 4), 0, 0, 2 * pend, 0,
                 0, "fp32"});
  ops.push_back(layer_norm_op(s, p + ".ln_2", i, pend, s.bias));
  ops.push_back(linear_op(s, p + ".mlp.c_fc", i, C, F, s.bias, in_elems, pend));
  ops.push_back({p + ".mlp.act", i, Saves::kActivations, s.t(N * F * a), 0, s.t(N * F * a),
                 2 * s.t(N * F * a) + pend, 0, 0, s.autocast ? "bf16" : "fp32"});
  ops.push_back(linear_op(s, p + ".mlp.c_proj", i, F, C, s.bias, 0, pend));
  ops.back().saved += s.t(N * F * a) + dropout_bytes(s, N * C, a);  // the GELU output
  ops.push_back({p + ".residual_2", i, Saves::kActivations, s.t(N * C * 4), 0, 0, 2 * pend, 0,
                 0, "fp32"});
}

// Logits (N,V) and the loss. LibTorch's loss: the logits cast to fp32 (a copy under autocast),
// log_softmax saves its fp32 output; backward writes d(log-probs) and d(logits) in fp32. The
// fused loss saves the logits and two fp32 values per row, and writes d(logits) in their dtype.
void head_and_loss(const Shape& s, std::vector<Op>& ops, int64_t rows, int64_t V, bool tied,
                   bool head_bias) {
  const int64_t a = s.act, C = s.C;
  const int64_t logits = s.t(rows * V * a), logits32 = s.t(rows * V * 4);
  Op head = linear_op(s, "lm_head", -1, C, V, head_bias, s.autocast ? rows * C : 0, 0);
  if (tied) {
    head.params = head_bias ? V : 0;
    head.param_grad = head_bias ? s.t(V * 4) : 0;
    head.bwd_temp += s.t(V * C * 4);  // dW, accumulated into the embedding's .grad
  }
  head.fwd_temp = logits;
  ops.push_back(head);
  Op loss;
  loss.module = "loss";
  loss.kind = Saves::kLoss;
  loss.dtype = "fp32";
  if (s.fused_loss) {
    loss.saved = logits + 2 * s.t(rows * 4);
    loss.fwd_temp = 0;
    loss.bwd_temp = logits;
  } else {
    const int64_t cast = s.autocast ? logits32 : 0;
    loss.saved = logits32;
    loss.fwd_temp = logits + cast;
    // d(log-probs) and d(logits) in fp32; then d(log-probs) is freed before the cast back to the
    // logits' dtype (autocast), so the two moments are alternatives, not a sum.
    loss.bwd_temp = std::max(2 * logits32, logits32 + (s.autocast ? logits : 0));
  }
  ops.push_back(loss);
}

}  // namespace

Graph gpt_graph(const Shape& s, const config::Config& cfg) {
  Graph g;
  const int64_t N = s.N(), C = s.C, T = s.T, V = s.V;
  const int64_t positions = cfg.model.max_positions > 0 ? cfg.model.max_positions : T;
  // Embedding: wte(idx) + wpe(pos) -> x0 (N,C) fp32, saved by h0.ln_1 (dropout: mask and output).
  Op emb{"embedding", -1, Saves::kActivations, s.t(N * C * 4) + dropout_bytes(s, N * C, 4), 0,
         s.t(N * C * 4) + s.t(T * C * 4), s.t(N * C * 4) + s.t(V * C * 4), 0, V * C + positions * C,
         "fp32"};
  emb.param_grad = s.t(V * C * 4) + s.t(positions * C * 4);
  g.ops.push_back(emb);
  for (int i = 0; i < s.L; ++i) gpt_block(s, g.ops, i);
  g.ops.push_back(layer_norm_op(s, "ln_f", -1, 0, s.bias));
  head_and_loss(s, g.ops, N, V, /*tied=*/true, /*head_bias=*/false);
  // causal_mask (T,T) bool per block, positions (T) int64.
  g.buffer_bytes = s.L * s.t(T * T) + s.t(T * 8);
  g.largest_param = std::max(V * C, C * s.F);
  return g;
}

Graph distilbert_graph(const Shape& s, const config::Config& cfg) {
  Graph g;
  const int64_t N = s.N(), C = s.C, T = s.T, V = s.V, F = s.F, a = s.act;
  const int64_t positions = cfg.model.max_positions > 0 ? cfg.model.max_positions : T;
  const int64_t pend = s.t(N * C * 4);
  // Embedding: word + position -> LayerNorm (fp32), dropout.
  Op emb{"embedding", -1, Saves::kActivations, 0, 0, s.t(N * C * 4) + s.t(T * C * 4),
         s.t(N * C * 4) + s.t(V * C * 4), 0, V * C + positions * C, "fp32"};
  emb.param_grad = s.t(V * C * 4) + s.t(positions * C * 4);
  g.ops.push_back(emb);
  g.ops.push_back(layer_norm_op(s, "embedding.ln", -1, 0, true));
  // The sum it normalises; with dropout, its mask (the LayerNorm output is replaced as the
  // blocks' input by the dropout's output, the same bytes).
  g.ops.back().saved += s.t(N * C * 4) + dropout_bytes(s, N * C, 4);
  const int64_t in_elems = s.autocast ? N * C : 0;
  for (int i = 0; i < s.L; ++i) {
    const std::string p = "layers." + std::to_string(i);
    const int64_t qkv = s.t(N * 3 * C * a);
    g.ops.push_back(linear_op(s, p + ".attention.qkv_lin", i, C, 3 * C, true, in_elems, pend));
    g.ops.back().fwd_temp = qkv;
    // Encoder attention: no causal mask; the padding mask fills in place (no new bytes).
    attention_core(s, g.ops, p + ".attention", i, qkv, pend, false);  // attention_dropout = dropout
    g.ops.push_back(linear_op(s, p + ".attention.out_lin", i, C, C, true, 0, pend));
    // h = attn + x (fp32 under autocast: fp32 + bf16), then LayerNorm (bf16 input cast back to
    // the fp32 weight's dtype is the same tensor in fp32).
    g.ops.push_back({p + ".residual_1", i, Saves::kActivations, s.t(N * C * 4), 0, 0, 2 * pend,
                     0, 0, "fp32"});
    g.ops.push_back(layer_norm_op(s, p + ".sa_layer_norm", i, pend, true));
    g.ops.push_back(linear_op(s, p + ".ffn.lin1", i, C, F, true, in_elems, pend));
    g.ops.push_back({p + ".ffn.act", i, Saves::kActivations, s.t(N * F * a), 0, s.t(N * F * a),
                     2 * s.t(N * F * a) + pend, 0, 0, s.autocast ? "bf16" : "fp32"});
    g.ops.push_back(linear_op(s, p + ".ffn.lin2", i, F, C, true, 0, pend));
    g.ops.back().saved += s.t(N * F * a) + dropout_bytes(s, N * C, a);
    g.ops.push_back({p + ".residual_2", i, Saves::kActivations, s.t(N * C * 4), 0, 0, 2 * pend,
                     0, 0, "fp32"});
    g.ops.push_back(layer_norm_op(s, p + ".output_layer_norm", i, pend, true));
  }
  if (cfg.train.task == config::TaskKind::kClassify) {
    // [CLS] (B,C) -> pre_classifier -> relu -> classifier (B,K): small; the loss over (B,K).
    Shape cls = s;
    cls.T = 1;  // the [CLS] rows only
    g.ops.push_back(linear_op(cls, "pre_classifier", -1, C, C, true, s.autocast ? s.B * C : 0, 0));
    g.ops.back().saved += s.t(s.B * C * a);  // relu output
    head_and_loss(cls, g.ops, s.B, cfg.model.num_labels, /*tied=*/false, /*head_bias=*/true);
  } else {
    // MLM: the hidden states gathered at P positions per sequence (B*P rows), vocab_transform,
    // GELU, vocab_layer_norm (fp32), then the tied projector with its bias over (B*P, V).
    Shape mlm = s;
    mlm.T = s.mlm_positions;
    const int64_t rows = mlm.N();
    g.ops.push_back(linear_op(mlm, "vocab_transform", -1, C, C, true, rows * C, 0));
    g.ops.back().saved += mlm.t(rows * C * 4);  // the gathered rows
    g.ops.push_back({"vocab_transform.act", -1, Saves::kActivations, mlm.t(rows * C * a), 0, 0,
                     2 * mlm.t(rows * C * a), 0, 0, s.autocast ? "bf16" : "fp32"});
    Op ln = layer_norm_op(mlm, "vocab_layer_norm", -1, 0, true);
    if (s.autocast) ln.saved += mlm.t(rows * C * 4);  // the GELU output cast back to fp32
    g.ops.push_back(ln);
    head_and_loss(mlm, g.ops, rows, V, /*tied=*/true, /*head_bias=*/true);
  }
  g.buffer_bytes = s.t(positions * 8);
  g.largest_param = std::max(V * C, C * F);
  return g;
}

// Llama (model.type llama, src/model/llama.cpp): RMSNorm in fp32 (x * rsqrt(mean(x^2) + eps),
// then weight *: saves rsqrt (N), the normalised x (NC), on the CPU one more (N,C) fp32 tensor
// (measured on LibTorch 1.13's CPU: 2L+1 x N C 4 bytes over the step at every shape tried,
// whatever the heads, key/value heads, SwiGLU width or head width; absent on CUDA with LibTorch
// 2.11: configs/llama_cuda.yaml at batch 2, 4, 8, 13 and 14 on an H200 measured 2L+1 x N C 4
// less than planned with it, within 1% of the plan without it), and its output when the next
// linear saves it), separate q/k/v projections (GQA: k, v of width Ckv = n_kv_head * head_dim),
// RoPE in fp32 (saves only the cos/sin tables, buffers; under autocast its fp32 result is cast
// back), the manual core as GPT's with k and v copies of width Ckv, SwiGLU (silu saves gate; the
// product saves silu(gate) and up; down saves the product: 4 N F).
Graph llama_graph(const Shape& s, const config::Config& cfg) {
  (void)cfg;
  Graph g;
  const int64_t N = s.N(), C = s.C, V = s.V, F = s.F, a = s.act, T = s.T;
  const int64_t hd = s.head_dim > 0 ? s.head_dim : C / s.H;
  const int64_t kv = (s.kv_heads > 0 ? s.kv_heads : s.H) * hd, qw = s.H * hd;
  const int64_t pend = s.t(N * C * 4), in_elems = s.autocast ? N * C : 0;
  const std::string dt = s.autocast ? "bf16" : "fp32";
  auto rms = [&](const std::string& m, int b) {
    Op op{m,
          b,
          Saves::kActivations,
          s.t(N * 4) + (s.cuda ? 1 : 2) * s.t(N * C * 4) + (s.autocast ? 0 : s.t(N * C * 4)),
          0,
          s.t(N * C * 4),
          3 * s.t(N * C * 4) + pend,
          s.t(C * 4),
          C,
          "fp32"};
    return op;
  };
  Op emb{"embed_tokens", -1, Saves::kActivations, s.t(N * C * 4), 0, 0,
         s.t(N * C * 4) + s.t(V * C * 4), s.t(V * C * 4), V * C, "fp32"};
  g.ops.push_back(emb);
  for (int i = 0; i < s.L; ++i) {
    const std::string p = "layers." + std::to_string(i);
    g.ops.push_back(rms(p + ".input_layernorm", i));
    g.ops.push_back(linear_op(s, p + ".self_attn.q_proj", i, C, qw, s.attention_bias, in_elems, pend));
    g.ops.push_back(linear_op(s, p + ".self_attn.k_proj", i, C, kv, s.attention_bias, in_elems, pend));
    g.ops.push_back(linear_op(s, p + ".self_attn.v_proj", i, C, kv, s.attention_bias, in_elems, pend));
    const int64_t scores = s.t(s.B * s.H * T * T * a);
    const int64_t kvc = (s.sdpa && !s.cuda) ? s.t(N * qw * a) : s.t(N * kv * a);
    if (s.sdpa && s.cuda) {
      g.ops.push_back({p + ".self_attn.core", i, Saves::kActivations,
                       s.t(N * qw * a) + 2 * s.t(N * kv * a) + s.t(N * qw * a) + s.t(N * s.H * 4),
                       0, s.t(N * qw * 4), 4 * s.t(N * qw * a) + pend, 0, 0, dt});
    } else {
      int64_t probs = scores;
      if (s.cuda && s.autocast) probs = s.t(s.B * s.H * T * T * 4) + scores;
      g.ops.push_back({p + ".self_attn.scores", i, Saves::kActivations, s.t(N * qw * a) + kvc, 0,
                       s.t(N * qw * 4) + scores, scores + 2 * s.t(N * qw * a) + pend, 0, 0, dt});
      g.ops.push_back({p + ".self_attn.softmax", i, Saves::kActivations, probs, 0, 2 * scores,
                       2 * scores + pend, 0, 0, dt});
      g.ops.push_back({p + ".self_attn.mix", i, Saves::kActivations, kvc + s.t(N * qw * a), 0,
                       s.t(N * qw * a), 3 * s.t(N * qw * a) + scores + pend, 0, 0, dt});
    }
    g.ops.push_back(linear_op(s, p + ".self_attn.o_proj", i, qw, C, false, 0, pend));
    g.ops.push_back({p + ".residual_1", i, Saves::kActivations, s.t(N * C * 4), 0, 0, 2 * pend, 0,
                     0, "fp32"});
    g.ops.push_back(rms(p + ".post_attention_layernorm", i));
    g.ops.push_back(linear_op(s, p + ".mlp.gate_proj", i, C, F, false, in_elems, pend));
    g.ops.push_back(linear_op(s, p + ".mlp.up_proj", i, C, F, false, in_elems, pend));
    g.ops.push_back({p + ".mlp.act", i, Saves::kActivations, 4 * s.t(N * F * a), 0,
                     s.t(N * F * a), 4 * s.t(N * F * a) + pend, 0, 0, dt});
    g.ops.push_back(linear_op(s, p + ".mlp.down_proj", i, F, C, false, 0, pend));
    g.ops.push_back({p + ".residual_2", i, Saves::kActivations, s.t(N * C * 4), 0, 0, 2 * pend, 0,
                     0, "fp32"});
  }
  g.ops.push_back(rms("norm", -1));
  head_and_loss(s, g.ops, N, V, s.tie_embeddings, /*head_bias=*/false);
  // rope cos, sin (T, hd) fp32; each attention's causal_mask (T, T) bool.
  g.buffer_bytes = 2 * s.t(T * hd * 4) + s.L * s.t(T * T);
  g.largest_param = std::max(V * C, C * F);
  return g;
}

int64_t largest_tensor(const Shape& s) {
  const int64_t rows = s.mlm_positions > 0 ? s.B * s.mlm_positions : s.N();
  const int64_t logits = rows * s.V * (s.fused_loss ? s.act : 4);  // LibTorch's loss: fp32
  const int64_t score_bytes = s.cuda && s.autocast ? 4 : s.act;    // softmax in fp32 on CUDA
  const int64_t scores = s.sdpa ? 0 : s.B * s.H * s.T * s.T * score_bytes;
  const int64_t mlp = s.N() * s.F * s.act;
  const int64_t embedding_grad = s.V * s.C * 4;
  return s.t(std::max({logits, scores, mlp, embedding_grad}));
}

}  // namespace llmprof::plan::detail
