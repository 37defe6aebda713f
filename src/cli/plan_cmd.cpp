// llmprof plan --config F [--set k=v]... [--device D] [--world-size W] [--format text|json]
//              [--allocator caching|expandable_segments] [--calibrate RUN]
// Predicts one training step's memory by component, the largest batch that fits the device and
// a table of techniques with predicted memory and roofline step time, without running a step.
#include <fmt/format.h>

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

std::string gib(int64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30));
}
std::string mib(int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}
std::string size(int64_t bytes) { return bytes >= (int64_t{1} << 30) ? gib(bytes) : mib(bytes); }

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

void print_text(const plan::PlanReport& r, const config::Config& cfg) {
  const plan::MemoryPlan& m = r.memory;
  fmt::print("device: {} ({}), capacity {}, usable {}{}\n", r.device.name, r.device.product,
             size(r.device.capacity_bytes), size(r.device.usable_bytes()),
             r.device.cuda ? fmt::format("; allocator: {}", plan::allocator_name(r.allocator))
                           : std::string());
  fmt::print("parameters: {} ({:.1f} M)\n\n", m.parameters, m.parameters / 1e6);
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
  fmt::print("\nsaved for backward by one block ({} in all):\n", size(m.activations_bytes));
  for (const plan::ModuleBytes& b : m.block_modules) {
    if (b.bytes > 0) fmt::print("  {:<24} {:>5} {:>12}\n", b.module, b.dtype, size(b.bytes));
  }
  fmt::print("\nfits: {}; largest batch that fits: {}\n", r.fits ? "yes" : "NO (out of memory)",
             r.largest_batch);
  fmt::print("step time: {} ({})\n\n", r.step_ms ? fmt::format("{:.1f} ms", *r.step_ms)
                                                   : std::string("unknown: no peaks for device"),
             r.time_label);
  fmt::print("{:<34} {:>12} {:>12} {:>12} {:>10}  {}\n", "technique", "peak", "model states",
             "activations", "step ms", "fits");
  for (const plan::TechniqueRow& t : r.techniques) {
    fmt::print("{:<34} {:>12} {:>12} {:>12} {:>10}  {}{}\n", t.name, size(t.peak_bytes),
               size(t.model_state_bytes), size(t.activation_bytes),
               t.step_ms ? fmt::format("{:.1f}", *t.step_ms) : std::string("-"),
               t.fits ? "fits" : "OOM",
               t.predicted_only ? "  (predicted only: llmprof does not shard)" : "");
  }
  fmt::print("\nstep ms: {}; model states = parameters + gradients + optimizer state (+ casts)\n",
             r.time_label);
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
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "plan", "Predict a training step's memory by component, the largest batch that fits a "
              "device, and a table of techniques, without running a step");
  sub->add_option("--config", args->config_path, "Config file (YAML or JSON)")->required();
  sub->add_option("--set", args->overrides, "Override a key: --set model.n_layer=6");
  sub->add_option("--device", args->device,
                  "cpu | cuda | h100-80gb | h200 | a100-40gb | a100-80gb | a byte count "
                  "(default: the config's device)");
  sub->add_option("--world-size", args->world_size, "Ranks of the data-parallel rows (8)");
  sub->add_option("--format", args->format, "text or json");
  sub->add_option("--allocator", args->allocator,
                  "CUDA caching allocator: caching (the default) or expandable_segments "
                  "(default: as PYTORCH_CUDA_ALLOC_CONF selects)");
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
    const config::Config cfg = config::load_config(args->config_path, args->overrides);
    const std::string device =
        args->device.empty() ? std::string(config::name(cfg.device.kind)) : args->device;
    const plan::DeviceSpec d = resolve_device(device, cfg.device.index);
    plan::PlanReport r =
        plan::make_report(cfg, d, plan::tokenizer_vocab_size(cfg), args->world_size, allocator);
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
