// The technique table of llmprof plan, as the profiling lecture's "LLaMA-7B on one A100 40GB"
// case study: each row switches one more technique on, cumulatively, and is planned again, with
// the largest micro-batch that fits under it. Sharded rows give each closed form by its source.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "llmprof/config/enums.h"
#include "llmprof/plan/plan.h"
#include "llmprof/rundir/plan_doc.h"
#include "ops.h"

namespace llmprof::plan {

namespace {

int64_t component(const MemoryPlan& m, Component c) {
  return m.component_bytes.empty() ? 0 : m.component_bytes[static_cast<size_t>(c)];
}

int64_t model_states(const MemoryPlan& m) {
  return component(m, Component::kParameters) + component(m, Component::kGradients) +
         component(m, Component::kOptimizerState) + component(m, Component::kAutocastCopies);
}

// A row of the table: a config, how it is planned, and for a sharded row whose closed form
// replaces its model states.
struct RowSpec {
  std::string name;
  config::Config cfg;
  PlanOptions opt;
  Sharding sharding = Sharding::kNone;  // kNone: planned as it is
  StateFormula formula = StateFormula::kPlanned;
};

std::string formula_text(Sharding s, StateFormula f) {
  if (f == StateFormula::kDeepSpeedEstimator) {
    return s == Sharding::kZero2 ? "4P + 16P/N" : "4 x largest layer + 18P/N";
  }
  return s == Sharding::kZero1 ? "4P + 12P/N" : s == Sharding::kZero2 ? "2P + 14P/N" : "16P/N";
}

// The row at the spec's batch. A sharded row is the closed form's model states (mixed-precision
// Adam, no replicated bucket copy) plus the most the step holds beside them at any moment: with
// the states sharded the peak can move from the optimizer into the backward.
TechniqueRow plan_row(const RowSpec& s, const DeviceSpec& d) {
  const MemoryPlan m = plan_memory(s.cfg, s.opt);
  TechniqueRow r;
  r.name = s.name;
  r.peak_bytes = m.peak_reserved_bytes;
  r.model_state_bytes = model_states(m);
  r.activation_bytes =
      component(m, Component::kActivations) + component(m, Component::kLossBuffers);
  r.activation_peak_bytes = m.activation_peak_bytes;
  r.micro_batch = s.cfg.train.batch_size;
  r.accumulation = s.cfg.train.grad_accum_steps;
  const auto t = roofline_step_ms(m, d, s.cfg.train.precision);
  if (t) r.step_ms = *t * static_cast<double>(s.cfg.train.grad_accum_steps);
  if (s.sharding != Sharding::kNone) {
    const int64_t w = s.opt.world_size;
    const int64_t states =
        s.formula == StateFormula::kDeepSpeedEstimator
            ? deepspeed_model_state_bytes(m.parameters, m.largest_parameter, s.sharding, w)
            : model_state_bytes(m.parameters, s.sharding, w);
    r.peak_bytes = states + m.beyond_states_peak_bytes + (m.peak_reserved_bytes - m.peak_bytes);
    r.model_state_bytes = states;
    r.activation_bytes = m.beyond_states_activation_bytes;
    r.predicted_only = true;
    r.source = s.formula;
    r.formula = formula_text(s.sharding, s.formula);
  }
  r.fits = r.peak_bytes <= d.usable_bytes();
  return r;
}

TechniqueRow planned_row(const RowSpec& s, const DeviceSpec& d) {
  TechniqueRow r = plan_row(s, d);
  RowSpec at = s;
  r.largest_batch = detail::largest_fitting([&](int64_t b) {
    at.cfg.train.batch_size = b;
    return plan_row(at, d).fits;
  });
  return r;
}

// The rows, cumulative from an fp32 eager baseline of the same shape and batch.
// Without optimizer state (the lecture's assumption) the table stops before data parallelism:
// ZeRO's closed forms count Adam's states.
std::vector<RowSpec> row_specs(const config::Config& cfg,
                               PlanOptions opt,
                               const DeviceSpec& d,
                               int64_t world_size,
                               bool parallel,
                               std::vector<std::string>& notes) {
  std::vector<RowSpec> rows;
  config::Config c = cfg;
  c.train.precision = config::Precision::kFp32;
  c.train.activation_checkpointing = false;
  c.train.grad_accum_steps = 1;
  c.model.attention = config::Attention::kManual;
  c.model.fused_loss = false;
  auto add = [&](const std::string& name) { rows.push_back({name, c, opt}); };
  add("baseline (fp32)");
  c.train.precision = cfg.train.precision == config::Precision::kFp16 ? config::Precision::kFp16
                                                                      : config::Precision::kBf16;
  add(std::string("+ ") + std::string(config::name(c.train.precision)) + " autocast");
  // Decoders checkpoint their blocks and run sdpa; llmprof's DistilBERT does neither.
  const bool decoder = c.model.type != config::ModelType::kDistilbert;
  if (decoder) {
    c.train.activation_checkpointing = true;
    add("+ activation checkpointing");
  }
  if (c.train.batch_size >= 2) {
    const int64_t accum = std::min<int64_t>(4, c.train.batch_size);
    c.train.grad_accum_steps = accum;
    c.train.batch_size = c.train.batch_size / accum;
    add("+ accumulation (" + std::to_string(accum) + " micro-batches)");
  } else {
    notes.push_back("no accumulation row at train.batch_size 1");
  }
  if (decoder) {
    c.model.attention = config::Attention::kSdpa;
    add(d.cuda ? "+ flash attention (sdpa)" : "+ sdpa attention");
  } else {
    notes.push_back("no checkpointing or sdpa rows: llmprof's DistilBERT has neither");
  }
  if (d.cuda) {
    c.model.fused_loss = true;
    add("+ fused loss");
  }
  if (d.cuda && opt.allocator == CudaAllocator::kCaching) {  // PYTORCH_CUDA_ALLOC_CONF's option
    opt.allocator = CudaAllocator::kExpandableSegments;
    add("+ expandable segments");
  }
  if (!parallel) {
    notes.push_back(
        "no data-parallel or ZeRO rows without optimizer state: ZeRO's closed forms "
        "count mixed-precision Adam's 16 bytes per parameter");
    return rows;
  }
  opt.world_size = world_size;
  const std::string w = " (world " + std::to_string(world_size) + ")";
  add("+ data parallel" + w);
  auto shard = [&](const std::string& name, Sharding s, StateFormula f) {
    rows.push_back({name + w + ", " + std::string(formula_name(f)), c, opt, s, f});
  };
  shard("+ ZeRO-1", Sharding::kZero1, StateFormula::kZeroPaper);
  shard("+ ZeRO-2", Sharding::kZero2, StateFormula::kZeroPaper);
  shard("+ ZeRO-2", Sharding::kZero2, StateFormula::kDeepSpeedEstimator);
  shard("+ ZeRO-3 / FSDP", Sharding::kZero3, StateFormula::kZeroPaper);
  shard("+ ZeRO-3 / FSDP", Sharding::kZero3, StateFormula::kDeepSpeedEstimator);
  return rows;
}

// The rows planned; a DeepSpeed row equal to the paper's row before it is left out.
std::vector<TechniqueRow> technique_rows(const config::Config& cfg,
                                         const PlanOptions& opt,
                                         const DeviceSpec& d,
                                         int64_t world_size,
                                         bool parallel,
                                         std::vector<std::string>& notes) {
  std::vector<TechniqueRow> rows;
  for (const RowSpec& s : row_specs(cfg, opt, d, world_size, parallel, notes)) {
    TechniqueRow r = planned_row(s, d);
    const bool same = !rows.empty() && s.formula == StateFormula::kDeepSpeedEstimator &&
                      rows.back().model_state_bytes == r.model_state_bytes;
    if (!same) rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

std::string_view formula_name(StateFormula f) {
  switch (f) {
    case StateFormula::kZeroPaper:
      return "ZeRO paper";
    case StateFormula::kDeepSpeedEstimator:
      return "DeepSpeed estimator";
    case StateFormula::kPlanned:
      break;
  }
  return "planned";
}

std::optional<double> roofline_step_ms(const MemoryPlan& m,
                                       const DeviceSpec& d,
                                       config::Precision precision) {
  const double flops =
      precision == config::Precision::kFp32 ? d.fp32_flops_per_s : d.bf16_flops_per_s;
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
  for (auto* rows : {&r.techniques, &r.adamw_techniques}) {
    for (TechniqueRow& t : *rows) {
      if (t.step_ms) *t.step_ms *= ratio;
    }
  }
}

PlanReport make_report(const config::Config& cfg,
                       const DeviceSpec& device,
                       int64_t vocab_size,
                       int64_t world_size,
                       CudaAllocator allocator,
                       OptimizerStates optimizer_states) {
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
  r.allocator = cuda_allocator_for(cfg, allocator);
  r.optimizer_states = optimizer_states;
  PlanOptions opt{vocab_size, 1, d.cuda, r.allocator, optimizer_states};
  r.memory = plan_memory(cfg, opt);
  r.fits = r.memory.peak_reserved_bytes <= d.usable_bytes();
  r.largest_batch = largest_batch(cfg, opt, d.usable_bytes());
  r.step_ms = roofline_step_ms(r.memory, d, cfg.train.precision);
  r.time_label = "roofline lower bound";
  const bool none = optimizer_states == OptimizerStates::kNone;
  r.techniques = technique_rows(cfg, opt, d, world_size, !none, r.table_notes);
  if (none) {  // the same rows with AdamW's states beside
    config::Config adamw = cfg;
    adamw.optim.name = config::Optimizer::kAdamw;
    opt.optimizer_states = OptimizerStates::kAsConfigured;
    std::vector<std::string> same_notes;
    r.adamw_techniques = technique_rows(adamw, opt, d, world_size, false, same_notes);
  }
  return r;
}

std::string bytes_text(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  const int64_t magnitude = bytes < 0 ? -bytes : bytes;
  if (magnitude >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / (1 << 30));
  if (magnitude >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / (1 << 20));
  if (magnitude >= (int64_t{1} << 10)) return fmt::format("{:.1f} KiB", b / (1 << 10));
  return fmt::format("{} B", bytes);
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
  d.activation_peak_bytes = m.activation_peak_bytes;
  d.peak_phase = m.peak_place.phase;
  d.peak_module = m.peak_place.module;
  d.fits = r.fits;
  d.largest_batch = r.largest_batch;
  d.flops_per_step = m.flops_per_step;
  d.step_ms = r.step_ms;
  d.step_ms_label = r.time_label;
  d.calibration_ratio = r.calibration;
  const auto rows_of = [](const std::vector<TechniqueRow>& table) {
    std::vector<rundir::PlanDocTechnique> rows;
    for (const TechniqueRow& t : table) {
      rows.push_back({t.name, std::string(formula_name(t.source)),
                      t.formula.empty() ? std::nullopt : std::optional<std::string>(t.formula),
                      t.predicted_only, t.peak_bytes, t.model_state_bytes, t.activation_bytes,
                      t.activation_peak_bytes, t.fits, t.largest_batch, t.micro_batch,
                      t.accumulation, t.step_ms});
    }
    return rows;
  };
  const bool none = r.optimizer_states == OptimizerStates::kNone;
  d.optimizer_states = none ? "none" : "as configured";
  d.techniques = rows_of(r.techniques);
  if (none) d.techniques_adamw = rows_of(r.adamw_techniques);
  d.technique_notes = r.table_notes;
  d.notes = m.notes;
  return rundir::plan_doc_text(d);
}

}  // namespace llmprof::plan
