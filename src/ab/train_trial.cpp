#include "llmprof/ab/train_trial.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "llmprof/error.h"
#include "llmprof/process/child.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"

namespace llmprof::ab {

namespace {

namespace fs = std::filesystem;

// The last non-empty line of a log, "" when there is none.
std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last;
}

// (sum of step_ms + eval_ms) / sum of tokens over every step of the run, in us per token.
double wall_us_per_token(const std::string& run_dir) {
  const rundir::Run run = rundir::load_run(run_dir);
  double ms = 0, tokens = 0;
  for (const auto& s : run.steps) {
    ms += s.step_ms.value_or(0) + s.eval_ms.value_or(0);
    tokens += s.tokens.value_or(0);
  }
  if (tokens <= 0) {
    throw DataError(fmt::format("{}: no tokens column to divide the wall time by",
                                rundir::path(run_dir, rundir::kSteps)));
  }
  return ms * 1e3 / tokens;
}

std::string name_of(const TrainTrial& trial, Arm arm, int64_t round) {
  return fmt::format("{}-{}-{}", trial.tag, arm_name(arm), round + 1);
}

// summary.json of dir, or a DataError naming it when it is missing or empty.
rundir::Summary summary_of(const std::string& dir) {
  const std::string path = rundir::path(dir, rundir::kSummary);
  std::vector<rundir::InputWarning> warnings;
  std::optional<rundir::Summary> s = rundir::read_summary(path, warnings);
  if (!s) throw DataError(path + ": missing or empty");
  return std::move(*s);
}

}  // namespace

double read_figure(const std::string& run_dir, Figure figure) {
  const std::string path = rundir::path(run_dir, rundir::kSummary);
  std::vector<rundir::InputWarning> warnings;
  const std::optional<rundir::Summary> s = rundir::read_summary(path, warnings);
  if (!s) throw DataError(path + ": missing or empty: the repetition did not finish");
  if (s->status != config::RunStatus::kCompleted) {
    throw DataError(fmt::format("{}: status {}{}, not completed", path,
                                s->status ? config::name(*s->status) : "missing",
                                s->message.empty() ? "" : " (" + s->message + ")"));
  }
  switch (figure) {
    case Figure::kMedianStepMs:
      if (s->median_step_ms() && *s->median_step_ms() > 0) return *s->median_step_ms();
      throw DataError(path + ": no timing.step_ms median");
    case Figure::kStepUsPerToken:
      if (s->median_tokens_per_s() && *s->median_tokens_per_s() > 0) {
        return 1e6 / *s->median_tokens_per_s();
      }
      throw DataError(path + ": no throughput tokens_per_s median");
    case Figure::kEnergyJPerToken:
      if (s->energy && s->energy->tokens_per_j && *s->energy->tokens_per_j > 0) {
        return 1 / *s->energy->tokens_per_j;
      }
      throw DataError(fmt::format(
          "{}: no energy.tokens_per_j ({})", path,
          s->energy && !s->energy->reason.empty() ? s->energy->reason : "no energy section"));
    case Figure::kWallUsPerToken:
      break;
  }
  return wall_us_per_token(run_dir);
}

std::vector<std::string> train_argv(const TrainTrial& trial, Arm arm, int64_t round) {
  std::vector<std::string> argv{trial.executable, "train", "--config", trial.config_path};
  for (const auto& s : trial.common_sets) argv.insert(argv.end(), {"--set", s});
  if (arm == Arm::kCandidate) {
    for (const auto& s : trial.candidate_sets) argv.insert(argv.end(), {"--set", s});
  }
  argv.insert(argv.end(), {"--set", "output.dir=" + trial.scratch_dir, "--set",
                           "output.name=" + name_of(trial, arm, round), "--quiet"});
  if (trial.nproc > 1) argv.insert(argv.end(), {"--nproc", std::to_string(trial.nproc)});
  return argv;
}

