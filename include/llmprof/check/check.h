// llmprof check: a run's figures against a baseline's, as a pass/fail a CI system reads.
//
// Every figure has a direction (lower or higher is better) and a kind. Deterministic figures
// (parameters, FLOPs, op calls per step: exactly; losses at threads=1 with one seed: within a
// stated tolerance) and memory are gated from two run directories. Timing is gated only from
// interleaved repetitions (check_ab: the A/B engine of llmprof/ab): between two directories it is
// reported, never gated, since the same step on a shared runner varies 50% minutes apart, which
// one run's per-step spread cannot see.
//
// A gate is one bound on one figure: --max step_ms=+5%, --min tokens_per_s=-5%,
// --within loss@20=1e-4. Amounts are relative (%) or absolute; an amount without a sign is the
// move allowed in the figure's bad direction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/ab/ab.h"
#include "llmprof/ab/stats.h"
#include "llmprof/config/enums.h"

namespace llmprof::check {

enum class Direction : int { kLowerIsBetter = 0, kHigherIsBetter = 1 };
// timing: gated from repetitions only; memory, loss, exact: from two directories too.
enum class Kind : int { kTiming = 0, kMemory = 1, kLoss = 2, kExact = 3 };
enum class Bound : int { kMax = 0, kMin = 1, kWithin = 2 };
// reported: a timing figure read from two directories (never gated).
enum class Outcome : int { kPass = 0, kFail = 1, kInconclusive = 2, kReported = 3 };

}  // namespace llmprof::check

namespace llmprof::config {
LLMPROF_ENUM_NAMES(check::Direction, "direction", "lower", "higher");
LLMPROF_ENUM_NAMES(check::Kind, "kind", "timing", "memory", "loss", "exact");
LLMPROF_ENUM_NAMES(check::Bound, "bound", "max", "min", "within");
LLMPROF_ENUM_NAMES(check::Outcome, "outcome", "pass", "fail", "inconclusive", "reported");
}  // namespace llmprof::config

