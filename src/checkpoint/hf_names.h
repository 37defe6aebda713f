// The name table between llmprof's tensors and Hugging Face's, for loading a folder
// (hf_load.cpp) and exporting one (hf_export.cpp). Private to the checkpoint concern.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmprof::config {
struct Config;
}

namespace llmprof::checkpoint::detail {

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
  std::string tied_head;  // lm_head.weight / vocab_projector.weight
  std::string tied_to;    // its llmprof twin: wte.weight / word_embeddings.weight
  std::vector<std::string> buffer_suffixes;  // ".attn.bias", ".attn.masked_bias"
};

// The table for cfg's model (type, n_layer, an MLM head or a classifier).
HfModelNames names_for(const config::Config& cfg);

}  // namespace llmprof::checkpoint::detail
