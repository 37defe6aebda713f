// The step simulation (plan.h): live bytes by component through forward, loss, backward and the
// optimizer of a steady-state step (step 2 on: optimizer state exists, gradients were set to
// None by the previous step), with the peak and where it happens.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "llmprof/data/encoder_data.h"
#include "llmprof/error.h"
#include "llmprof/plan/plan.h"
#include "ops.h"

namespace llmprof::plan {

namespace {

using detail::Graph;
using detail::Op;
using detail::Saves;
using detail::Shape;

constexpr int64_t kMiB = 1 << 20;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Live bytes by component, and the peak seen so far with its place and breakdown.
struct Sim {
  std::array<int64_t, kNumComponents> live{};
  std::array<int64_t, kNumComponents> at_peak{};
  int64_t peak = -1;
  int64_t activation_peak = 0;            // the most activations + loss buffers live at once
  int64_t beyond_states_peak = 0;         // the most bytes beside the model states live at once
  int64_t beyond_states_activations = 0;  // activations + loss buffers at that moment
  Place place;

  int64_t total() const {
    int64_t s = 0;
    for (int64_t b : live) s += b;
    return s;
  }
  void add(Component c, int64_t bytes) {
    live[static_cast<int>(c)] += bytes;
    activation_peak =
        std::max(activation_peak, live[static_cast<int>(Component::kActivations)] +
                                      live[static_cast<int>(Component::kLossBuffers)]);
  }
  // A moment where `transient` bytes are live on top of the components.
  void check(int64_t transient, const char* phase, const std::string& module) {
    const int64_t now = total() + transient;
    int64_t states = 0;
    for (Component c : {Component::kParameters, Component::kGradients, Component::kOptimizerState,
                        Component::kAutocastCopies, Component::kDdpBuckets}) {
      states += live[static_cast<int>(c)];
    }
    if (now - states > beyond_states_peak) {
      beyond_states_peak = now - states;
      beyond_states_activations = live[static_cast<int>(Component::kActivations)] +
                                  live[static_cast<int>(Component::kLossBuffers)];
    }
    if (now <= peak) return;
    peak = now;
    at_peak = live;
    at_peak[static_cast<int>(Component::kTransient)] += transient;
    place = {phase, module};
  }
};

Component saved_component(const Op& op) {
  return op.kind == Saves::kLoss ? Component::kLossBuffers : Component::kActivations;
}

void forward_op(Sim& sim, const Op& op, bool keep) {
  sim.check(op.fwd_temp, op.kind == Saves::kLoss ? "loss" : "forward", op.module);
  if (!keep) return;
  sim.add(saved_component(op), op.saved);
  sim.add(Component::kAutocastCopies, op.autocast);
}

// accumulating: the gradients already exist (a later micro-batch of train.grad_accum_steps), so
// a parameter's new gradient is a temporary added into them in place.
void backward_op(Sim& sim, const Op& op, bool accumulating) {
  if (!accumulating) sim.add(Component::kGradients, op.param_grad);
  sim.check(op.bwd_temp + (accumulating ? op.param_grad : 0), "backward", op.module);
  sim.add(saved_component(op), -op.saved);
  sim.add(Component::kAutocastCopies, -op.autocast);
}

// Ops of block b (a contiguous range of the graph).
std::pair<size_t, size_t> block_range(const Graph& g, int b) {
  size_t first = g.ops.size(), last = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].block == b) {
      first = std::min(first, i);
      last = i + 1;
    }
  }
  return {first, last};
}

// Forward then backward. With activation checkpointing a block keeps only its input (the
// previous op's output, already saved) during the forward, and recomputes its ops in backward.
void walk(Sim& sim, const Graph& g, const Shape& s, bool checkpointing, bool accumulating) {
  for (const Op& op : g.ops) forward_op(sim, op, !checkpointing || op.block < 0);
  if (checkpointing) {  // each block's output is kept as the next block's input
    sim.add(Component::kActivations, s.L * s.t(s.N() * s.C * 4));
  }
  for (size_t k = g.ops.size(); k-- > 0;) {
    const Op& op = g.ops[k];
    if (checkpointing && op.block >= 0) {
      const auto [first, last] = block_range(g, op.block);
      sim.add(Component::kActivations, -s.t(s.N() * s.C * 4));
      for (size_t j = first; j < last; ++j) forward_op(sim, g.ops[j], true);
      for (size_t j = last; j-- > first;) backward_op(sim, g.ops[j], accumulating);
      k = first;
      continue;
    }
    backward_op(sim, op, accumulating);
  }
}