int64_t trained_ranks(const std::string& run_dir) {
  if (!fs::exists(rundir::path(run_dir, "rank0"))) return 1;
  const rundir::Summary top = summary_of(run_dir);
  const int64_t world = top.distributed ? top.distributed->world_size : 0;
  int64_t ranks = 0;
  for (; fs::exists(rundir::path(run_dir, fmt::format("rank{}", ranks))); ++ranks) {
    const std::string dir = rundir::path(run_dir, fmt::format("rank{}", ranks));
    const rundir::Summary mine = summary_of(dir);
    const auto& d = mine.distributed;
    if (!d || d->rank != ranks || d->world_size != world) {
      throw DataError(fmt::format(
          "{}: not rank {} of the world size {} that {} gives (distributed: rank {}, world size "
          "{})",
          rundir::path(dir, rundir::kSummary), ranks, world,
          rundir::path(run_dir, rundir::kSummary), d && d->rank ? std::to_string(*d->rank) : "null",
          d ? d->world_size : 0));
    }
  }
  return ranks;
}

Repetition run_argv_repetition(const std::vector<std::string>& argv,
                               const std::string& run_dir,
                               Arm arm,
                               int64_t round,
                               std::optional<Figure> figure) {
  Repetition rep;
  rep.arm = arm;
  rep.round = round;
  rep.run_dir = run_dir;
  const std::string log = rundir::run_log_path(rep.run_dir);
  // In this process group: a Ctrl-C reaches train too, which records its end and exits 130.
  process::ChildSpec child;
  child.argv = argv;
  child.name = "a repetition";
  child.output = process::Output::kLog;
  child.log_path = log;
  const process::Exit end = process::exit_of(process::wait_exit(process::spawn(child).pid));
  if (process::is_stop_request(end)) {
    throw Interrupted(fmt::format("A/B: stopped by a signal during the {} repetition {} ({})",
                                  arm_name(arm), round + 1, log));
  }
  if (process::is_failure(end)) {
    const std::string exit = end.kind == process::Exit::Kind::kExited
                                 ? fmt::format("exit {}", end.code)
                                 : fmt::format("signal {}", end.code);
    throw RepetitionError(fmt::format("A/B: the {} repetition {} failed ({}): {} (log {})",
                                      arm_name(arm), round + 1, exit, last_line(log), log),
                          arm);
  }
  if (!figure) return rep;
  try {
    rep.figure = read_figure(rep.run_dir, *figure);
  } catch (const DataError& e) {
    throw RepetitionError(
        fmt::format("A/B: the {} repetition {}: {}", arm_name(arm), round + 1, e.what()), arm);
  }
  return rep;
}

Repetition run_train_repetition(const TrainTrial& trial, Arm arm, int64_t round) {
  Repetition rep = run_argv_repetition(train_argv(trial, arm, round),
                                       rundir::path(trial.scratch_dir, name_of(trial, arm, round)),
                                       arm, round, trial.figure);
  try {
    rep.ranks = trained_ranks(rep.run_dir);
  } catch (const DataError& e) {
    throw RepetitionError(
        fmt::format("A/B: the {} repetition {}: {}", arm_name(arm), round + 1, e.what()), arm);
  }
  const int64_t wanted = std::max<int64_t>(trial.nproc, 1);
  if (rep.ranks != wanted) {
    throw RepetitionError(
        fmt::format("A/B: the {} repetition {} trained {} rank process{}, not the run's {} ({})",
                    arm_name(arm), round + 1, rep.ranks, rep.ranks == 1 ? "" : "es", wanted,
                    rep.run_dir),
        arm);
  }
  return rep;
}

std::string make_scratch_dir() {
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  std::string pattern = ((ec ? fs::path("/tmp") : tmp) / "llmprof-ab-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw IoError(
        fmt::format("cannot create a scratch directory '{}': {}", pattern, std::strerror(errno)));
  }
  return pattern;
}

}  // namespace llmprof::ab
