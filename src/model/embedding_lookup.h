// The embedding lookup of the GPT and DistilBERT tables (private to src/model).
#pragma once

#include <torch/torch.h>

#include <vector>

namespace llmprof::model {

// On the CPU an index_select of the table's rows: the same rows and, in backward, the same
// gradient (index_add_ sums each row's gradients in index order, as LibTorch's CPU embedding
// backward does), in a handful of op calls. LibTorch 1.13's CPU embedding backward dispatches a
// select, an as_strided and an add_ per token instead: at the quick-start shape about 8,000 of a
// step's 13,755 op calls, each paying RecordFunction when ops are observed. On CUDA, LibTorch's
// embedding (its backward is a sorted, deterministic reduction).
inline torch::Tensor embedding_lookup(const torch::Tensor& weight, const torch::Tensor& idx) {
  if (!weight.device().is_cpu()) return torch::embedding(weight, idx);
  std::vector<int64_t> shape = idx.sizes().vec();
  shape.push_back(weight.size(1));
  return weight.index_select(0, idx.reshape({-1})).view(shape);
}

}  // namespace llmprof::model