// Adam/AdamW (LibTorch's for-each-parameter loop): exp_avg_sq.sqrt() and its division are two
// temporaries of the parameter's size; adam's L2 decay adds grad + wd * p. Foreach variants make
// them for all parameters at once; fused kernels make none.
int64_t optimizer_temp(const config::Config& cfg, const Graph& g, OptimizerStates states) {
  const auto& o = cfg.optim;
  if (states == OptimizerStates::kNone) return 0;
  if (o.name == config::Optimizer::kSgd) {
    return o.weight_decay > 0 ? g.largest_param * 4 : 0;
  }
  if (o.fused) return 0;
  const int64_t per = 2 + (o.name == config::Optimizer::kAdam && o.weight_decay > 0 ? 1 : 0);
  return per * g.largest_param * 4;
}

int64_t optimizer_state(const config::Config& cfg, int64_t param_bytes, OptimizerStates states) {
  if (states == OptimizerStates::kNone) return 0;
  if (cfg.optim.name == config::Optimizer::kSgd) return cfg.optim.momentum > 0 ? param_bytes : 0;
  return 2 * param_bytes;  // exp_avg, exp_avg_sq
}

Shape shape_of(const config::Config& cfg, const PlanOptions& opt) {
  const auto& m = cfg.model;
  Shape s;
  s.B = cfg.train.batch_size;
  s.T = m.block_size;
  s.C = m.n_embd;
  s.L = m.n_layer;
  s.H = m.n_head;
  s.V = opt.vocab_size > 0 ? opt.vocab_size : m.vocab_size;
  s.F = m.ffn_dim > 0 ? m.ffn_dim : 4 * m.n_embd;
  if (m.type == config::ModelType::kLlama) {  // 0 = 4 * n_embd, as LlamaOptions::ffn_width()
    s.F = m.intermediate_size > 0 ? m.intermediate_size : 4 * m.n_embd;
    s.kv_heads = m.n_kv_head > 0 ? m.n_kv_head : m.n_head;
    s.head_dim = m.head_dim > 0 ? m.head_dim : (m.n_head > 0 ? m.n_embd / m.n_head : 0);
    s.tie_embeddings = m.tie_embeddings;
    s.attention_bias = m.attention_bias;
  }
  s.autocast = cfg.train.precision != config::Precision::kFp32;
  s.act = s.autocast ? 2 : 4;
  s.cuda = opt.cuda;
  s.sdpa = m.attention == config::Attention::kSdpa;
  s.bias = m.bias;
  s.fused_loss = m.fused_loss;
  s.dropout = m.dropout;
  if (m.type == config::ModelType::kDistilbert && cfg.train.task == config::TaskKind::kMlm) {
    s.mlm_positions = data::mlm_predictions_per_sequence(s.T, cfg.data.mlm_probability);
  }
  return s;
}

Graph graph_of(const config::Config& cfg, const Shape& s) {
  switch (cfg.model.type) {
    case config::ModelType::kDistilbert:
      return detail::distilbert_graph(s, cfg);
    case config::ModelType::kLlama:
      return detail::llama_graph(s, cfg);
    case config::ModelType::kGpt:
      break;
  }
  return detail::gpt_graph(s, cfg);
}

}  // namespace

std::string_view allocator_name(CudaAllocator a) {
  return a == CudaAllocator::kExpandableSegments ? "expandable_segments" : "caching";
}

CudaAllocator cuda_allocator_of(std::string_view alloc_conf) {
  // Options are comma-separated key:value pairs; the allocator reads the value case-sensitively.
  size_t start = 0;
  while (start <= alloc_conf.size()) {
    const size_t end = std::min(alloc_conf.find(',', start), alloc_conf.size());
    std::string_view opt = alloc_conf.substr(start, end - start);
    while (!opt.empty() && opt.front() == ' ') opt.remove_prefix(1);
    while (!opt.empty() && opt.back() == ' ') opt.remove_suffix(1);
    if (opt == "expandable_segments:True") return CudaAllocator::kExpandableSegments;
    start = end + 1;
  }
  return CudaAllocator::kCaching;
}

std::string cuda_reserved_model(CudaAllocator a) {
  const std::string base =
      fmt::format("the peak + {} MiB of workspaces and pools (measured), 2 MiB-rounded",
                  kCudaWorkspaceBytes >> 20);
  if (a == CudaAllocator::kExpandableSegments) return "an estimate: " + base;
  return "an upper bound: " + base +
         ", + the step's largest tensor, which the default caching allocator's fragmentation may "
         "leave unusable (expandable segments avoid it)";
}

CudaAllocator cuda_allocator_from_env() {
  for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
    const char* conf = std::getenv(name);
    if (conf != nullptr && cuda_allocator_of(conf) == CudaAllocator::kExpandableSegments) {
      return CudaAllocator::kExpandableSegments;
    }
  }
  return CudaAllocator::kCaching;
}

