// What KV-cache generation needs of a decoder, whatever its family (GPT, Llama): llmprof bench
// decodes through this interface. Torch TUs only.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "llmprof/model/gpt.h"  // KvCache

namespace llmprof::model {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual torch::nn::Module& module() = 0;
  // An empty cache for batch rows of up to max_len tokens (see GptImpl::make_cache).
  virtual KvCache make_cache(int64_t batch, int64_t max_len) const = 0;
  // idx (B, t) at positions [cache.length, cache.length + t) -> logits (B, t, V); appends to cache.
  virtual torch::Tensor forward_cached(const torch::Tensor& idx, KvCache& cache) = 0;
  // Bytes of keys and values one token adds to the cache at elem_bytes per element, and what a
  // multi-head model of the same width (one kv head per query head) would add.
  virtual int64_t kv_bytes_per_token(int64_t elem_bytes) const = 0;
  virtual int64_t mha_kv_bytes_per_token(int64_t elem_bytes) const = 0;
};

// The Decoder of a model holder M (Gpt or Llama), by reference; kv_elems / mha_kv_elems: the
// elements one token adds to its cache (layers * 2 * kv heads * head width) and to an MHA one's.
template <typename M>
class DecoderOf : public Decoder {
 public:
  DecoderOf(M& m, int64_t kv_elems, int64_t mha_kv_elems)
      : m_(m), kv_elems_(kv_elems), mha_kv_elems_(mha_kv_elems) {}
  torch::nn::Module& module() override { return *m_; }
  KvCache make_cache(int64_t batch, int64_t max_len) const override {
    return m_->make_cache(batch, max_len);
  }
  torch::Tensor forward_cached(const torch::Tensor& idx, KvCache& cache) override {
    return m_->forward_cached(idx, cache);
  }
  int64_t kv_bytes_per_token(int64_t elem_bytes) const override { return kv_elems_ * elem_bytes; }
  int64_t mha_kv_bytes_per_token(int64_t elem_bytes) const override {
    return mha_kv_elems_ * elem_bytes;
  }

 private:
  M& m_;
  int64_t kv_elems_, mha_kv_elems_;
};

}  // namespace llmprof::model
