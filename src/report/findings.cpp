#include "llmprof/report/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "llmprof/base/numbers.h"
#include "llmprof/base/stats.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/rundir/comm_ranks.h"

namespace llmprof::report {

namespace {

// runtime.malloc_mmap_threshold_bytes reaches mallopt as an int: the largest power of two it takes.
constexpr int64_t kMaxMmapThresholdBytes = int64_t{1} << 30;

std::string pct(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }

int64_t config_int(const Run& run, const std::string& key, int64_t fallback) {
  auto v = run.config_number(key);
  const std::optional<int64_t> whole = v ? truncated_int64(*v) : std::nullopt;
  return whole.value_or(fallback);
}

// The steps the run was set to take: schedule.max_steps, else summary.json steps.max_steps, else
// the rows of steps.csv.
int64_t max_steps(const Run& run, const RunMetrics& m) {
  if (auto v = run.config_number("schedule.max_steps")) {
    if (auto steps = truncated_int64(*v)) return *steps;
  }
  if (run.summary_max_steps) return *run.summary_max_steps;
  return m.steps_completed;
}

// "`--set key=value`" when the run's config with key=value passes the key's range and, when the
// run's config passed them, the cross-key checks (the same as `llmprof train` applies); nullopt
// when the value is not valid for the run. Keys this version does not know are left at defaults.
std::optional<std::string> valid_set(const Run& run,
                                     const std::string& key,
                                     const std::string& value) {
  config::Config cfg;
  for (const auto& [k, v] : run.config) {
    try {
      config::apply_override(cfg, k + "=" + v);
    } catch (const Error&) {
    }
  }
  bool checks_passed = true;
  try {
    config::validate(cfg);
  } catch (const Error&) {
    checks_passed = false;  // a hand-written subset: check the key's own range only
  }
  const std::string set = key + "=" + value;
  try {
    config::apply_override(cfg, set);
    if (checks_passed) config::validate(cfg);
  } catch (const Error&) {
    return std::nullopt;
  }
  return "`--set " + set + "`";
}

std::optional<std::string> valid_set(const Run& run, const std::string& key, int64_t value) {
  return valid_set(run, key, std::to_string(value));
}

// Of the values from wanted back towards current (excluded), the one nearest wanted that
// valid_set accepts, as its --set; nullopt when none is. Validity is one interval of a key, so a
// bisection finds the edge.
std::optional<std::string> nearest_valid_set(const Run& run,
                                             const std::string& key,
                                             int64_t current,
                                             int64_t wanted) {
  if (auto set = valid_set(run, key, wanted)) return set;
  int64_t bad = wanted, good = current;  // invariant: bad is rejected; good is current or accepted
  while (bad - good > 1 || good - bad > 1) {
    int64_t mid = good + (bad - good) / 2;
    (valid_set(run, key, mid) ? good : bad) = mid;
  }
  if (good == current) return std::nullopt;
  return valid_set(run, key, good);
}

Finding make(
    const Run& run, const char* rule, double measured, double threshold, const char* unit) {
  Finding f;
  f.rule = rule;
  f.run = run.label;
  f.measured = measured;
  f.threshold = threshold;
  f.unit = unit;
  return f;
}

// "--set train.batch_size=2B" with the run's batch size doubled (or the largest valid above B);
// nullopt when the batch size is unknown or already at its maximum.
std::optional<std::string> larger_batch(const Run& run) {
  auto b = run.config_number("train.batch_size");
  const std::optional<int64_t> whole = b ? whole_int64(*b) : std::nullopt;
  if (!whole || *whole < 1 || *whole > (int64_t{1} << 40)) return std::nullopt;
  const int64_t batch = *whole;
  return nearest_valid_set(run, "train.batch_size", batch, batch * 2);
}

// larger_batch, or what to change in words when there is no valid --set.
std::string double_batch(const Run& run) {
  if (auto set = larger_batch(run)) return *set;
  if (!run.config_number("train.batch_size")) return "a larger train.batch_size";
  return fmt::format("more tokens per step (train.batch_size = {} is at its maximum)",
                     run.config.at("train.batch_size"));
}

// "1.13.1" -> {1, 13}; nullopt when the version does not start with two numbers.
std::optional<std::pair<int, int>> major_minor(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::pair{major, minor};
}

// optim.fused=true where the run's optimizer is adam/adamw and not fused yet, with what it needs;
// what the optimizer already is otherwise; "" when the config does not say.
std::string fused_optimizer(const Run& run) {
  const auto name = run.config.find("optim.name");
  const auto fused = run.config.find("optim.fused");
  if (fused != run.config.end() && fused->second == "true") {
    return "the optimizer is already fused (optim.fused = true)";
  }
  if (name != run.config.end() && name->second == "sgd") {
    return "";  // optim.fused applies to adam and adamw only
  }
  // train refuses optim.fused on a LibTorch without the fused kernels: no --set that cannot run.
  const auto device = run.config.find("device");
  const bool cuda = device != run.config.end() && device->second.rfind("cuda", 0) == 0;
  const std::pair<int, int> needs = cuda ? std::pair{2, 1} : std::pair{2, 4};
  if (auto have = major_minor(run.torch_version); have && *have < needs) {
    return fmt::format(
        "a fused optimizer (optim.fused = true) needs LibTorch >= {}.{} on {}; this run's is {}",
        needs.first, needs.second, cuda ? "CUDA" : "CPU", run.torch_version);
  }
  if (auto set = valid_set(run, "optim.fused", std::string("true"))) {
    return *set +
           " (adam/adamw as one fused multi-tensor kernel set; LibTorch >= 2.4 on CPU, >= 2.1 "
           "on CUDA)";
  }
  return "";
}

// The clause a precision suggestion carries until it is tried: bf16 is an experiment, not advice
// (at a small shape the casts around each op can cost more than bf16 saves).
std::string precision_experiment(const Run& run, const std::string& set, const std::string& why) {
  return fmt::format(
      "{} {}, but autocast adds casts around each op, which can cost more than they save at a "
      "small shape: an experiment, not advice, until measured (`llmprof report --try {}`)",
      set, why, run.dir);
}

// The key=value of each "`--set key=value`" in text, in order.
std::vector<std::string> sets_in(const std::string& text) {
  static const std::string kOpen = "`--set ";
  std::vector<std::string> out;
  for (size_t at = text.find(kOpen); at != std::string::npos; at = text.find(kOpen, at)) {
    at += kOpen.size();
    const size_t end = text.find('`', at);
    if (end == std::string::npos) break;
    const std::string set = text.substr(at, end - at);
    if (std::find(out.begin(), out.end(), set) == out.end()) out.push_back(set);
    at = end;
  }
  return out;
}

}  // namespace

std::optional<Finding> rule_data_wait(const Run& run, const RunMetrics& m) {
  auto share = m.phase_share("data");
  if (!share || *share <= kDataWaitMaxShare) return std::nullopt;
  Finding f = make(run, "data_wait", *share, kDataWaitMaxShare, "fraction of step");
  int64_t workers = config_int(run, "data.num_workers", 0);
  f.title = "the step waits for data";
  f.evidence = fmt::format(
      "data wait median {} ms of a {} ms step = {} (threshold {}); "
      "data.num_workers = {}.",
      format_number(m.stat("data_ms")->median), format_number(m.stat("step_ms")->median),
      pct(*share), pct(kDataWaitMaxShare), workers);
  // Twice the workers, up to the key's maximum.
  auto set = nearest_valid_set(run, "data.num_workers", workers, workers == 0 ? 1 : workers * 2);
  f.suggestion = set ? *set + " (batches prepared in the background)"
                     : fmt::format(
                           "make batches cheaper to build (data.num_workers = {} is as many "
                           "workers as it takes): pre-tokenize the data, or a larger "
                           "data.prefetch if the wait comes in bursts",
                           workers);
  return f;
}

std::optional<Finding> rule_eval_share(const Run& run, const RunMetrics& m) {
  if (!m.eval_share || *m.eval_share <= kEvalMaxShare || m.step_total_ms <= 0) return std::nullopt;
  Finding f = make(run, "eval_share", *m.eval_share, kEvalMaxShare, "fraction of wall time");
  f.title = "evaluation takes a large part of the run";
  // Eval time E against step time S: E/(E+S) falls to the threshold t when E shrinks by
  // k = E(1-t) / (tS), so evaluate k times less often, or on k times fewer batches.
  double k = m.eval_total_ms * (1 - kEvalMaxShare) / (kEvalMaxShare * m.step_total_ms);
  int64_t interval = config_int(run, "train.eval_interval", 0);
  int64_t steps = config_int(run, "train.eval_steps", 0);
  f.evidence = fmt::format(
      "evals took {} ms against {} ms of steps = {} of wall time "
      "(threshold {}); train.eval_interval = {}, train.eval_steps = {}.",
      format_number(m.eval_total_ms), format_number(m.step_total_ms), pct(*m.eval_share),
      pct(kEvalMaxShare), interval, steps);
  // Evals run every `interval` steps and at the last: an interval at max_steps keeps only the
  // last one, and a longer one changes nothing.
  const int64_t last = max_steps(run, m);
  std::vector<std::string> options;
  if (interval > 0 && interval < last) {
    int64_t wanted = std::min(last, static_cast<int64_t>(std::ceil(interval * k)));
    if (auto set = nearest_valid_set(run, "train.eval_interval", interval, wanted)) {
      options.push_back(*set + (wanted == last ? " (one eval, at the last step)" : ""));
    }
  }
  if (steps > 1) {
    int64_t fewer = std::max<int64_t>(1, static_cast<int64_t>(steps / k));
    if (auto set = nearest_valid_set(run, "train.eval_steps", steps, fewer)) {
      options.push_back(*set);
    }
  }
  if (options.empty() && (interval <= 0 || steps <= 0)) {  // the config does not say
    f.suggestion = fmt::format(
        "raise train.eval_interval (up to the {} steps of the run) or lower train.eval_steps",
        last);
    return f;
  }
  if (options.empty()) {
    f.suggestion = fmt::format(
        "evaluation is already at its least ({} of {} steps, {} batch(es) a split): a longer "
        "run (schedule.max_steps) spreads it thinner, or train.eval_interval=0 skips it (no "
        "val loss)",
        interval >= last ? "one eval, at the last" : "an eval every " + std::to_string(interval),
        last, steps);
    return f;
  }
  f.suggestion = fmt::format("{} (eval time / {:.1f} brings it to about {})",
                             fmt::join(options, " or "), k, pct(kEvalMaxShare));
  return f;
}

std::optional<Finding> rule_optimizer_share(const Run& run, const RunMetrics& m) {
  auto share = m.phase_share("optimizer");
  if (!share || *share <= kOptimizerMaxShare) return std::nullopt;
  Finding f = make(run, "optimizer_share", *share, kOptimizerMaxShare, "fraction of step");
  f.title = "the optimizer step is a large part of the step";
  f.evidence = fmt::format(
      "optimizer median {} ms of a {} ms step = {} (threshold {}); "
      "optim.name = {}.",
      format_number(m.stat("optimizer_ms")->median), format_number(m.stat("step_ms")->median),
      pct(*share), pct(kOptimizerMaxShare),
      run.config.count("optim.name") ? run.config.at("optim.name") : "?");
  std::vector<std::string> sets;
  if (auto set = larger_batch(run)) sets.push_back(*set);
  const int64_t accum = config_int(run, "train.grad_accum_steps", 1);
  if (auto set = nearest_valid_set(run, "train.grad_accum_steps", accum, accum * 2)) {
    sets.push_back(*set);
  }
  f.suggestion = fused_optimizer(run);
  if (!sets.empty()) {
    f.suggestion += fmt::format("{}amortise it over more tokens per step: {}",
                                f.suggestion.empty() ? "" : ", or ", fmt::join(sets, " or "));
  }
  if (f.suggestion.empty()) {
    f.suggestion = "a cheaper optimizer step: the batch and accumulation keys are at their maximum";
  }
  return f;
}

std::optional<Finding> rule_attention_core(const Run& run, const RunMetrics& m) {
  double core = 0, block = 0;
  bool seen_core = false, seen_block = false;
  for (const auto* pass : {&m.forward_scopes, &m.backward_scopes}) {
    if (auto it = pass->find("attn.core"); it != pass->end()) {
      core += it->second.total_ms;
      seen_core = true;
    }
    if (auto it = pass->find("block"); it != pass->end()) {
      block += it->second.total_ms;
      seen_block = true;
    }
  }
  if (!seen_core || !seen_block || block <= 0) return std::nullopt;
  double share = core / block;
  if (share <= kAttentionCoreMaxShare) return std::nullopt;
  Finding f = make(run, "attention_core", share, kAttentionCoreMaxShare, "fraction of block time");
  int64_t t = config_int(run, "model.block_size", 0);
  f.title = "attention scores/softmax/mix dominate the blocks";
  f.evidence = fmt::format(
      "attn.core {} ms of {} ms block time per step (fwd+bwd, all blocks) "
      "= {} (threshold {}); model.block_size = {}.",
      format_number(core), format_number(block), pct(share), pct(kAttentionCoreMaxShare), t);
  // Half the context, or as short as the model allows (an encoder needs [CLS] x [SEP]).
  std::optional<std::string> set;
  if (t >= 2) set = nearest_valid_set(run, "model.block_size", t, t / 2);
  f.suggestion = set ? *set +
                           " (attention core is O(T^2) per sequence; halving T quarters it), if "
                           "the task allows a shorter context"
                 : t > 0 ? fmt::format(
                               "model.block_size = {} is as short as the model takes: fewer "
                               "heads or a narrower model.n_embd shrink the attention core",
                               t)
                         : "a shorter model.block_size (attention core is O(T^2))";
  return f;
}

std::optional<Finding> rule_low_mfu_small_batch(const Run& run, const RunMetrics& m) {
  const Stats* mfu = m.stat("mfu");
  auto batch = run.config_number("train.batch_size");
  if (!mfu || !batch || mfu->median >= kLowMfu || *batch > kSmallBatch) return std::nullopt;
  Finding f = make(run, "low_mfu_small_batch", mfu->median, kLowMfu, "MFU");
  f.title = "low MFU at a small batch";
  f.evidence =
      fmt::format("median MFU {} (threshold {}) with train.batch_size = {} (<= {}).",
                  pct(mfu->median), pct(kLowMfu), *batch, static_cast<int64_t>(kSmallBatch));
  f.suggestion = double_batch(run) + " (larger matmuls run closer to peak)";
  return f;
}

std::optional<Finding> rule_memory_headroom(const Run& run, const RunMetrics& m) {
  if (!m.peak_rss_bytes || !run.host_memory_bytes || *run.host_memory_bytes <= 0) {
    return std::nullopt;
  }
  double share = *m.peak_rss_bytes / *run.host_memory_bytes;
  if (share >= kMemoryHeadroomShare) return std::nullopt;
  Finding f = make(run, "memory_headroom", share, kMemoryHeadroomShare, "fraction of host memory");
  f.title = "memory room for a larger batch";
  f.evidence = fmt::format("peak RSS {} = {} of host memory {} (threshold {}).",
                           bytes_cell(m.peak_rss_bytes).text, pct(share),
                           bytes_cell(run.host_memory_bytes).text, pct(kMemoryHeadroomShare));
  f.suggestion = double_batch(run) +
                 " if throughput or gradient noise call for it (activations "
                 "grow about linearly with the batch)";
  return f;
}

// llmprof plan's prediction off by more than 10% for a component: the planner's model of this
// run is wrong there (or something it does not model allocates), so its answers are suspect.
std::optional<Finding> rule_plan_differs(const Run& run, const RunMetrics&) {
  constexpr double kPlanTolerance = 0.10;
  const PlanRow* worst = nullptr;
  for (const auto& r : run.plan) {
    if (!r.ratio) continue;
    if (worst == nullptr || std::abs(*r.ratio - 1) > std::abs(*worst->ratio - 1)) worst = &r;
  }
  if (worst == nullptr || std::abs(*worst->ratio - 1) <= kPlanTolerance) return std::nullopt;
  Finding f = make(run, "plan_differs", *worst->ratio, 1 + kPlanTolerance, "predicted / measured");
  f.title = "llmprof plan mispredicts " + worst->component;
  f.evidence =
      fmt::format("{}: predicted {}, measured {} ({:.2f}x; more than {} off).", worst->component,
                  bytes_cell(worst->predicted_bytes).text, bytes_cell(worst->measured_bytes).text,
                  *worst->ratio, pct(kPlanTolerance));
  f.suggestion =
      "trust `llmprof plan` for this config only after checking what it does not "
      "model (summary.json plan.definition); report the config if it is a plain run";
  return f;
}

std::optional<Finding> rule_page_faults(const Run& run, const RunMetrics& m) {
  const Stats* faults = m.stat("minor_faults");
  // The mean as well as the median: glibc can map a large block on every other step (seen with
  // the 37 MB masked-LM logits), which leaves the median at 0.
  const double per_step = faults ? std::max(faults->median, faults->mean) : 0;
  if (!faults || per_step <= kMaxMinorFaultsPerStep) return std::nullopt;
  Finding f = make(run, "page_faults", per_step, kMaxMinorFaultsPerStep, "faults per step");
  f.title = "the allocator keeps faulting in fresh pages";
  bool tuned = run.config.count("runtime.malloc_tuning") == 0 ||
               run.config.at("runtime.malloc_tuning") == "true";
  f.evidence = fmt::format(
      "median {}, mean {}, p90 {} minor faults per step (threshold {}); "
      "runtime.malloc_tuning = {}.",
      format_number(faults->median), format_number(faults->mean), format_number(faults->p90),
      kMaxMinorFaultsPerStep, tuned ? "true" : "false");
  if (!tuned) {
    f.suggestion = "`--set runtime.malloc_tuning=true` (keeps freed activations on the heap)";
  } else {
    int64_t mmap = config_int(run, "runtime.malloc_mmap_threshold_bytes", 33554432);
    // Four times the threshold, at most what mallopt takes (an int).
    std::optional<std::string> set;
    if (mmap < kMaxMmapThresholdBytes) {
      set = nearest_valid_set(run, "runtime.malloc_mmap_threshold_bytes", mmap,
                              std::min(std::max<int64_t>(mmap, 1) * 4, kMaxMmapThresholdBytes));
    }
    f.suggestion =
        set ? *set + " (larger blocks stay on the heap instead of fresh mmaps)"
            : fmt::format(
                  "runtime.malloc_mmap_threshold_bytes = {} is as high as mallopt takes: find the "
                  "op that allocates blocks that large each step (profile.level=ops, then "
                  "ops.csv alloc_bytes)",
                  mmap);
  }
  return f;
}

std::optional<Finding> rule_context_switches(const Run& run, const RunMetrics& m) {
  const Stats* sw = m.stat("involuntary_switches");
  if (!sw || sw->median <= kMaxInvoluntarySwitchesPerStep) return std::nullopt;
  Finding f = make(run, "context_switches", sw->median, kMaxInvoluntarySwitchesPerStep,
                   "switches per step");
  f.title = "threads are preempted during the step";
  int64_t threads = config_int(run, "threads", 0);
  int64_t cores = run.host_cores ? truncated_int64(*run.host_cores).value_or(0) : 0;
  int64_t used = threads > 0 ? threads : cores;
  f.evidence = fmt::format(
      "median {} involuntary context switches per step (threshold {}); "
      "threads = {} on {} cores.",
      format_number(sw->median), kMaxInvoluntarySwitchesPerStep, threads,
      cores > 0 ? std::to_string(cores) : std::string("?"));
  std::optional<std::string> set;
  if (used > 1) set = valid_set(run, "threads", used - 1);
  f.suggestion = set ? *set +
                           " (leave a core to the loader and other processes) and check what "
                           "else runs on the host"
                     : "check what else runs on the host (the run uses one thread)";
  return f;
}

// On a CUDA run, the fused op that replaces op's passes, as "`--set key=true` (what it does)":
// model.fused_norm for a residual add or the LayerNorm / RMSNorm after it, model.fused_swiglu
// for llama's silu and its product; nullopt when none does, the run has it, or it is not valid.
std::optional<std::string> fused_op_set(const Run& run, const std::string& op) {
  struct FusedOp {
    const char* key;
    const char* what;
    std::set<std::string> ops;
  };
  static const FusedOp kFused[] = {
      {"model.fused_norm",
       "each residual add and the norm after it in one pass",
       {"aten::native_layer_norm", "aten::native_layer_norm_backward", "aten::add", "aten::add_",
        "aten::pow", "aten::rsqrt", "aten::mean"}},
      {"model.fused_swiglu",
       "silu(gate) * up in one pass",
       {"aten::silu", "aten::silu_backward", "aten::mul"}}};
  const auto device = run.config.find("device");
  if (device == run.config.end() || device->second.rfind("cuda", 0) != 0) return std::nullopt;
  for (const FusedOp& f : kFused) {
    if (!f.ops.count(op)) continue;
    const auto now = run.config.find(f.key);
    if (now != run.config.end() && now->second == "true") continue;
    if (auto set = valid_set(run, f.key, std::string("true"))) {
      return *set + " (" + f.what + ", llmprof's kernels)";
    }
  }
  return std::nullopt;
}

std::optional<Finding> rule_roofline(const Run& run, const RunMetrics& m) {
  const OpRow* top = nullptr;
  for (const auto& o : run.ops) {
    if (o.roofline.lost_ms && (!top || *o.roofline.lost_ms > *top->roofline.lost_ms)) top = &o;
  }
  const Stats* step = m.stat("step_ms");
  if (!top || !step || step->median <= 0) return std::nullopt;
  const double share = *top->roofline.lost_ms / step->median;
  if (share <= kRooflineLostMinShare) return std::nullopt;
  Finding f = make(run, "roofline", share, kRooflineLostMinShare, "fraction of step");
  const std::string& bound = top->roofline.bound;
  f.title = fmt::format("{} spends {} ms per step above the roofline ({}-bound)", top->op,
                        format_number(*top->roofline.lost_ms), bound.empty() ? "?" : bound);
  const double calls = top->calls.value_or(0);
  f.evidence = fmt::format(
      "ops.csv: {} ms of self time in {} calls against {} ms at the roofline ({} ms without a "
      "byte model, not counted as lost); {} GB/s and {} GFLOP/s achieved at {} FLOP/B; the lost "
      "time is {} of the {} ms median step (threshold {}).",
      format_number(top->self_ms.value_or(0)), format_number(calls),
      format_number(top->roofline.roofline_ms.value_or(0)),
      format_number(top->roofline.unmodelled_ms.value_or(0)),
      top->roofline.achieved_gb_per_s ? format_number(*top->roofline.achieved_gb_per_s) : "n/a",
      top->roofline.achieved_gflops_per_s ? format_number(*top->roofline.achieved_gflops_per_s)
                                          : "n/a",
      top->roofline.arithmetic_intensity ? format_number(*top->roofline.arithmetic_intensity)
                                         : "n/a",
      pct(share), format_number(step->median), pct(kRooflineLostMinShare));
  const bool fp32 =
      run.config.count("train.precision") == 0 || run.config.at("train.precision") == "fp32";
  const std::optional<std::string> bf16 =
      fp32 ? valid_set(run, "train.precision", std::string("bf16")) : std::nullopt;
  if (bound == "overhead") {
    f.suggestion = fmt::format(
        "fewer, larger calls: each of the {} calls takes {} us where the roofs allow {} us, so "
        "per-call overhead dominates; {} gives each call more work",
        format_number(calls), format_number(top->self_ms.value_or(0) / std::max(calls, 1.0) * 1e3),
        format_number(top->roofline.roofline_ms.value_or(0) / std::max(calls, 1.0) * 1e3),
        double_batch(run));
  } else if (bound == "memory") {
    const std::optional<std::string> fused = fused_op_set(run, top->op);
    f.suggestion =
        (fused ? *fused + "; " : std::string()) +
        "it moves more bytes than it computes on: fuse it with the elementwise ops around it "
        "(one pass over the data instead of several)" +
        (bf16 ? "; " + precision_experiment(run, *bf16, "halves its bytes") : std::string());
  } else {
    f.suggestion =
        "it sits under the compute roof: fewer FLOPs" +
        (bf16 ? "; " + precision_experiment(run, *bf16, "may raise the roof") : std::string());
  }
  return f;
}

std::optional<Finding> rule_precision(const Run& run, const RunMetrics&) {
  const bool fp32 =
      run.config.count("train.precision") == 0 || run.config.at("train.precision") == "fp32";
  if (!fp32 || !run.native_bf16 || !run.peak_bf16_flops_per_s || !run.peak_flops_per_s ||
      *run.peak_flops_per_s <= 0) {
    return std::nullopt;
  }
  const double ratio = *run.peak_bf16_flops_per_s / *run.peak_flops_per_s;
  if (ratio <= kBf16MinPeakRatio) return std::nullopt;
  Finding f = make(run, "precision", ratio, kBf16MinPeakRatio, "bf16 / fp32 matmul peak");
  f.title = "the run is fp32 on a CPU that computes bf16 natively";
  f.evidence = fmt::format(
      "env.json: the CPU has avx512_bf16 or amx_bf16; bf16 matmul peak {} GFLOP/s vs fp32 {} "
      "GFLOP/s = {}x, measured at the run's start (llmprof peak --precision bf16 measures it "
      "again).",
      format_number(*run.peak_bf16_flops_per_s * 1e-9), format_number(*run.peak_flops_per_s * 1e-9),
      format_number(ratio, 3));
  const std::optional<std::string> set = valid_set(run, "train.precision", std::string("bf16"));
  f.suggestion =
      precision_experiment(run, set ? *set : std::string("train.precision: bf16"),
                           "runs the matmuls in bf16 (weights and optimizer state stay fp32)") +
      "; compare the loss of both runs with `llmprof report --compare A B`";
  return f;
}

// ---------------------------------------------------------------------------------------------
// Data-parallel communication (comm_steps.csv)

namespace {

// The comm_steps rows the figures use: the steady steps (rundir::steady_steps).
std::vector<const rundir::CommStepRow*> comm_rows(const Run& run) {
  return rundir::steady_steps(run.comm_steps);
}

double phase_of(const rundir::CommStepRow& r, profile::Phase p) {
  switch (p) {
    case profile::Phase::kData:
      return r.data_ms;
    case profile::Phase::kForward:
      return r.forward_ms;
    case profile::Phase::kBackward:
      return r.backward_compute_ms;
    case profile::Phase::kOptimizer:
      return r.optimizer_ms;
    case profile::Phase::kEval:  // not a step phase
      break;
  }
  return 0;
}

// The phase in which `rank` exceeds the other ranks' median most (median over steps), if any.
std::optional<std::pair<profile::Phase, double>> excess_phase(
    const std::vector<const rundir::CommStepRow*>& rows, int64_t rank) {
  std::optional<std::pair<profile::Phase, double>> best;
  for (int p = 0; p < profile::kNumStepPhases; ++p) {
    const auto phase = static_cast<profile::Phase>(p);
    std::map<int64_t, std::pair<std::optional<double>, std::vector<double>>> by_step;
    for (const auto* r : rows) {
      auto& e = by_step[r->step];
      if (r->rank == rank) {
        e.first = phase_of(*r, phase);
      } else {
        e.second.push_back(phase_of(*r, phase));
      }
    }
    std::vector<double> excess;
    for (const auto& [step, e] : by_step) {
      if (e.first && !e.second.empty()) excess.push_back(*e.first - *median(e.second));
    }
    const auto m = median(excess);
    if (m && *m > 0 && (!best || *m > best->second)) best = {{phase, *m}};
  }
  return best;
}

constexpr double kMiB = 1024.0 * 1024.0;  // ddp.*bucket_mb are MiB (DDP's bucket_cap_mb)

// "12.5", "2", "0.0544": MiB for a --set and its words (three significant digits, no trailing
// zeros).
std::string mib_text(double mib) { return fmt::format("{:.3g}", mib); }

// "111.5 KiB", "2.21 MiB": a size in words.
std::string size_text(double bytes) {
  if (bytes < kMiB) return format_number(bytes / 1024, 4) + " KiB";
  return format_number(bytes / kMiB, 3) + " MiB";
}

// The last bucket layout (collectives.csv, rank 0, its last step): each bucket's bytes by index.
// Bucket 0 is all-reduced first (the last layers' gradients, ready first in backward; capped by
// ddp.first_bucket_mb), the others are capped by ddp.bucket_mb. Empty without collectives.csv.
std::vector<int64_t> last_layout_buckets(const Run& run) {
  int64_t step = -1;
  for (const auto* c : rundir::steady_steps(run.collectives)) {
    if (c->rank == 0) step = std::max(step, c->step);
  }
  std::map<int64_t, int64_t> by_bucket;
  for (const auto& c : run.collectives) {
    if (c.rank == 0 && c.step == step) by_bucket[c.bucket] = c.bytes;
  }
  std::vector<int64_t> out;
  for (const auto& [bucket, bytes] : by_bucket) out.push_back(bytes);
  return out;
}

// Communication hidden behind compute / all communication over the rows; nullopt without any.
std::optional<double> overlap_of(const std::vector<const rundir::CommStepRow*>& rows) {
  double hidden = 0, comm = 0;
  for (const auto* r : rows) {
    hidden += r->hidden_comm_ms;
    comm += r->comm_ms;
  }
  return comm > 0 ? std::optional<double>(hidden / comm) : std::nullopt;
}

// One bucket: overlap needs a second, so only a smaller first bucket can give the all-reduce
// something to hide behind. The evidence says why overlap is (near) zero.
std::string one_bucket_advice(
    const Run& run, Finding& f, double grad_bytes, bool overlap_on, std::optional<double> overlap) {
  const double first_mb = run.config_number("ddp.first_bucket_mb").value_or(1.0);
  f.evidence += fmt::format(
      " Overlap {}: the {} of gradients are one bucket (at most ddp.first_bucket_mb = {} MiB), "
      "so its all-reduce can only start after the whole backward.",
      overlap ? pct(*overlap) : "unknown", size_text(grad_bytes), mib_text(first_mb));
  const std::string half_mb = mib_text(grad_bytes / 2 / kMiB);
  if (!overlap_on) {
    return fmt::format(
        "ddp.overlap=true with a ddp.first_bucket_mb below {} (overlap needs two "
        "buckets or more)",
        half_mb);
  }
  const auto set = valid_set(run, "ddp.first_bucket_mb", half_mb);
  if (!set) return "";
  return *set +
         " (the first bucket, the last layers' gradients, closes at half of them: two buckets, "
         "the first all-reduced while backward computes the rest)";
}

// Two buckets or more: a smaller ddp.bucket_mb splits the buckets after the first only when one
// of them is above it. Halving it when that splits the largest; else half of the largest.
std::string smaller_buckets_advice(const Run& run, const std::vector<int64_t>& buckets) {
  const double bucket_mb = run.config_number("ddp.bucket_mb").value_or(25.0);
  const double largest = static_cast<double>(*std::max_element(buckets.begin() + 1, buckets.end()));
  const bool halving_splits = largest > bucket_mb / 2 * kMiB;
  const std::string mb = mib_text(halving_splits ? bucket_mb / 2 : largest / 2 / kMiB);
  const auto set = valid_set(run, "ddp.bucket_mb", mb);
  if (!set) return "";
  return *set + fmt::format(
                    " (the buckets after the first close at {} MiB: the largest, {}, splits, so "
                    "more of the all-reduce starts during backward and less is left after it; "
                    "{} buckets now{})",
                    mb, size_text(largest), buckets.size(),
                    halving_splits
                        ? ""
                        : fmt::format("; halving ddp.bucket_mb = {} MiB would change "
                                      "nothing, no bucket after the first is above {} MiB",
                                      mib_text(bucket_mb), mib_text(bucket_mb / 2)));
}

}  // namespace

std::optional<Finding> rule_exposed_comm(const Run& run, const RunMetrics&) {
  const auto rows = comm_rows(run);
  std::vector<double> exposed, step;
  for (const auto* r : rows) {
    exposed.push_back(r->exposed_comm_ms);
    step.push_back(r->step_ms);
  }
  const auto e = median(exposed), s = median(step);
  if (!e || !s || *s <= 0 || *e / *s <= kExposedCommMaxShare) return std::nullopt;
  Finding f = make(run, "exposed_comm", *e / *s, kExposedCommMaxShare, "fraction of step");
  f.title = "communication the step waits for (exposed all-reduce)";
  f.evidence = fmt::format(
      "exposed communication median {} ms of a {} ms step = {} (threshold "
      "{}), every rank, steps after the first bucket layout.",
      format_number(*e), format_number(*s), pct(*e / *s), pct(kExposedCommMaxShare));
  const auto overlap_key = run.config.find("ddp.overlap");
  const bool overlap_on = overlap_key == run.config.end() || overlap_key->second != "false";
  const std::vector<int64_t> buckets = last_layout_buckets(run);
  std::string buckets_advice;
  if (buckets.size() == 1) {
    buckets_advice =
        one_bucket_advice(run, f, static_cast<double>(buckets[0]), overlap_on, overlap_of(rows));
  } else if (!overlap_on) {
    buckets_advice =
        valid_set(run, "ddp.overlap", "true").value_or("ddp.overlap: true") +
        (buckets.empty() ? std::string(" (each bucket all-reduced as backward fills it)")
                         : fmt::format(" (each of the {} buckets all-reduced as backward fills "
                                       "it)",
                                       buckets.size()));
  } else if (buckets.size() > 1) {
    buckets_advice = smaller_buckets_advice(run, buckets);
  } else {
    f.evidence +=
        " No bucket layout in this run's inputs (collectives.csv): no bucket size is "
        "suggested.";
  }
  const int64_t accum = config_int(run, "train.grad_accum_steps", 1);
  const std::string more = nearest_valid_set(run, "train.grad_accum_steps", accum, accum * 2)
                               .value_or("more train.grad_accum_steps") +
                           " (one all-reduce per more compute; a larger global batch)";
  f.suggestion = buckets_advice.empty() ? more : buckets_advice + ", or " + more;
  return f;
}

std::optional<Finding> rule_straggler(const Run& run, const RunMetrics&) {
  // The straggler as summary.json and the report's table name it (rundir/comm_ranks.h).
  const auto rows = comm_rows(run);
  const std::vector<rundir::CommRankFigures> ranks = rundir::comm_rank_figures(run.comm_steps);
  const std::optional<int64_t> straggler = rundir::straggler_rank(ranks);
  if (!straggler) return std::nullopt;
  const int64_t rank = *straggler;
  std::vector<double> step;
  for (const auto* r : rows) step.push_back(r->step_ms);
  std::optional<double> l;
  for (const auto& r : ranks) {
    if (r.rank == rank) l = r.launch_lag_ms;
  }
  const auto s = median(step);
  if (!l || !s || *s <= 0 || *l / *s <= kStragglerMinShare) return std::nullopt;
  Finding f = make(run, "straggler", *l / *s, kStragglerMinShare, "fraction of step");
  const auto phase = excess_phase(rows, rank);
  const std::string where = phase ? std::string(profile::phase_name(phase->first)) : "";
  f.title = fmt::format("rank {} is the straggler{}", rank, phase ? " (" + where + ")" : "");
  f.evidence = fmt::format(
      "rank {} launches its all-reduces a median {} ms after the earliest "
      "rank, {} of a {} ms step (threshold {}); {}",
      rank, format_number(*l), pct(*l / *s), format_number(*s), pct(kStragglerMinShare),
      phase ? fmt::format("its {} takes {} ms more than the other ranks' "
                          "(median)",
                          where, format_number(phase->second))
            : "no phase of it is longer than the other ranks'");
  if (phase && phase->first == profile::Phase::kData) {
    const int64_t workers = config_int(run, "data.num_workers", 0);
    f.suggestion =
        nearest_valid_set(run, "data.num_workers", workers, workers == 0 ? 1 : workers * 2)
            .value_or("faster data loading on that rank");
  } else {
    f.suggestion = fmt::format(
        "look at rank {}'s host or device: other processes on its cores, "
        "a slower or throttled device, or uneven work in {}",
        rank, phase ? where : std::string("its step"));
  }
  return f;
}

// The largest bucket's all-reduce bus bandwidth (median over steps after the first layout) far
// below the roof `llmprof peak --comm` measured (profile.peak_busbw_bytes_per_s).
std::optional<Finding> rule_comm_bandwidth(const Run& run, const RunMetrics&) {
  const std::optional<double> roof = run.peak_busbw_bytes_per_s;
  if (!roof || *roof <= 0 || run.collectives.empty()) return std::nullopt;
  const std::vector<const rundir::CollectiveRow*> steady = rundir::steady_steps(run.collectives);
  int64_t largest = -1;
  double largest_bytes = 0;
  for (const auto* c : steady) {
    if (c->rank != 0) continue;
    if (static_cast<double>(c->bytes) > largest_bytes) {
      largest_bytes = static_cast<double>(c->bytes);
      largest = c->bucket;
    }
  }
  std::vector<double> busbw;
  for (const auto* c : steady) {
    if (c->rank != 0 || c->bucket != largest) continue;
    if (c->busbw_gb_per_s) busbw.push_back(*c->busbw_gb_per_s * 1e9);
  }
  const auto b = median(busbw);
  if (!b || *b / *roof >= kCommBandwidthMinShare) return std::nullopt;
  Finding f = make(run, "comm_bandwidth", *b / *roof, kCommBandwidthMinShare, "fraction of roof");
  f.title = "all-reduce far below the measured bus bandwidth";
  f.evidence = fmt::format(
      "the largest bucket ({} bytes) all-reduces at a median {} GB/s bus "
      "bandwidth, {} of the {} GB/s `llmprof peak --comm` measured "
      "(threshold {})",
      format_number(largest_bytes), format_number(*b / 1e9), pct(*b / *roof),
      format_number(*roof / 1e9), pct(kCommBandwidthMinShare));
  const double bucket_mb = run.config_number("ddp.bucket_mb").value_or(25.0);
  f.suggestion =
      valid_set(run, "ddp.bucket_mb", format_number(bucket_mb * 2, 3))
          .value_or("a larger ddp.bucket_mb") +
      " (larger messages reach more of the link's bandwidth: peak --comm's table gives busbw by "
      "size); if the bandwidth stays low, the link or other traffic on it is the limit";
  return f;
}

std::vector<Finding> run_findings(const Run& run, const RunMetrics& m) {
  using Rule = std::optional<Finding> (*)(const Run&, const RunMetrics&);
  static const Rule kRules[] = {rule_data_wait,      rule_eval_share,          rule_optimizer_share,
                                rule_attention_core, rule_low_mfu_small_batch, rule_memory_headroom,
                                rule_page_faults,    rule_context_switches,    rule_roofline,
                                rule_precision,      rule_plan_differs,        rule_exposed_comm,
                                rule_straggler,      rule_comm_bandwidth};
  std::vector<Finding> out;
  for (Rule rule : kRules) {
    if (auto f = rule(run, m)) {
      f->sets = sets_in(f->suggestion);
      for (const auto& set : f->sets) {
        f->experiment = f->experiment || set.rfind("train.precision=", 0) == 0;
      }
      out.push_back(std::move(*f));
    }
  }
  return out;
}

void attach_tried(std::vector<Finding>& findings, const std::vector<TriedSet>& tried) {
  for (Finding& f : findings) {
    for (const TriedSet& t : tried) {
      if (std::find(f.sets.begin(), f.sets.end(), t.set) != f.sets.end()) f.tried.push_back(t);
    }
  }
}

}  // namespace llmprof::report