CudaAllocator cuda_allocator_for(const config::Config& cfg, CudaAllocator otherwise) {
  return cfg.train.cuda_expandable_segments ? CudaAllocator::kExpandableSegments : otherwise;
}

std::string_view component_name(Component c) {
  static constexpr std::array<std::string_view, kNumComponents> names = {
      "parameters",  "gradients",       "optimizer_state", "buffers",   "batch",
      "activations", "autocast_copies", "loss_buffers",    "transient", "ddp_buckets"};
  return names[static_cast<size_t>(c)];
}

int64_t cuda_block_bytes(int64_t request_bytes) {
  return request_bytes <= 0 ? 512 : round_up(request_bytes, 512);
}

int64_t cuda_segment_bytes(int64_t block_bytes) {
  if (block_bytes <= kMiB) return 2 * kMiB;       // kSmallBuffer
  if (block_bytes < 10 * kMiB) return 20 * kMiB;  // kLargeBuffer
  return round_up(block_bytes, 2 * kMiB);         // kRoundLarge
}

std::vector<std::string> unmodelled_keys(const config::Config& cfg) {
  std::vector<std::string> out;
  if (cfg.train.cuda_graphs) {
    out.push_back("train.cuda_graphs: the graph's private memory pool is not modelled");
  }
  return out;
}

namespace {

void check_plannable(const config::Config& cfg, const Shape& s) {
  for (const std::string& why : unmodelled_keys(cfg)) {
    throw ConfigError("llmprof plan: cannot plan " + why, cfg.source_file,
                      why.substr(0, why.find(':')));
  }
  if (s.V <= 0) {
    throw ConfigError(
        "llmprof plan: model.vocab_size is 0 and the tokenizer that sets it is named only by "
        "model.init_from's folder at run time; give it, e.g. --set model.vocab_size=30522 for "
        "BERT's vocab.txt",
        cfg.source_file, "model.vocab_size");
  }
}

// The steady step's walk: the peak, its place and the components live there.
void simulate_step(MemoryPlan& plan,
                   const config::Config& cfg,
                   const PlanOptions& opt,
                   const Graph& g,
                   const Shape& s,
                   bool ckpt) {
  Sim sim;
  sim.add(Component::kParameters, plan.parameter_bytes);
  sim.add(Component::kOptimizerState, plan.optimizer_state_bytes);
  sim.add(Component::kBuffers, g.buffer_bytes);
  if (opt.cuda) sim.add(Component::kBatch, 2 * s.t(s.N() * 8));  // x, y copied to the device
  if (opt.world_size > 1) sim.add(Component::kDdpBuckets, plan.parameter_bytes);
  // With gradient accumulation the last micro-batch is the high one: all gradients are live from
  // its start.
  const bool accumulating = cfg.train.grad_accum_steps > 1;
  if (accumulating) sim.add(Component::kGradients, plan.gradient_bytes);
  walk(sim, g, s, ckpt, accumulating);
  // Optimizer: all gradients, the state, the temporaries of the largest parameter.
  const bool none = opt.optimizer_states == OptimizerStates::kNone;
  sim.check(optimizer_temp(cfg, g, opt.optimizer_states), "optimizer",
            none ? std::string("none (weights and gradients only)")
                 : std::string(config::name(cfg.optim.name)) + (cfg.optim.fused ? " (fused)" : ""));
  plan.component_bytes.assign(sim.at_peak.begin(), sim.at_peak.end());
  plan.peak_bytes = sim.peak;
  plan.activation_peak_bytes = sim.activation_peak;
  plan.beyond_states_peak_bytes = sim.beyond_states_peak;
  plan.beyond_states_activation_bytes = sim.beyond_states_activations;
  plan.peak_place = sim.place;
  plan.peak_reserved_bytes = plan.peak_bytes;
  if (!opt.cuda) return;
  plan.largest_tensor_bytes = detail::largest_tensor(s);
  if (cuda_allocator_for(cfg, opt.allocator) == CudaAllocator::kCaching)
    plan.fragmentation_bytes = plan.largest_tensor_bytes;
  plan.peak_reserved_bytes =
      round_up(plan.peak_bytes + kCudaWorkspaceBytes, 2 * kMiB) + plan.fragmentation_bytes;
}

// What the forward leaves saved (all of it, and one block's by module).
void saved_totals(MemoryPlan& plan, const Graph& g, const Shape& s, bool ckpt) {
  Sim fwd;
  for (const Op& op : g.ops) forward_op(fwd, op, !ckpt || op.block < 0);
  if (ckpt) fwd.add(Component::kActivations, s.L * s.t(s.N() * s.C * 4));
  plan.forward_end_bytes = fwd.total();
  plan.activations_bytes = fwd.live[static_cast<int>(Component::kActivations)];
  for (const Op& op : g.ops) {
    if (op.block != 0) continue;
    const std::string name = op.module.substr(op.module.find('.') + 1);
    plan.block_modules.push_back({name, op.dtype, op.saved + op.autocast});
    plan.activations_per_block_bytes += op.saved + op.autocast;
  }
}

// FLOPs: 6 per parameter of each matmul per token, plus attention's 12*L*T*C per token (scores
// and mix, forward 4, backward 8); checkpointing re-runs the blocks' forward. Bytes: the
// parameters' traffic (read forward and backward, gradient written, AdamW's read-modify-write:
// ~10 x their fp32 bytes) and the activations' (written, read, their gradients: 4 x).
void step_cost(
    MemoryPlan& plan, const config::Config& cfg, const Graph& g, const Shape& s, bool ckpt) {
  const double N = static_cast<double>(s.N());
  double matmul_params = 0;
  for (const Op& op : g.ops) {
    const bool norm =
        op.module.find("ln") != std::string::npos || op.module.find("norm") != std::string::npos;
    if (!norm && op.module != "embedding" && op.module != "embed_tokens") {
      matmul_params += static_cast<double>(op.params);
    }
  }
  const double head = double(s.V) * double(s.C);
  const bool tied = cfg.model.type == config::ModelType::kGpt ||
                    (cfg.model.type == config::ModelType::kLlama && cfg.model.tie_embeddings);
  if (tied) matmul_params += head;  // the tied lm_head
  const double attn = 12.0 * double(s.L) * double(s.T) * double(s.C) * N;
  plan.flops_per_step = 6.0 * N * matmul_params + attn;
  if (ckpt) plan.flops_per_step += 2.0 * N * (matmul_params - head) + attn / 3;
  plan.bytes_per_step = double(plan.parameter_bytes) * 10.0 + 4.0 * double(plan.activations_bytes);
}

}  // namespace

