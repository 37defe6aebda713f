#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/ab/ab.h"
#include "llmprof/ab/train_trial.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/plot/html_charts.h"
#include "llmprof/process/child.h"
#include "llmprof/report/html.h"
#include "llmprof/report/report.h"
#include "llmprof/report/try.h"
#include "llmprof/rundir/files.h"

namespace llmprof::cli {

namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> compare;
  std::string format = "md";
  std::string out_path;
  std::string gnuplot = "gnuplot";
  std::string try_run;  // --try RUN
  int64_t repetitions = report::kDefaultTryRepetitions;
  std::optional<int64_t> try_steps;
};

// "1.23 us/token" and the like: a repetition's figure with its unit.
std::string figure_text(ab::Figure f, double v) {
  const char* unit = f == ab::Figure::kMedianStepMs      ? "ms"
                     : f == ab::Figure::kEnergyJPerToken ? "J/token"
                                                         : "us/token";
  return fmt::format("{:.4g} {}", v, unit);
}

// One planned A/B, with progress on stderr; its tried.json entry, or the failure that stopped it
// (a repetition train refused or that crashed; ranks a trial cannot start here). A stop signal
// passes through.
report::TriedSet run_one_try(const report::PlannedTry& p,
                             size_t index,
                             size_t count,
                             int64_t repetitions,
                             const std::string& command) {
  const std::string head = fmt::format("try {}/{} `--set {}`", index + 1, count, p.set);
  if (!p.ranks.untried.empty()) {
    fmt::print(stderr, "{}: not tried: {}\n", head, p.ranks.untried);
    return report::untried_of(p, p.ranks.untried, output::local_time_now("%Y-%m-%dT%H:%M:%S%z"),
                              command);
  }
  const int64_t nproc = p.trial.nproc;
  fmt::print(stderr, "{}: {} rounds of baseline and candidate, {} steps each{} ({})\n", head,
             repetitions, p.steps,
             nproc > 1 ? fmt::format(", {} ranks per arm (--nproc {})", nproc, nproc) : "",
             ab::figure_name(p.trial.figure));
  auto run_rep = [&](ab::Arm arm, int64_t round) {
    return ab::run_train_repetition(p.trial, arm, round);
  };
  auto progress = [&](const ab::Repetition& r, int64_t done, int64_t total) {
    fmt::print(stderr, "  [{}/{}] {} {}: {}{}\n", done, total, ab::arm_name(r.arm), r.round + 1,
               figure_text(p.trial.figure, r.figure),
               r.ranks > 1 ? fmt::format(" ({} rank processes)", r.ranks) : "");
  };
  const std::string now = output::local_time_now("%Y-%m-%dT%H:%M:%S%z");
  try {
    const ab::AbResult result = ab::run_ab(repetitions, run_rep, progress);
    report::TriedSet t = report::tried_of(p, result, now, command);
    fmt::print(stderr, "{}: {}\n", head, report::tried_text(t));
    return t;
  } catch (const ab::RepetitionError& e) {
    if (e.arm() == ab::Arm::kBaseline) {  // the run's own config: every other try would fail too
      throw Error(
          fmt::format("--try: the run's own config does not train from here: {}", e.what()));
    }
    fmt::print(stderr, "{}: not measured: {}\n", head, e.what());
    return report::untried_of(p, e.what(), now, command);
  }
}

// --try RUN: every --set its findings suggest, as an A/B; tried.json written after each, so a
// stop keeps what finished. The scratch directory goes unless a repetition failed (its logs stay).
void try_suggestions(const ReportArgs& args) {
  if (args.repetitions < ab::kMinRepetitions) {
    throw UsageError(fmt::format("--repetitions {}: at least {} are needed for a {:g}% interval",
                                 args.repetitions, ab::kMinRepetitions, 100 * ab::kConfidence));
  }
  report::ReportOptions ropts;
  ropts.inputs = {args.try_run};
  const report::Document doc = report::build_report(ropts);
  const rundir::Run run = rundir::load_run(args.try_run);
  report::TryOptions topts;
  topts.steps = args.try_steps;
  topts.executable = process::self_executable();
  std::vector<report::PlannedTry> plan = report::plan_tries(run, doc.findings, topts);
  if (plan.empty()) {
    fmt::print(stderr, "--try: no finding of {} suggests a --set: nothing to try\n", args.try_run);
    return;
  }
  const std::string scratch = ab::make_scratch_dir();
  for (auto& p : plan) p.trial.scratch_dir = scratch;
  std::string command = fmt::format("llmprof report --try {} --repetitions {} --try-steps {}",
                                    args.try_run, args.repetitions, plan.front().steps);
  std::vector<report::TriedSet> done;
  report::read_tried(args.try_run);  // a tried.json it cannot rewrite fails before any training
  bool failed = false;
  for (size_t i = 0; i < plan.size(); ++i) {
    done.push_back(run_one_try(plan[i], i, plan.size(), args.repetitions, command));
    failed = failed || !done.back().comparison;
    report::write_tried(args.try_run, done);
  }
  fmt::print(stderr, "--try: {} written\n", rundir::path(args.try_run, rundir::kTried));
  if (failed) {
    fmt::print(stderr, "--try: logs of the repetitions kept in {}\n", scratch);
  } else {
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
  }
}

