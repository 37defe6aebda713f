// The figures check knows and how each is read from a run directory.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "llmprof/check/check.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"

namespace llmprof::check {

namespace {

constexpr std::string_view kStepLossPrefix = "loss@";

FigureSpec spec(std::string name, std::string unit, Direction d, Kind k, std::string source) {
  return FigureSpec{std::move(name), std::move(unit), d, k, std::move(source)};
}

// A summary.json figure; null with a reason naming the file and the field when unknown.
Reading summary_value(const std::optional<double>& v, const std::string& file,
                      const std::string& field) {
  if (!v) return {std::nullopt, fmt::format("{} {} is null or absent", file, field)};
  return {v, ""};
}

rundir::Summary read_run_summary(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw DataError(fmt::format("{}: no such run directory", dir));
  }
  const std::string file = rundir::path(dir, rundir::kSummary);
  std::vector<rundir::InputWarning> warnings;
  std::optional<rundir::Summary> s = rundir::read_summary(file, warnings);
  if (!s) throw DataError(fmt::format("{}: missing or empty: the run did not finish", file));
  return *s;
}

std::optional<double> median_of(const std::optional<Summary>& stats) {
  return stats ? std::optional<double>(stats->median) : std::nullopt;
}

// timing.<phase>.median, throughput.<name>.median, mfu.value.median.
std::optional<double> timed_figure(const rundir::Summary& s, const std::string& n) {
  if (n == "tokens_per_s") return s.median_tokens_per_s();
  if (n == "samples_per_s") return s.throughput ? median_of(s.throughput->samples_per_s) : std::nullopt;
  if (n == "mfu") return s.median_mfu();
  if (!s.timing) return std::nullopt;
  if (n == "step_ms") return median_of(s.timing->step_ms);
  if (n == "forward_ms") return median_of(s.timing->forward_ms);
  if (n == "backward_ms") return median_of(s.timing->backward_ms);
  if (n == "optimizer_ms") return median_of(s.timing->optimizer_ms);
  return median_of(s.timing->data_ms);
}

// steps.csv's loss at step n (the last step for n = 0).
Reading step_loss(const std::string& dir, int64_t n) {
  const rundir::Run run = rundir::load_run(dir);
  const std::string file = rundir::path(dir, rundir::kSteps);
  // A step past the run's schedule.max_steps is not missing by chance: no rerun has it.
  if (run.summary_max_steps && n > *run.summary_max_steps) {
    throw UsageError(
        fmt::format("loss@{}: {} trains {} steps (summary.json steps.max_steps): it "
                    "has no step {}; gate a step up to {}",
                    n, dir, *run.summary_max_steps, n, *run.summary_max_steps));
  }
  if (run.steps.empty()) return {std::nullopt, file + " has no steps"};
  const rundir::StepRow* row = n == 0 ? &run.steps.back() : nullptr;
  for (const auto& s : run.steps) {
    if (s.step == n) row = &s;
  }
  if (row == nullptr) {
    return {std::nullopt, fmt::format("{} has no step {} (the run has {})", file, n,
                                      run.steps.back().step)};
  }
  if (!row->loss) return {std::nullopt, fmt::format("{} step {} has no loss", file, row->step)};
  return {row->loss, ""};
}

// The op calls of one recorded training step, summed over ops.csv (eval passes apart).
Reading op_calls(const std::string& dir) {
  const rundir::Run run = rundir::load_run(dir);
  double calls = 0;
  bool any = false;
  for (const auto& op : run.ops) {
    if (op.eval || !op.calls) continue;
    calls += *op.calls;
    any = true;
  }
  if (any) return {calls, ""};
  const std::string why = rundir::why_no_rows(run, config::ProfileLevel::kOps);
  return {std::nullopt, why.empty() ? rundir::path(dir, rundir::kOps) + " has no rows" : why};
}

}  // namespace