MemoryPlan plan_memory(const config::Config& cfg, const PlanOptions& opt) {
  const Shape s = shape_of(cfg, opt);
  check_plannable(cfg, s);
  const Graph g = graph_of(cfg, s);
  MemoryPlan plan;
  for (const Op& op : g.ops) {
    plan.parameters += op.params;
    plan.gradient_bytes += op.param_grad;
  }
  plan.parameter_bytes = plan.parameters * 4;
  plan.buffer_bytes = g.buffer_bytes;
  plan.largest_parameter = g.largest_param;
  plan.optimizer_state_bytes = optimizer_state(cfg, plan.parameter_bytes, opt.optimizer_states);
  // GPT and Llama checkpoint their blocks; DistilBERT has no checkpointing.
  const bool ckpt =
      cfg.train.activation_checkpointing &&
      (cfg.model.type == config::ModelType::kGpt || cfg.model.type == config::ModelType::kLlama);
  simulate_step(plan, cfg, opt, g, s, ckpt);
  saved_totals(plan, g, s, ckpt);
  step_cost(plan, cfg, g, s, ckpt);
  plan.notes = g.notes;
  return plan;
}

int64_t detail::largest_fitting(const std::function<bool(int64_t)>& fits) {
  int64_t lo = 0, hi = 1;
  while (hi <= (int64_t{1} << 20) && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > (int64_t{1} << 20)) return lo;
  while (hi - lo > 1) {  // fits(lo), !fits(hi)
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

int64_t largest_batch(const config::Config& cfg, const PlanOptions& opt, int64_t usable_bytes) {
  config::Config c = cfg;
  return detail::largest_fitting([&](int64_t b) {
    c.train.batch_size = b;
    return plan_memory(c, opt).peak_reserved_bytes <= usable_bytes;
  });
}

int64_t model_state_bytes(int64_t parameters, Sharding sharding, int64_t world_size) {
  const int64_t P = parameters, n = std::max<int64_t>(1, world_size);
  switch (sharding) {
    case Sharding::kNone:
      return 16 * P;
    case Sharding::kZero1:
      return 4 * P + 12 * P / n;
    case Sharding::kZero2:
      return 2 * P + 14 * P / n;
    case Sharding::kZero3:
      return 16 * P / n;
  }
  return 16 * P;
}

int64_t deepspeed_model_state_bytes(int64_t parameters,
                                    int64_t largest_layer,
                                    Sharding sharding,
                                    int64_t world_size) {
  const int64_t P = parameters, n = std::max<int64_t>(1, world_size);
  switch (sharding) {
    case Sharding::kZero2:
      return 4 * P + 16 * P / n;
    case Sharding::kZero3:
      return 4 * largest_layer + 18 * P / n;
    case Sharding::kNone:
    case Sharding::kZero1:
      break;
  }
  return model_state_bytes(parameters, sharding, world_size);
}

}  // namespace llmprof::plan