namespace llmprof::check {

// Exit codes of `llmprof check` (2, bad input, is llmprof's usual one).
inline constexpr int kExitPass = 0;
inline constexpr int kExitRegression = 3;
inline constexpr int kExitInconclusive = 4;

struct FigureSpec {
  std::string name;        // "step_ms", or "loss@20" (a step's loss)
  std::string unit;        // "ms", "bytes", "" ...
  Direction direction = Direction::kLowerIsBetter;
  Kind kind = Kind::kExact;
  std::string source;      // where it is read: "summary.json timing.step_ms.median"
};

// Every figure check knows, in table order (loss@N stands for any step N).
const std::vector<FigureSpec>& known_figures();

// The figure `name` stands for (loss@N with N >= 1 too). Throws UsageError listing the known
// figures for any other name.
FigureSpec find_figure(std::string_view name);

// One figure of one run: its value, or why it has none (null with a reason, never 0).
struct Reading {
  std::optional<double> value;
  std::string why_missing;
};

// Reads figure `spec` from run directory `dir`. Throws DataError naming the file for a missing
// directory, a run without summary.json or a malformed file; UsageError for loss@N past the run's
// schedule.max_steps (bad input: no rerun has that step).
Reading read_figure(const std::string& dir, const FigureSpec& spec);

struct Gate {
  FigureSpec figure;
  Bound bound = Bound::kMax;
  bool relative = false;  // amount is a fraction of the baseline's value
  double amount = 0;      // signed: +0.05 = 5% more is allowed (max); -0.05 = 5% less (min)
  std::string text;       // as written: "step_ms=+5%"
};

// Parses "name=amount" for a bound (amount: [+-]number[%]). Throws UsageError naming the text:
// for a figure not known (listing the known ones), an amount that does not parse, a bound that
// contradicts the figure's direction (--max on a higher-is-better figure), a negative --within.
Gate parse_gate(Bound bound, std::string_view text);

// The gates used when none are given: deterministic figures and memory for two directories,
// step_ms for repetitions.
std::vector<Gate> default_gates(bool repetitions);

// One gate's verdict at one point (a run, or a sweep point).
struct GateResult {
  Gate gate;
  std::string point;  // "" for runs; the sweep point's id otherwise
  std::optional<double> baseline, candidate;
  std::optional<double> limit;  // the candidate's bound in the figure's unit (two directories)
  std::optional<double> ratio;  // candidate / baseline (repetitions: median paired ratio)
  std::optional<ab::Interval> interval;  // repetitions: of the median paired ratio (>= 95%)
  double alpha = 0;                      // repetitions: the one-sided level Holm left this gate
  Outcome outcome = Outcome::kInconclusive;
  std::string reason;  // one line: why this outcome
};

struct CheckResult {
  bool repetitions = false;         // check_ab (true) or two directories
  std::string baseline, candidate;  // directories, or the two commands
  int64_t rounds = 0;
  std::vector<GateResult> results;
  std::string command;  // the llmprof check command line, for the outputs
};

// The exit code results say: 3 on any failure, else 4 on any inconclusive gate, else 0.
int exit_code_of(const CheckResult& r);

// Two run directories, or two sweep directories point by point (matched by the swept values and
// the repeat). Timing gates are reported, never gated. Throws DataError for missing or unreadable
// inputs, or a run and a sweep given together.
CheckResult check_dirs(const std::string& baseline, const std::string& candidate,
                       const std::vector<Gate>& gates);

// One repetition's readings, figure by figure (the gates' order).
struct RepetitionFigures {
  std::vector<std::optional<double>> values;
  std::string run_dir;
};

// Judges gates from paired repetitions (baseline[i] and candidate[i] ran in the same round):
// timing gates by the median paired ratio, its order-statistic interval and exact sign tests
// against the bound, corrected over the timing
// gates by Holm (pass when the gate's interval lies inside the bound, fail when beyond it,
// inconclusive when it spans it); other gates from the first pair, as between two directories.
std::vector<GateResult> judge_repetitions(const std::vector<Gate>& gates,
                                          const std::vector<RepetitionFigures>& baseline,
                                          const std::vector<RepetitionFigures>& candidate);

// One point's paired repetitions: a run's (point "") or one sweep point's (its point id), the
// rounds in order; a round without the point holds no values.
struct PointRepetitions {
  std::string point;
  std::vector<RepetitionFigures> baseline, candidate;
};

// judge_repetitions point by point: every point's timing gates form one family, corrected by Holm
// over points x timing gates; other gates from each point's first pair.
std::vector<GateResult> judge_points(const std::vector<Gate>& gates,
                                     const std::vector<PointRepetitions>& points);

// Whether a command line runs `llmprof sweep` (a word whose file name is llmprof, then `sweep`):
// check_ab appends --out and --name to it instead of output.dir and output.name.
bool is_sweep_command(std::string_view command);

// Two commands run alternately (A B B A ...) for `rounds` rounds, each an `llmprof train` command
// line to which output.dir and output.name are appended as --set (so it must end with llmprof
// train's arguments), or two `llmprof sweep` command lines (is_sweep_command: --out and --name
// appended) judged point by point; run by /bin/sh. Judged by judge_points.
struct AbCheckOptions {
  std::string baseline_command, candidate_command;
  int64_t rounds = 10;
  std::vector<Gate> gates;
  std::string scratch_dir;  // repetitions write <scratch_dir>/check-<arm>-<round>[.log]
};

// Throws UsageError for rounds below ab::kMinRepetitions, or below what Holm's first level over
// the timing gates needs (2^-n <= 0.025 / timing gates), naming the minimum.
void check_ab_rounds(const AbCheckOptions& opts);

// Throws UsageError for rounds below ab::kMinRepetitions (or below what Holm's first level over
// the timing gates needs) and for a command that exits 0 without writing its run directory,
// ab::RepetitionError naming the arm and
// log when a command fails, Interrupted on a stop signal.
CheckResult check_ab(const AbCheckOptions& opts, const ab::OnRepetition& progress = {});

// Holm's step-down over one-sided p-values: which hypotheses are rejected at family level alpha.
std::vector<bool> holm_reject(const std::vector<double>& p_values, double alpha);

// Renderings: one line per gate (text), a Markdown table (GitHub's step summary), JSON, JUnit XML
// (a testcase per gate: failures carry both values, the interval and the command).
std::string render_text(const CheckResult& r);
std::string render_markdown(const CheckResult& r);
std::string render_json(const CheckResult& r);
std::string render_junit(const CheckResult& r);

}  // namespace llmprof::check
