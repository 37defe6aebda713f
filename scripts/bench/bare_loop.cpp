// The floor llmprof's instrumented loop is compared with (scripts/bench/step.sh): the same GPT,
// optimizer, clipping and data sampling as `llmprof train`, in a plain loop with no phase timers,
// no CSV, no rusage reads. Prints the median ms/step over the steps after warm-up.
//
//   llmprof_bare_loop n_layer=4 n_head=4 n_embd=128 block_size=64 batch_size=12 steps=60 threads=2
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "llmprof/base/clock.h"
#include "llmprof/config/config.h"
#include "llmprof/data/dataset.h"
#include "llmprof/model/gpt.h"
#include "llmprof/profile/stats.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/setup.h"

int main(int argc, char** argv) {
  std::map<std::string, double> a = {{"n_layer", 4},     {"n_head", 4},     {"n_embd", 128},
                                     {"block_size", 64}, {"batch_size", 12}, {"steps", 60},
                                     {"warmup", 10},     {"threads", 0},    {"vocab", 65},
                                     {"malloc_tuning", 1}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    if (eq == std::string::npos || a.count(arg.substr(0, eq)) == 0) {
      std::fprintf(stderr, "bare_loop: bad argument '%s' (expected key=value with a known key)\n",
                   argv[i]);
      return 2;
    }
    a[arg.substr(0, eq)] = std::atof(arg.c_str() + eq + 1);
  }
  llmprof::config::Config cfg;
  cfg.model.n_layer = static_cast<int64_t>(a["n_layer"]);
  cfg.model.n_head = static_cast<int64_t>(a["n_head"]);
  cfg.model.n_embd = static_cast<int64_t>(a["n_embd"]);
  cfg.model.block_size = static_cast<int64_t>(a["block_size"]);
  cfg.threads = static_cast<int64_t>(a["threads"]);
  cfg.runtime.malloc_tuning = a["malloc_tuning"] != 0;
  llmprof::train::RuntimeInfo rt = llmprof::train::apply_runtime(cfg);
  const int64_t B = static_cast<int64_t>(a["batch_size"]), T = cfg.model.block_size;
  const int64_t V = static_cast<int64_t>(a["vocab"]), steps = static_cast<int64_t>(a["steps"]);

  // A random token stream stands in for the corpus: sampling cost is the same.
  std::mt19937_64 rng(1337);
  std::vector<int32_t> tokens(1 << 20);
  for (auto& t : tokens) t = static_cast<int32_t>(rng() % static_cast<uint64_t>(V));

  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  llmprof::model::GptOptions mo;
  mo.n_layer = cfg.model.n_layer;
  mo.n_head = cfg.model.n_head;
  mo.n_embd = cfg.model.n_embd;
  mo.block_size = cfg.model.block_size;
  mo.vocab_size = V;
  llmprof::model::Gpt model(mo);
  auto opt = llmprof::train::build_optimizer(cfg, *model);
  const std::vector<torch::Tensor> params = model->parameters();
  torch::Tensor x = torch::empty({B, T}, torch::kLong), y = torch::empty({B, T}, torch::kLong);
  std::vector<double> ms;
  double loss_sum = 0;
  for (int64_t step = 0; step < steps; ++step) {
    int64_t t0 = llmprof::now_ns();
    llmprof::data::sample_batch(tokens, B, T, rng, x.data_ptr<int64_t>(), y.data_ptr<int64_t>());
    torch::Tensor loss = model->loss(model->forward(x), y);
    loss.backward();
    llmprof::train::clip_grad_norm(params, 1.0);
    opt->step();
    llmprof::train::zero_grad_to_none(params);
    int64_t t1 = llmprof::now_ns();
    loss_sum += loss.item<double>();
    if (step >= static_cast<int64_t>(a["warmup"])) ms.push_back(static_cast<double>(t1 - t0) * 1e-6);
  }
  llmprof::profile::Summary s = llmprof::profile::summarize(ms);
  std::printf("bare_loop threads=%lld blas=%s median_ms=%.3f p10_ms=%.3f p90_ms=%.3f n=%lld "
              "tokens_per_s=%.0f mean_loss=%.4f\n",
              static_cast<long long>(rt.threads), rt.blas_parallel.c_str(), s.median, s.p10, s.p90,
              static_cast<long long>(s.n), static_cast<double>(B * T) / (s.median * 1e-3),
              loss_sum / static_cast<double>(steps));
  return 0;
}
