// The technique table of llmprof plan, as the profiling lecture's "LLaMA-7B on one A100 40GB"
// case study: each row switches one more technique on, cumulatively, and is planned again.
#include <fmt/format.h>

#include <algorithm>

#include "llmprof/config/enums.h"
#include "llmprof/plan/plan.h"
#include "llmprof/rundir/plan_doc.h"

namespace llmprof::plan {

namespace {

int64_t component(const MemoryPlan& m, Component c) {
  return m.component_bytes.empty() ? 0 : m.component_bytes[static_cast<size_t>(c)];
}

int64_t model_states(const MemoryPlan& m) {
  return component(m, Component::kParameters) + component(m, Component::kGradients) +
         component(m, Component::kOptimizerState) + component(m, Component::kAutocastCopies);
}

TechniqueRow row_of(const std::string& name, const config::Config& c, const MemoryPlan& m,
                    const DeviceSpec& d) {
  TechniqueRow r;
  r.name = name;
  r.peak_bytes = m.peak_reserved_bytes;
  r.model_state_bytes = model_states(m);
  r.activation_bytes = component(m, Component::kActivations) +
                       component(m, Component::kLossBuffers);
  r.fits = r.peak_bytes <= d.usable_bytes();
  r.micro_batch = c.train.batch_size;
  r.accumulation = c.train.grad_accum_steps;
  const auto t = roofline_step_ms(m, d, c.train.precision);
  if (t) r.step_ms = *t * static_cast<double>(c.train.grad_accum_steps);
  return r;
}

// A sharded row: the per-rank peak with the model states replaced by ZeRO's closed form
// (mixed-precision Adam, 16 bytes per parameter unsharded) and no replicated bucket copy.
TechniqueRow sharded_row(const std::string& name, const TechniqueRow& base, const MemoryPlan& m,
                         Sharding sharding, int64_t world, const DeviceSpec& d) {
  TechniqueRow r = base;
  r.name = name;
  r.predicted_only = true;
  const int64_t states = model_state_bytes(m.parameters, sharding, world);
  r.peak_bytes = base.peak_bytes - base.model_state_bytes -
                 component(m, Component::kDdpBuckets) + states;
  r.model_state_bytes = states;
  r.fits = r.peak_bytes <= d.usable_bytes();
  return r;
}

}  // namespace

std::optional<double> roofline_step_ms(const MemoryPlan& m, const DeviceSpec& d,
                                       config::Precision precision) {
  const double flops = precision == config::Precision::kFp32 ? d.fp32_flops_per_s
                                                              : d.bf16_flops_per_s;
  if (flops <= 0) return std::nullopt;
  // Without a bandwidth (a CPU given only profile.peak_flops_per_s) the compute term alone: still
  // a lower bound.
  const double memory_s = d.bytes_per_s > 0 ? m.bytes_per_step / d.bytes_per_s : 0.0;
  return 1e3 * std::max(m.flops_per_step / flops, memory_s);
}

void calibrate(PlanReport& r, double ratio, const std::string& run) {
  r.calibration = ratio;
  r.time_label = fmt::format("calibrated on {} (measured / roofline = {:.2f})", run, ratio);
  if (r.step_ms) *r.step_ms *= ratio;
  for (TechniqueRow& t : r.techniques) {
    if (t.step_ms) *t.step_ms *= ratio;
  }
}

PlanReport make_report(const config::Config& cfg, const DeviceSpec& device, int64_t vocab_size,
                       int64_t world_size, CudaAllocator allocator) {
  PlanReport r;
  DeviceSpec d = device;
  if (!d.cuda && d.fp32_flops_per_s <= 0 && cfg.profile.peak_flops_per_s > 0) {
    // The CPU's peaks as the config gives them (llmprof peak measures them).
    d.fp32_flops_per_s = d.bf16_flops_per_s = cfg.profile.peak_flops_per_s;
    d.bytes_per_s = cfg.profile.peak_bytes_per_s;
    d.source = "profile.peak_flops_per_s / peak_bytes_per_s";
  }
  r.device = d;
  r.world_size = world_size;
  r.allocator = allocator;
  PlanOptions opt{vocab_size, 1, d.cuda, allocator};
  r.memory = plan_memory(cfg, opt);
  r.fits = r.memory.peak_reserved_bytes <= d.usable_bytes();
  r.largest_batch = largest_batch(cfg, opt, d.usable_bytes());
  r.step_ms = roofline_step_ms(r.memory, d, cfg.train.precision);
  r.time_label = "roofline lower bound";
  // The rows, cumulative from an fp32 eager baseline of the same shape and batch.
  config::Config c = cfg;
  c.train.precision = config::Precision::kFp32;
  c.train.activation_checkpointing = false;
  c.train.grad_accum_steps = 1;
  c.model.attention = config::Attention::kManual;
  c.model.fused_loss = false;
  const bool gpt = c.model.type == config::ModelType::kGpt;
  auto add = [&](const std::string& name, const config::Config& k, const PlanOptions& o) {
    r.techniques.push_back(row_of(name, k, plan_memory(k, o), d));
  };
  add("baseline (fp32)", c, opt);
  c.train.precision = cfg.train.precision == config::Precision::kFp16 ? config::Precision::kFp16
                                                                     : config::Precision::kBf16;
  add(std::string("+ ") + std::string(config::name(c.train.precision)) + " autocast", c, opt);
  if (gpt) {
    c.train.activation_checkpointing = true;
    add("+ activation checkpointing", c, opt);
  }
  if (c.train.batch_size >= 2) {
    const int64_t accum = std::min<int64_t>(4, c.train.batch_size);
    c.train.grad_accum_steps = accum;
    c.train.batch_size = c.train.batch_size / accum;
    add("+ accumulation (" + std::to_string(accum) + " micro-batches)", c, opt);
  }
  if (gpt) {
    c.model.attention = config::Attention::kSdpa;
    add("+ flash attention (sdpa)", c, opt);
  }
  if (d.cuda) {
    c.model.fused_loss = true;
    add("+ fused loss", c, opt);
  }
  if (d.cuda && allocator == CudaAllocator::kCaching) {  // PYTORCH_CUDA_ALLOC_CONF's option
    opt.allocator = CudaAllocator::kExpandableSegments;
    add("+ expandable segments", c, opt);
  }
  PlanOptions dp = opt;
  dp.world_size = world_size;
  const MemoryPlan m = plan_memory(c, dp);
  const std::string w = " (world " + std::to_string(world_size) + ")";
  r.techniques.push_back(row_of("+ data parallel" + w, c, m, d));
  const TechniqueRow ddp = r.techniques.back();
  r.techniques.push_back(sharded_row("+ ZeRO-1" + w, ddp, m, Sharding::kZero1, world_size, d));
  r.techniques.push_back(sharded_row("+ ZeRO-2" + w, ddp, m, Sharding::kZero2, world_size, d));
  r.techniques.push_back(
      sharded_row("+ ZeRO-3 / FSDP" + w, ddp, m, Sharding::kZero3, world_size, d));
  return r;
}

std::string reserved_note(const PlanReport& r) {
  if (!r.device.cuda) return "c10 bytes; glibc adds per-block headers";
  return cuda_reserved_model(r.allocator);
}

// The JSON through rundir's typed document (rundir::PlanDoc), its one writer.
std::string report_json(const PlanReport& r) {
  const MemoryPlan& m = r.memory;
  rundir::PlanDoc d;
  d.device = {r.device.name, r.device.product, r.device.source, r.device.capacity_bytes,
              r.device.usable_bytes()};
  d.parameters = m.parameters;
  for (int c = 0; c < kNumComponents; ++c) {
    d.components_at_peak_bytes[std::string(component_name(static_cast<Component>(c)))] =
        m.component_bytes[static_cast<size_t>(c)];
  }
  d.activations_bytes = m.activations_bytes;
  d.activations_per_block_bytes = m.activations_per_block_bytes;
  for (const ModuleBytes& b : m.block_modules)
    d.block_modules.push_back({b.module, b.dtype, b.bytes});
  d.peak_bytes = m.peak_bytes;
  d.peak_reserved_bytes = m.peak_reserved_bytes;
  d.peak_reserved_note = reserved_note(r);
  if (r.device.cuda) {
    d.allocator = std::string(allocator_name(r.allocator));
    d.workspace_bytes = kCudaWorkspaceBytes;
    d.fragmentation_bytes = m.fragmentation_bytes;
    d.largest_tensor_bytes = m.largest_tensor_bytes;
  }
  d.peak_phase = m.peak_place.phase;
  d.peak_module = m.peak_place.module;
  d.fits = r.fits;
  d.largest_batch = r.largest_batch;
  d.flops_per_step = m.flops_per_step;
  d.step_ms = r.step_ms;
  d.step_ms_label = r.time_label;
  d.calibration_ratio = r.calibration;
  for (const TechniqueRow& t : r.techniques) {
    d.techniques.push_back({t.name, t.predicted_only, t.peak_bytes, t.model_state_bytes,
                            t.activation_bytes, t.fits, t.micro_batch, t.accumulation, t.step_ms});
  }
  d.notes = m.notes;
  return rundir::plan_doc_text(d);
}

}  // namespace llmprof::plan
