#include "llmprof/tune/tune.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "llmprof/ab/train_trial.h"
#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/device.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/plan/plan.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/telemetry/energy_monitor.h"
#include "llmprof/tune/space.h"
#include "sets_util.h"

namespace llmprof::tune {

namespace {

using detail::key_of;
using detail::plus;
using detail::value_of;

namespace fs = std::filesystem;

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot read the config");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ab::Figure figure_of(const std::string& objective) {
  if (objective == "tokens_per_s") return ab::Figure::kStepUsPerToken;
  if (objective == "step_ms") return ab::Figure::kMedianStepMs;
  if (objective == "energy_per_token") return ab::Figure::kEnergyJPerToken;
  throw UsageError(
      fmt::format("--objective {}: give tokens_per_s, step_ms or energy_per_token", objective));
}

// --objective energy_per_token, checked before anything runs: a repetition's energy comes from
// the sensors train's energy monitor finds with the config's energy section (RAPL under
// energy.sysfs_root, NVML from energy.nvml_library, the energy.cpu_tdp_w estimate), so the same
// probe here says whether there is any. No source, energy off, or ranks that share this host's
// sensors (rank 0's summary counts them against its own tokens) are bad input. Returns the notes
// for tune.json: the source, and that an estimate is one.
std::vector<std::string> energy_objective_notes(const TuneOptions& o, const config::Config& base) {
  if (o.objective != "energy_per_token") return {};
  const std::string flag = "--objective energy_per_token";
  if (!base.energy.enabled) {
    throw UsageError(flag + ": energy.enabled=false measures no energy; set energy.enabled=true");
  }
  if (o.nproc > 1) {
    throw UsageError(fmt::format(
        "{} with --nproc {}: the ranks share this host's energy sensors, which rank 0's "
        "summary.json counts against its own tokens only; give --nproc 1, or objective "
        "tokens_per_s",
        flag, o.nproc));
  }
  const telemetry::EnergyMonitor probe(base.energy, /*max_duration_s=*/1);
  if (!probe.has_energy()) {
    throw UsageError(fmt::format("{}: {}; race tokens_per_s or step_ms on this machine", flag,
                                 probe.no_energy_reason()));
  }
  const std::string source = probe.source_label();
  std::vector<std::string> notes = {
      fmt::format("{}: each repetition's energy from {} over its wall time, per token of every "
                  "step (summary.json energy.tokens_per_j)",
                  flag, source)};
  if (source.find("estimate") != std::string::npos) {
    notes.push_back(flag +
                    ": the figure is an estimate (energy.cpu_tdp_w x utilisation), "
                    "not a measurement");
  }
  return notes;
}

int64_t trial_steps(const config::Config& cfg, std::optional<int64_t> wanted) {
  const int64_t least = cfg.profile.warmup_steps + kMeasuredStepsAtLeast;
  if (wanted) {
    if (*wanted < least) {
      throw UsageError(fmt::format(
          "--steps {}: profile.warmup_steps = {} leaves fewer than {} measured steps; give at "
          "least {}",
          *wanted, cfg.profile.warmup_steps, kMeasuredStepsAtLeast, least));
    }
    return *wanted;
  }
  return std::max(std::min(cfg.schedule.max_steps, kDefaultTuneSteps), least);
}

Machine machine_of(const TuneOptions& o, const config::Config& base) {
  Machine m;
  const std::string name =
      o.device.empty() ? std::string(config::name(base.device.kind)) : o.device;
  m.device = plan::find_device(name);  // UsageError listing the known names
  m.cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  m.nproc = o.nproc;
  m.vocab_size = plan::tokenizer_vocab_size(base);
  plan::PlanOptions p;
  p.vocab_size = m.vocab_size;
  p.world_size = o.nproc;
  p.cuda = m.device.cuda;
  try {
    m.largest_batch = plan::largest_batch(base, p, m.device.usable_bytes());
  } catch (const ConfigError&) {
    m.largest_batch = 0;  // unknown: the batch knob is not bounded by the planner
  }
  return m;
}

// The planner's verdict on a candidate (null with the reason when it cannot plan it), its config
// being the config with plan_sets and the candidate's.
void plan_candidate(rundir::TuneCandidate& c,
                    const TuneOptions& o,
                    const Machine& m,
                    const std::vector<std::string>& plan_sets) {
  const std::string& device = m.device.name;
  try {
    const config::Config cfg = config::load_config(o.config_path, plus(plan_sets, c.sets));
    plan::PlanOptions p;
    p.vocab_size = m.vocab_size;
    p.world_size = o.nproc;
    p.cuda = m.device.cuda;
    const plan::MemoryPlan plan = plan::plan_memory(cfg, p);
    c.planned_peak_bytes = plan.peak_reserved_bytes;
    c.planned_fits = plan.peak_reserved_bytes <= m.device.usable_bytes();
    c.plan_note = fmt::format("{} of {} usable on {}", plan::bytes_text(plan.peak_reserved_bytes),
                              plan::bytes_text(m.device.usable_bytes()), device);
    if (!*c.planned_fits) {
      c.outcome = "does_not_fit";
      c.reason = "does not fit, planned: " + c.plan_note;
    }
  } catch (const ConfigError& e) {
    c.plan_note = std::string("the planner cannot plan it: ") + e.what();
  }
}

// A CUDA device named for a config that trains elsewhere (--device h100-80gb on a CPU config):
// the space and the plans are the named device's, the config with device=cuda. A candidate the
// config cannot train on its own device (a GPU-only knob) is planned, never measured here.
std::vector<std::string> plan_sets_of(const TuneOptions& o,
                                      const config::Config& base,
                                      const Machine& m,
                                      std::vector<std::string>& notes) {
  // The named device has CUDA's caching allocator and the config's device has it too: the same.
  if (!m.device.cuda || device::capabilities(base.device).caching_allocator) return o.sets;
  notes.push_back(fmt::format(
      "--device {}: the space and the plans are the CUDA device's (device=cuda); candidates "
      "that need it are planned, not measured: the config trains on {}",
      m.device.name, config::name(base.device.kind)));
  return plus(o.sets, {"device=cuda"});
}

void mark_unmeasurable(rundir::TuneCandidate& c, const TuneOptions& o) {
  if (c.outcome != "pending") return;
  try {
    config::load_config(o.config_path, plus(o.sets, c.sets));
  } catch (const ConfigError& e) {
    c.outcome = "unmeasured";
    c.reason = fmt::format(
        "not on the config's device: {}; measure it with --set device=cuda on a GPU host",
        e.what());
  }
}

// tune.json's knobs: each with its values' sets and its largest predicted effect.
std::vector<rundir::TuneKnob> tune_knobs(const std::vector<Knob>& knobs) {
  std::vector<rundir::TuneKnob> out;
  for (const Knob& k : knobs) {
    rundir::TuneKnob t{k.key, {}, std::string(numerics_name(k.numerics)), std::nullopt, ""};
    double best = 1;
    for (const KnobValue& v : k.values) {
      std::string sets;
      for (const std::string& s : v.sets) sets += (sets.empty() ? "" : " ") + s;
      t.values.push_back(sets);
      if (std::abs(std::log(v.prediction.ratio)) >= std::abs(std::log(best))) {
        best = v.prediction.ratio;
        t.prediction_source = v.prediction.source;
      }
    }
    t.predicted_ratio = best;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

double parse_budget_s(const std::string& text) {
  const auto bad = [&] {
    return UsageError(fmt::format(
        "--budget {}: give a duration such as 90s, 20m, 1h or 1h30m (or seconds)", text));
  };
  if (text.empty()) throw bad();
  double total = 0, number = 0;
  bool digits = false, unit_seen = false;
  for (char ch : text) {
    if (ch >= '0' && ch <= '9') {
      number = number * 10 + (ch - '0');
      digits = true;
      continue;
    }
    const double unit = ch == 'h' ? 3600 : ch == 'm' ? 60 : ch == 's' ? 1 : 0;
    if (unit == 0 || !digits) throw bad();
    total += number * unit;
    number = 0;
    digits = false;
    unit_seen = true;
  }
  if (digits) {
    if (unit_seen) throw bad();  // "1h30": 30 of what
    total += number;
  }
  if (total <= 0) throw bad();
  return total;
}

std::string tune_dir(const TuneOptions& o) {
  if (!o.out_dir.empty()) return o.out_dir;
  const config::Config base = config::load_config(o.config_path, o.sets);
  return rundir::path(base.output.dir, "tune-" + fs::path(o.config_path).stem().string());
}

rundir::TuneDoc plan_search(const TuneOptions& o) {
  const ab::Figure figure = figure_of(o.objective);
  if (o.nproc < 1) throw UsageError(fmt::format("--nproc {}: give 1 or more", o.nproc));
  if (!(o.loss_tolerance >= 0)) {
    throw UsageError(fmt::format("--loss-tolerance {}: give 0 or more", o.loss_tolerance));
  }
  const config::Config base = config::load_config(o.config_path, o.sets);
  const Machine m = machine_of(o, base);
  rundir::TuneDoc d;
  d.notes = energy_objective_notes(o, base);
  d.inputs = {o.config_path,
              file_text(o.config_path),
              o.sets,
              o.space,
              o.objective,
              std::string(ab::figure_name(figure)),
              trial_steps(base, o.steps),
              o.keep_numerics,
              o.loss_tolerance,
              m.device.name,
              o.nproc};
  d.budget_s = o.budget_s;
  const std::vector<std::string> plan_sets = plan_sets_of(o, base, m, d.notes);
  std::vector<Knob> knobs = o.space.empty() ? default_space(o.config_path, plan_sets, m)
                                            : parse_space(o.config_path, plan_sets, o.space, m);
  if (o.keep_numerics) {
    for (const std::string& k : keep_numerics_only(knobs)) {
      d.notes.push_back("--keep-numerics: " + k + " changes the numerics, not searched");
    }
  }
  if (knobs.empty()) throw UsageError("tune: nothing to search: the space has no knob left");
  d.knobs = tune_knobs(knobs);
  int64_t id = 0;
  for (const CandidateSets& cs : candidates_of(knobs, o.config_path, plan_sets)) {
    rundir::TuneCandidate c;
    c.id = ++id;
    c.sets = cs.sets;
    c.numerics = std::string(numerics_name(cs.numerics));
    c.predicted_ratio = cs.prediction.ratio;
    c.prediction_source = cs.prediction.source;
    c.outcome = "pending";
    plan_candidate(c, o, m, plan_sets);
    mark_unmeasurable(c, o);
    d.candidates.push_back(std::move(c));
  }
  const auto count = [&](const char* outcome) {
    return std::count_if(d.candidates.begin(), d.candidates.end(),
                         [&](const rundir::TuneCandidate& c) { return c.outcome == outcome; });
  };
  if (count("pending") + count("unmeasured") == 0) {
    throw UsageError(fmt::format(
        "tune: nothing in the space fits {} ({} candidates, each planned over its usable "
        "memory); give smaller values or another --device",
        m.device.name, d.candidates.size()));
  }
  if (count("pending") == 0 && !o.plan_only) {
    throw UsageError(fmt::format(
        "tune: nothing to measure here: every candidate that fits {} needs a CUDA device the "
        "config does not train on; give --plan-only, or --set device=cuda on a GPU host",
        m.device.name));
  }
  return d;
}

}  // namespace llmprof::tune
