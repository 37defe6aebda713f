// llmprof plan --config F [--set k=v]... [--device D] [--world-size W] [--format text|json]
//              [--allocator caching|expandable_segments] [--optimizer-states none|adamw]
//              [--calibrate RUN]
// Predicts one training step's memory by component, the largest batch that fits the device and
// a table of techniques with predicted memory and roofline step time, without running a step.
#include <fmt/format.h>

#include <algorithm>

#include "commands.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/gpu/device_properties.h"
#include "llmprof/plan/plan.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"

namespace llmprof::cli {

namespace {

std::string size(int64_t bytes) { return plan::bytes_text(bytes); }

// --device cuda: the current GPU's memory, with the table's peaks when its product is known.
plan::DeviceSpec resolve_device(const std::string& name, int64_t index) {
  if (name != "cuda") return plan::find_device(name);
  const auto props = gpu::query_device_properties(static_cast<int>(index));
  if (!props) return plan::find_device(name);  // throws: no CUDA device here
  plan::DeviceSpec d = plan::device_for_product(props->name).value_or(plan::DeviceSpec{});
  d.name = "cuda";
  d.product = props->name;
  d.cuda = true;
  d.capacity_bytes = props->total_global_mem;
  d.reserved_bytes = plan::kCudaContextBytes;
  if (d.source.empty()) d.source = "cudaGetDeviceProperties (no datasheet peaks for this product)";
  return d;
}

// --calibrate RUN: the run's median step against the roofline bound of the run's own config.
void calibrate_on(plan::PlanReport& r, const config::Config& cfg, const std::string& run) {
  std::vector<rundir::InputWarning> warnings;
  const auto summary = rundir::read_summary(rundir::path(run, rundir::kSummary), warnings);
  if (!summary || !summary->median_step_ms()) {
    throw UsageError("--calibrate " + run + ": no summary.json with a median step time");
  }
  const config::Config run_cfg = config::load_config(rundir::path(run, rundir::kConfig));
  // A run whose vocabulary came from its tokenizer at run time (model.vocab_size 0, a generated
  // corpus) is bounded with the plan's own vocabulary (its --set model.vocab_size).
  int64_t vocab = plan::tokenizer_vocab_size(run_cfg);
  if (vocab <= 0) vocab = plan::tokenizer_vocab_size(cfg);
  const plan::PlanReport own = plan::make_report(run_cfg, r.device, vocab, 1);
  if (!own.step_ms) {
    throw UsageError("--calibrate " + run + ": the device has no peaks to bound the step with");
  }
  plan::calibrate(r, *summary->median_step_ms() / *own.step_ms, run);
}

// One row: peak, model states, activations held at the peak and the step's activation peak, step
// ms, the largest micro-batch that fits, fits; with --optimizer-states none the AdamW row beside.
void print_row(const plan::TechniqueRow& t, const plan::TechniqueRow* adamw) {
  std::string line = fmt::format("{:<46} {:>10} {:>12} {:>10} {:>10} {:>9} {:>6}  {:<4}", t.name,
                                 size(t.peak_bytes), size(t.model_state_bytes),
                                 size(t.activation_bytes), size(t.activation_peak_bytes),
                                 t.step_ms ? fmt::format("{:.1f}", *t.step_ms) : std::string("-"),
                                 t.largest_batch, t.fits ? "fits" : "OOM");
  if (adamw != nullptr) {
    line += fmt::format(" | {:>10} {:>6}  {:<4}", size(adamw->peak_bytes), adamw->largest_batch,
                        adamw->fits ? "fits" : "OOM");
  }
  if (!t.formula.empty()) line += "  " + t.formula;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  fmt::print("{}\n", line);
}

void print_techniques(const plan::PlanReport& r) {
  const bool none = r.optimizer_states == plan::OptimizerStates::kNone;
  if (none) {
    fmt::print("{:<46} {:>73} | {}\n", "", "weights and gradients only (no optimizer state)",
               "with AdamW");
  }
  fmt::print("{:<46} {:>10} {:>12} {:>10} {:>10} {:>9} {:>6}  {:<4}{}\n", "technique", "peak",
             "model states", "act. held", "act. peak", "step ms", "batch", "fits",
             none ? fmt::format(" | {:>10} {:>6}  {}", "peak", "batch", "fits") : "");
  for (size_t i = 0; i < r.techniques.size(); ++i) {
    print_row(r.techniques[i],
              none && i < r.adamw_techniques.size() ? &r.adamw_techniques[i] : nullptr);
  }
  fmt::print(
      "\nstep ms: {}; model states = parameters + gradients + optimizer state (+ casts);\n"
      "act. held: activations + loss buffers held at the row's peak; act. peak: the most "
      "live at once in the step;\nbatch: the largest micro-batch that fits with the row's "
      "techniques\n",
      r.time_label);
  if (r.techniques.size() > 1 && r.techniques.back().predicted_only) {
    fmt::print(
        "sharded rows, predicted only (llmprof does not shard): model states by the ZeRO "
        "paper's closed forms (Rajbhandari et al. 2020: 16 bytes per parameter of mixed-"
        "precision Adam) and DeepSpeed's estimators (estimate_zero2/zero3_model_states_"
        "mem_needs, no offload) where they differ; N = world size, P = {} parameters\n",
        r.memory.parameters);
  }
  for (const std::string& n : r.table_notes) fmt::print("note: {}\n", n);
}

void print_text(const plan::PlanReport& r, const config::Config& cfg) {
  const plan::MemoryPlan& m = r.memory;
  fmt::print("device: {} ({}), capacity {}, usable {}{}\n", r.device.name, r.device.product,
             size(r.device.capacity_bytes), size(r.device.usable_bytes()),
             r.device.cuda ? fmt::format("; allocator: {}", plan::allocator_name(r.allocator))
                           : std::string());
  fmt::print("parameters: {} ({:.1f} M); optimizer states: {}\n\n", m.parameters,
             m.parameters / 1e6,
             r.optimizer_states == plan::OptimizerStates::kNone
                 ? std::string("none (weights and gradients only)")
                 : std::string(config::name(cfg.optim.name)));
  fmt::print("memory at the step's peak ({} / {}), batch {}:\n", m.peak_place.phase,
             m.peak_place.module, cfg.train.batch_size);
  for (int c = 0; c < plan::kNumComponents; ++c) {
    const int64_t b = m.component_bytes[static_cast<size_t>(c)];
    if (b != 0) {
      fmt::print("  {:<18} {:>12}\n", plan::component_name(static_cast<plan::Component>(c)),
                 size(b));
    }
  }
  fmt::print("  {:<18} {:>12}\n  {:<18} {:>12}  ({})\n", "peak (allocated)", size(m.peak_bytes),
             "peak (reserved)", size(m.peak_reserved_bytes), plan::reserved_note(r));
  fmt::print(
      "\nsaved for backward by one block ({} in all at the end of the forward; the most "
      "live at once: {}):\n",
      size(m.activations_bytes), size(m.activation_peak_bytes));
  // The module column as wide as its longest name (Llama's 0.post_attention_layernorm: 26).
  size_t module_width = 24;
  for (const plan::ModuleBytes& b : m.block_modules) {
    if (b.bytes > 0) module_width = std::max(module_width, b.module.size());
  }
  for (const plan::ModuleBytes& b : m.block_modules) {
    if (b.bytes > 0) {
      fmt::print("  {:<{}} {:>5} {:>12}\n", b.module, module_width, b.dtype, size(b.bytes));
    }
  }
  fmt::print("\nfits: {}; largest batch that fits: {}\n", r.fits ? "yes" : "NO (out of memory)",
             r.largest_batch);
  fmt::print("step time: {} ({})\n\n",
             r.step_ms ? fmt::format("{:.1f} ms", *r.step_ms)
                       : std::string("unknown: no peaks for device"),
             r.time_label);
  print_techniques(r);
  for (const std::string& n : m.notes) fmt::print("note: {}\n", n);
}

}  // namespace

std::string plan_misfit(const config::Config& cfg, const std::string& device) {
  const std::string name = device.empty() ? std::string(config::name(cfg.device.kind)) : device;
  const plan::DeviceSpec d = resolve_device(name, cfg.device.index);
  const plan::PlanReport r = plan::make_report(cfg, d, plan::tokenizer_vocab_size(cfg), 1,
                                               plan::cuda_allocator_from_env());
  if (r.fits) return "";
  return fmt::format("peak {} ({} / {}) > usable {} of {}; largest batch that fits: {}",
                     size(r.memory.peak_reserved_bytes), r.memory.peak_place.phase,
                     r.memory.peak_place.module, size(d.usable_bytes()), d.name, r.largest_batch);
}

void add_plan_command(CLI::App& app, int& exit_code) {
  struct Args {
    std::string config_path;
    std::vector<std::string> overrides;
    std::string device;
    int64_t world_size = 8;
    std::string format = "text";
    std::string calibrate;
    std::string allocator;
    std::string optimizer_states;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "plan",
      "Predict a training step's memory by component, the largest batch that fits a "
      "device, and a table of techniques, without running a step");
  sub->add_option("-c,--config", args->config_path, "Config file (YAML or JSON)")->required();
  sub->add_option("--set", args->overrides, "Override a key: --set model.n_layer=6");
  sub->add_option("--device", args->device,
                  "cpu | cuda | h100-80gb | h200 | a100-40gb | a100-80gb | a product name (H100, "
                  "A100-40GB) | a byte count (default: the config's device)")
      ->check(non_empty("cpu, cuda, a device name or a byte count, or leave --device out for "
                        "the config's device"));
  sub->add_option("--world-size", args->world_size, "Ranks of the data-parallel rows (8)");
  sub->add_option("--format", args->format, "text or json");
  sub->add_option("--allocator", args->allocator,
                  "CUDA caching allocator: caching (the default) or expandable_segments "
                  "(default: as PYTORCH_CUDA_ALLOC_CONF selects; a config with "
                  "train.cuda_expandable_segments: true plans with expandable_segments)");
  sub->add_option("--optimizer-states", args->optimizer_states,
                  "none: weights and gradients only, as the profiling lecture's LLaMA-7B table "
                  "counts, with the AdamW rows beside; adamw: AdamW's two moments (default: the "
                  "config's optim.name)");
  sub->add_option("--calibrate", args->calibrate,
                  "A run directory measured on this device: step times are scaled by its "
                  "measured median step over its own roofline bound");
  sub->callback([args, &exit_code]() {
    if (args->format != "text" && args->format != "json") {
      throw UsageError("--format '" + args->format + "': expected text or json");
    }
    if (args->world_size < 1) throw UsageError("--world-size must be >= 1");
    plan::CudaAllocator allocator = plan::cuda_allocator_from_env();
    if (args->allocator == "caching") {
      allocator = plan::CudaAllocator::kCaching;
    } else if (args->allocator == "expandable_segments") {
      allocator = plan::CudaAllocator::kExpandableSegments;
    } else if (!args->allocator.empty()) {
      throw UsageError("--allocator '" + args->allocator +
                       "': expected caching or expandable_segments");
    }
    plan::OptimizerStates states = plan::OptimizerStates::kAsConfigured;
    if (args->optimizer_states == "none") {
      states = plan::OptimizerStates::kNone;
    } else if (!args->optimizer_states.empty() && args->optimizer_states != "adamw") {
      throw UsageError("--optimizer-states '" + args->optimizer_states +
                       "': expected none or adamw");
    }
    config::Config cfg = config::load_config(args->config_path, args->overrides);
    if (args->optimizer_states == "adamw") cfg.optim.name = config::Optimizer::kAdamw;
    const std::string device =
        args->device.empty() ? std::string(config::name(cfg.device.kind)) : args->device;
    const plan::DeviceSpec d = resolve_device(device, cfg.device.index);
    plan::PlanReport r = plan::make_report(cfg, d, plan::tokenizer_vocab_size(cfg),
                                           args->world_size, allocator, states);
    if (!args->calibrate.empty()) calibrate_on(r, cfg, args->calibrate);
    if (args->format == "json") {
      fmt::print("{}\n", plan::report_json(r));
    } else {
      print_text(r, cfg);
    }
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