// The html page: the document with the charts `llmprof plot` draws for the same directories and
// each input's config and environment files. Charts left out are said on stderr too.
std::string html_page(const report::Document& doc,
                      const report::ReportOptions& opts,
                      const std::string& gnuplot) {
  std::vector<std::string> dirs = opts.inputs;
  for (const auto& d : opts.compare) {
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  }
  report::HtmlExtras extras;
  extras.charts = plot::draw_html_charts(dirs, gnuplot);
  if (!extras.charts.left_out.empty()) {
    fmt::print(stderr, "warning: charts left out of the page: {}\n", extras.charts.left_out);
  }
  extras.files = report::read_input_files(opts);
  return report::render_html(doc, extras);
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  auto* sub = app.add_subcommand(
      "report",
      "Tables, comparisons and findings (with --set suggestions) from run and sweep dirs");
  sub->add_option("dirs", args->inputs, "Run or sweep directories");
  sub->add_option("--compare", args->compare,
                  "Compare two runs A B side by side: B/A ratios, significance vs per-step noise")
      ->expected(2);
  sub->add_option("--format,-f", args->format,
                  "Output format: md (default), csv (long: "
                  "table,row,column,value), json or html (one self-contained page with charts)");
  sub->add_option("--out,-o", args->out_path, "Write to FILE (atomically) instead of stdout");
  sub->add_option("--gnuplot", args->gnuplot,
                  "html: gnuplot program drawing the charts (name on PATH or path)");
  sub->add_option("--try", args->try_run,
                  "Measure each --set the findings of RUN suggest: an A/B of short trainings of "
                  "RUN's config.yaml, baseline and baseline + the set run alternately; the "
                  "verdicts go to RUN/tried.json and into every later report of RUN")
      ->type_name("RUN");
  sub->add_option("--repetitions", args->repetitions,
                  "--try: rounds of each A/B (each round trains both arms once; default and "
                  "least 6, a 95% interval)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000}));
  sub->add_option("--try-steps", args->try_steps,
                  "--try: schedule.max_steps of each training (default: the run's, at most 30)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000000}));
  sub->footer(
      "Examples:\n"
      "  llmprof report runs/quickstart-20261122-123357\n"
      "  llmprof report runs/a runs/b --format json --out report.json\n"
      "  llmprof report --compare runs/baseline runs/candidate\n"
      "  llmprof report sweeps/batch-lr\n"
      "  llmprof report runs/a --format html --out report.html\n"
      "  llmprof report --try runs/a --repetitions 6 --try-steps 20\n"
      "html is one file that loads nothing else: tables (click a column title to sort), charts\n"
      "inlined as SVG (drawn by gnuplot; without it the page says why they were left out),\n"
      "findings and each run's config.yaml and env.json. Like the other formats it goes to\n"
      "stdout without --out.\n"
      "--try trains from the current directory (relative data paths in config.yaml mean what\n"
      "they meant for the run) into a scratch directory under the system's temp directory; the\n"
      "figure is the step time per token (the wall time per token for eval settings), the\n"
      "verdict the order-statistic interval (at least 95%, the confidence achieved printed) of "
      "the\n"
      "median paired ratio over the rounds: faster, slower (not advised) or inconclusive (the\n"
      "interval spans no change). The report of RUN follows.\n"
      "Each arm is a fresh short run of RUN's config (no checkpoints, no resume); a data-parallel\n"
      "run's arms train its ranks (--nproc N) and tried.json keeps each verdict's world size.\n"
      "A run cut short (a partial last row, an empty file) is reported from what is whole, with\n"
      "a warning naming the file and line. Exit codes: 0 ok, 2 missing directory or malformed\n"
      "file (named with its line).");
  sub->callback([args, &exit_code]() {
    report::Format format = report::parse_format(args->format);
    report::ReportOptions opts;
    opts.inputs = args->inputs;
    if (!args->try_run.empty()) {
      try_suggestions(*args);
      if (std::find(opts.inputs.begin(), opts.inputs.end(), args->try_run) == opts.inputs.end()) {
        opts.inputs.insert(opts.inputs.begin(), args->try_run);
      }
    }
    opts.compare = args->compare;
    report::Document doc = report::build_report(opts);
    // Parts cut short were left out: say so on stderr too, where --out or a pipe still shows it.
    for (const auto& w : doc.warnings) fmt::print(stderr, "warning: {}: {}\n", w.run, w.text());
    std::string text = format == report::Format::kHtml ? html_page(doc, opts, args->gnuplot)
                                                       : report::render(doc, format);
    if (args->out_path.empty()) {
      fmt::print("{}", text);
    } else {
      output::write_file_atomic(args->out_path, text);
      fmt::print(stderr, "report written to {}\n", args->out_path);
    }
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