const std::vector<FigureSpec>& known_figures() {
  using D = Direction;
  using K = Kind;
  static const std::vector<FigureSpec> figures{
      spec("step_ms", "ms", D::kLowerIsBetter, K::kTiming, "summary.json timing.step_ms.median"),
      spec("forward_ms", "ms", D::kLowerIsBetter, K::kTiming,
           "summary.json timing.forward_ms.median"),
      spec("backward_ms", "ms", D::kLowerIsBetter, K::kTiming,
           "summary.json timing.backward_ms.median"),
      spec("optimizer_ms", "ms", D::kLowerIsBetter, K::kTiming,
           "summary.json timing.optimizer_ms.median"),
      spec("data_ms", "ms", D::kLowerIsBetter, K::kTiming, "summary.json timing.data_ms.median"),
      spec("tokens_per_s", "tokens/s", D::kHigherIsBetter, K::kTiming,
           "summary.json throughput.tokens_per_s.median"),
      spec("samples_per_s", "samples/s", D::kHigherIsBetter, K::kTiming,
           "summary.json throughput.samples_per_s.median"),
      spec("mfu", "", D::kHigherIsBetter, K::kTiming, "summary.json mfu.value.median"),
      spec("peak_rss_bytes", "bytes", D::kLowerIsBetter, K::kMemory,
           "summary.json memory.peak_rss_bytes"),
      spec("train_loss", "nats", D::kLowerIsBetter, K::kLoss,
           "summary.json loss.final_train_loss"),
      spec("val_loss", "nats", D::kLowerIsBetter, K::kLoss, "summary.json loss.final_val_loss"),
      spec("val_perplexity", "", D::kLowerIsBetter, K::kLoss,
           "summary.json loss.final_val_perplexity"),
      spec("step_loss", "nats", D::kLowerIsBetter, K::kLoss, "steps.csv loss of the last step"),
      spec("loss@N", "nats", D::kLowerIsBetter, K::kLoss, "steps.csv loss of step N"),
      spec("parameters", "", D::kLowerIsBetter, K::kExact, "summary.json parameters"),
      spec("flops_per_step", "FLOP", D::kLowerIsBetter, K::kExact,
           "summary.json flops.analytic_per_step"),
      spec("counted_flops_per_step", "FLOP", D::kLowerIsBetter, K::kExact,
           "summary.json flops.counted_matmul_per_step + counted_other_per_step"),
      spec("op_calls_per_step", "calls", D::kLowerIsBetter, K::kExact,
           "ops.csv calls of a training step, summed (profile.level=ops)"),
  };
  return figures;
}

FigureSpec find_figure(std::string_view name) {
  if (name.substr(0, kStepLossPrefix.size()) == kStepLossPrefix) {
    const std::string_view digits = name.substr(kStepLossPrefix.size());
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc() && end == digits.data() + digits.size() && n >= 1) {
      FigureSpec s = *std::find_if(known_figures().begin(), known_figures().end(),
                                   [](const FigureSpec& f) { return f.name == "loss@N"; });
      s.name = std::string(name);
      s.source = fmt::format("steps.csv loss of step {}", n);
      return s;
    }
  }
  std::vector<std::string> names;
  for (const auto& f : known_figures()) {
    if (f.name == name) return f;
    names.push_back(f.name);
  }
  throw UsageError(fmt::format("no figure '{}': the known figures are {}", name,
                               fmt::join(names, ", ")));
}

Reading read_figure(const std::string& dir, const FigureSpec& spec) {
  const std::string& n = spec.name;
  const rundir::Summary s = read_run_summary(dir);  // every figure needs a finished run
  if (n == "step_loss") return step_loss(dir, 0);
  if (n.rfind(kStepLossPrefix, 0) == 0) return step_loss(dir, std::stoll(n.substr(5)));
  if (n == "op_calls_per_step") return op_calls(dir);
  const std::string file = rundir::path(dir, rundir::kSummary);
  const auto at = [&](const std::optional<double>& v, const char* field) {
    return summary_value(v, file, field);
  };
  const std::optional<rundir::EvalLoss> eval =
      s.loss ? s.loss->eval : std::optional<rundir::EvalLoss>();
  if (n == "peak_rss_bytes") {
    return at(s.peak_rss_bytes ? std::optional<double>(static_cast<double>(*s.peak_rss_bytes))
                               : std::nullopt,
              "/memory/peak_rss_bytes");
  }
  if (n == "train_loss") return at(eval ? eval->train_loss : std::nullopt, "/loss/final_train_loss");
  if (n == "val_loss") return at(eval ? eval->val_loss : std::nullopt, "/loss/final_val_loss");
  if (n == "val_perplexity") {
    return at(eval ? eval->val_perplexity : std::nullopt, "/loss/final_val_perplexity");
  }
  if (n == "parameters") {
    return at(s.parameters ? std::optional<double>(static_cast<double>(*s.parameters))
                           : std::nullopt,
              "/parameters");
  }
  if (n == "flops_per_step") {
    return at(s.flops ? s.flops->analytic_per_step : std::nullopt, "/flops/analytic_per_step");
  }
  if (n == "counted_flops_per_step") {
    const std::optional<rundir::CountedFlops> c =
        s.flops ? s.flops->counted : std::optional<rundir::CountedFlops>();
    const Reading mm = at(c ? c->matmul_per_step : std::nullopt, "/flops/counted_matmul_per_step");
    const Reading other = at(c ? c->other_per_step : std::nullopt, "/flops/counted_other_per_step");
    if (!mm.value) return mm;
    if (!other.value) return other;
    return {*mm.value + *other.value, ""};
  }
  const std::string group = n == "tokens_per_s" || n == "samples_per_s" ? "/throughput/"
                            : n == "mfu"                               ? "/mfu/"
                                                                       : "/timing/";
  return summary_value(timed_figure(s, n), file,
                       group + (n == "mfu" ? std::string("value") : n) + "/median");
}

}  // namespace llmprof::check
