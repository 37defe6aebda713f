// run_tune: the planned search resumed or started, measured by short `llmprof train`
// repetitions, and the tune directory written (llmprof/tune/tune.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "llmprof/ab/train_trial.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/tune/search.h"
#include "llmprof/tune/tune.h"

namespace llmprof::tune {

namespace {

namespace fs = std::filesystem;

// The last train-step loss of a finished repetition (a data-parallel one: the ranks' mean).
std::optional<double> loss_of(const std::string& run_dir) {
  std::vector<rundir::InputWarning> warnings;
  const auto s = rundir::read_summary(rundir::path(run_dir, rundir::kSummary), warnings);
  if (!s) return std::nullopt;
  if (s->final_global_train_loss) return s->final_global_train_loss;
  return s->loss ? s->loss->final_train_step_loss : std::nullopt;
}

// A repetition: `llmprof train` of the config with the --sets, the trial's own (steps, no eval,
// no checkpoint) and the candidate's. Its run directory goes once read; its log stays.
Measure train_measure(const TuneOptions& o, const rundir::TuneDoc& doc, const std::string& dir) {
  const std::string scratch = rundir::path(dir, "trials");
  fs::create_directories(scratch);
  ab::TrainTrial base;
  base.executable = o.executable;
  base.config_path = o.config_path;
  base.common_sets = o.sets;
  for (const char* s :
       {"train.eval_interval=0", "train.save_checkpoint=false", "train.checkpoint_interval=0"}) {
    base.common_sets.push_back(s);
  }
  base.common_sets.push_back(fmt::format("schedule.max_steps={}", doc.inputs.steps));
  base.scratch_dir = scratch;
  base.figure = *ab::parse_figure(doc.inputs.figure);
  base.nproc = o.nproc;
  return [base](const rundir::TuneCandidate& c, ab::Arm arm, int64_t round) {
    ab::TrainTrial trial = base;
    trial.candidate_sets = c.sets;
    trial.tag = fmt::format("c{}", c.id);
    const std::string run_dir = rundir::path(
        trial.scratch_dir, fmt::format("{}-{}-{}", trial.tag, ab::arm_name(arm), round));
    std::error_code ec;
    fs::remove_all(run_dir, ec);  // a repetition a kill left half-written
    const auto start = std::chrono::steady_clock::now();
    const ab::Repetition r = ab::run_train_repetition(trial, arm, round);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Measurement m{r.figure, loss_of(r.run_dir), seconds, rundir::run_log_path(r.run_dir), r.ranks};
    fs::remove_all(r.run_dir, ec);
    return m;
  };
}

// The search resumed: a tune.json of the same inputs gives its candidates' repetitions back.
void resume_from(rundir::TuneDoc& doc, const std::string& file) {
  const rundir::TuneDoc old = rundir::read_tune_doc(file);
  if (!(old.inputs == doc.inputs)) {
    throw UsageError(fmt::format(
        "{}: a search of other inputs (config, --set, --space, --objective, --steps, "
        "--keep-numerics, --loss-tolerance, --device or --nproc differ); give the same command "
        "to resume it, or another --out",
        file));
  }
  for (rundir::TuneCandidate& c : doc.candidates) {
    for (const rundir::TuneCandidate& was : old.candidates) {
      if (was.sets != c.sets || c.outcome == "does_not_fit") continue;
      c.repetitions = was.repetitions;
      c.seconds = was.seconds;
      if (was.outcome == "out_of_memory" || was.outcome == "failed" || was.outcome == "dropped") {
        c.outcome = was.outcome;
        c.reason = was.reason;
      }
      compare_candidate(c, doc.inputs.loss_tolerance);  // its figures, from its repetitions
    }
  }
  doc.seconds_spent = old.seconds_spent;
  doc.notes.push_back(fmt::format(
      "resumed: {} repetitions ({:.0f} s) from the earlier session",
      [&] {
        size_t n = 0;
        for (const auto& c : doc.candidates) n += c.repetitions.size();
        return n;
      }(),
      old.seconds_spent));
}

std::string tuned_yaml(const TuneOptions& o, const rundir::TuneDoc& doc, const std::string& dir) {
  std::vector<std::string> sets = o.sets;
  std::string header = "# llmprof tune: the starting config (no candidate was clearly faster)\n";
  for (const rundir::TuneCandidate& c : doc.candidates) {
    if (!doc.winner || c.id != *doc.winner) continue;
    sets.insert(sets.end(), c.sets.begin(), c.sets.end());
    header = fmt::format("# llmprof tune: candidate {}, {}\n", c.id, speed_text(doc, c));
  }
  header +=
      fmt::format("# search: {}\n# config: {}\n", rundir::path(dir, rundir::kTune), o.config_path);
  return header + config::to_yaml(config::load_config(o.config_path, sets));
}

void write_tables(const rundir::TuneDoc& doc, const std::string& dir) {
  output::write_file_atomic(rundir::path(dir, rundir::kTuneTable), tune_table_markdown(doc));
  output::write_file_atomic(rundir::path(dir, rundir::kTuneHtml), tune_html(doc));
  output::write_file_atomic(rundir::path(dir, rundir::kTuneChart), tune_chart_svg(doc));
}

}  // namespace

rundir::TuneDoc run_tune(const TuneOptions& o, const OnProgress& on_progress) {
  rundir::TuneDoc doc = plan_search(o);
  const std::string dir = tune_dir(o);
  fs::create_directories(dir);
  const std::string file = rundir::path(dir, rundir::kTune);
  if (fs::exists(file)) resume_from(doc, file);
  if (o.plan_only) {
    for (rundir::TuneCandidate& c : doc.candidates) {
      if (c.outcome != "pending") continue;
      c.outcome = "unmeasured";
      c.reason = "--plan-only";
    }
    doc.status = "plan_only";
    const auto fits =
        std::count_if(doc.candidates.begin(), doc.candidates.end(),
                      [](const rundir::TuneCandidate& c) { return c.planned_fits == true; });
    doc.planner_check = fmt::format(
        "{} planned to fit, {} planned not to fit, {} the planner could not plan; none run", fits,
        std::count_if(doc.candidates.begin(), doc.candidates.end(),
                      [](const rundir::TuneCandidate& c) { return c.planned_fits == false; }),
        std::count_if(doc.candidates.begin(), doc.candidates.end(),
                      [](const rundir::TuneCandidate& c) { return !c.planned_fits; }));
    doc.conclusion = "planned only: nothing measured";
    rundir::write_tune_doc(file, doc);
    write_tables(doc, dir);
    return doc;
  }
  if (o.executable.empty()) throw UsageError("tune: no llmprof executable to run repetitions");
  const Measure measure = train_measure(o, doc, dir);
  auto save = [&](const rundir::TuneDoc& d) { rundir::write_tune_doc(file, d); };
  try {
    search(doc, measure, o.search, on_progress, save);
  } catch (const Interrupted&) {
    doc.status = "interrupted";
    save(doc);
    throw;
  }
  output::write_file_atomic(rundir::path(dir, rundir::kTunedConfig), tuned_yaml(o, doc, dir));
  write_tables(doc, dir);
  return doc;
}

}  // namespace llmprof::tune
