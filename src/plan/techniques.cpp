// The technique table of llmprof plan, as the profiling lecture's "LLaMA-7B on one A100 40GB"
// case study: each row switches one more technique on, cumulatively, and is planned again, with
// the largest micro-batch that fits under it. Sharded rows give each closed form by its source.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "llmprof/config/enums.h"
#include "llmprof/plan/plan.h"
#include "llmprof/rundir/files.h"  // header only: the schema versions
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
  r.allocator = allocator;
  r.optimizer_states = optimizer_states;
  PlanOptions opt{vocab_size, 1, d.cuda, allocator, optimizer_states};
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

std::string report_json(const PlanReport& r) {
  using nlohmann::json;
  const MemoryPlan& m = r.memory;
  json comp = json::object();
  for (int c = 0; c < kNumComponents; ++c) {
    comp[std::string(component_name(static_cast<Component>(c)))] =
        m.component_bytes[static_cast<size_t>(c)];
  }
  json modules = json::array();
  for (const ModuleBytes& b : m.block_modules) {
    modules.push_back({{"module", b.module}, {"dtype", b.dtype}, {"bytes", b.bytes}});
  }
  auto rows_of = [](const std::vector<TechniqueRow>& table) {
    json rows = json::array();
    for (const TechniqueRow& t : table) {
      rows.push_back({{"technique", t.name},
                      {"model_state_source", formula_name(t.source)},
                      {"model_state_formula", t.formula.empty() ? json(nullptr) : json(t.formula)},
                      {"predicted_only", t.predicted_only},
                      {"peak_bytes", t.peak_bytes},
                      {"model_state_bytes", t.model_state_bytes},
                      {"activation_bytes", t.activation_bytes},
                      {"activation_peak_bytes", t.activation_peak_bytes},
                      {"fits", t.fits},
                      {"largest_batch", t.largest_batch},
                      {"micro_batch", t.micro_batch},
                      {"accumulation", t.accumulation},
                      {"step_ms", t.step_ms ? json(*t.step_ms) : json(nullptr)}});
    }
    return rows;
  };
  const bool none = r.optimizer_states == OptimizerStates::kNone;
  json j = {{"schema_version", rundir::kPlanSchemaVersion},
            {"device",
             {{"name", r.device.name},
              {"product", r.device.product},
              {"capacity_bytes", r.device.capacity_bytes},
              {"usable_bytes", r.device.usable_bytes()},
              {"source", r.device.source}}},
            {"parameters", m.parameters},
            {"components_at_peak_bytes", comp},
            {"activations_bytes", m.activations_bytes},
            {"activations_per_block_bytes", m.activations_per_block_bytes},
            {"activation_peak_bytes", m.activation_peak_bytes},
            {"block_modules", modules},
            {"peak_bytes", m.peak_bytes},
            {"peak_reserved_bytes", m.peak_reserved_bytes},
            {"peak_reserved_note", reserved_note(r)},
            {"allocator", r.device.cuda ? json(allocator_name(r.allocator)) : json(nullptr)},
            {"workspace_bytes", r.device.cuda ? json(kCudaWorkspaceBytes) : json(nullptr)},
            {"fragmentation_bytes", r.device.cuda ? json(m.fragmentation_bytes) : json(nullptr)},
            {"largest_tensor_bytes", r.device.cuda ? json(m.largest_tensor_bytes) : json(nullptr)},
            {"peak_phase", m.peak_place.phase},
            {"peak_module", m.peak_place.module},
            {"fits", r.fits},
            {"largest_batch", r.largest_batch},
            {"flops_per_step", m.flops_per_step},
            {"step_ms", r.step_ms ? json(*r.step_ms) : json(nullptr)},
            {"step_ms_label", r.time_label},
            {"calibration_ratio", r.calibration ? json(*r.calibration) : json(nullptr)},
            {"optimizer_states", none ? "none" : "as configured"},
            {"techniques", rows_of(r.techniques)},
            {"techniques_adamw", none ? rows_of(r.adamw_techniques) : json(nullptr)},
            {"technique_notes", r.table_notes},
            {"notes", m.notes}};
  return j.dump(2);
}

}  // namespace llmprof::plan
