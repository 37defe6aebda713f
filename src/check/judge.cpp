// Both modes of check: two directories (runs, or sweeps point by point) and paired repetitions.
#include "judge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "llmprof/ab/train_trial.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"

namespace llmprof::check {

namespace {

constexpr double kAlpha = (1 - ab::kConfidence) / 2;  // one-sided, per family

// A point's figure: a run that did not finish has none, and says why.
Reading read_or_why(const std::string& dir, const FigureSpec& f) {
  if (dir.empty()) return {std::nullopt, "the point has no run directory"};
  try {
    return read_figure(dir, f);
  } catch (const DataError& e) {
    return {std::nullopt, e.what()};
  }
}

std::string point_key(const rundir::SweepPoint& p) {
  return fmt::format("{} repeat {}", fmt::join(p.key_values, ","), p.repeat);
}

void check_sweeps(const std::string& base, const std::string& cand,
                  const std::vector<Gate>& gates, CheckResult& out) {
  const rundir::Sweep a = rundir::load_sweep(base), b = rundir::load_sweep(cand);
  if (a.keys != b.keys) {
    throw DataError(fmt::format("{} sweeps {}, {} sweeps {}: the sweeps are not point for point "
                                "comparable",
                                base, fmt::join(a.keys, ","), cand, fmt::join(b.keys, ",")));
  }
  std::map<std::string, const rundir::SweepPoint*> by_key;
  for (const auto& p : b.points) by_key[point_key(p)] = &p;
  for (const auto& p : a.points) {
    const auto it = by_key.find(point_key(p));
    for (const Gate& g : gates) {
      const Reading rb = read_or_why(p.run_dir, g.figure);
      const Reading rc = it == by_key.end()
                             ? Reading{std::nullopt, "no point " + point_key(p) + " in " + cand}
                             : read_or_why(it->second->run_dir, g.figure);
      GateResult r = judge_pair(g, rb, rc);
      r.point = p.point_id;
      out.results.push_back(std::move(r));
    }
  }
}

// One timing gate from its pairs: the interval and the two one-sided p-values (fail, pass).
struct TimingJudgement {
  GateResult result;
  double p_fail = 1, p_pass = 1;
  int64_t pairs = 0;
};

// The sign tests of the median paired ratio m against the bound, as ratios (n pairs, exact):
//   max:    fail = H0 m <= bound rejected (pairs above);  pass = H0 m >= bound rejected (below)
//   min:    the mirror image
//   within: fail = H0 lo <= m <= hi rejected, two-sided (2 x the smaller one-sided p);
//           pass = H0 m outside rejected on both sides (intersection-union: the larger p)
void sign_tests(const Gate& g,
                double bound,
                const std::vector<double>& ratios,
                TimingJudgement& j) {
  const auto n = static_cast<int64_t>(ratios.size());
  const auto count = [&](auto pred) {
    return static_cast<int64_t>(std::count_if(ratios.begin(), ratios.end(), pred));
  };
  const auto above = [&](double x) { return count([x](double r) { return r > x; }); };
  const auto below = [&](double x) { return count([x](double r) { return r < x; }); };
  if (g.bound == Bound::kMax) {
    j.p_fail = ab::sign_test_p(n, above(bound));
    j.p_pass = ab::sign_test_p(n, below(bound));
  } else if (g.bound == Bound::kMin) {
    j.p_fail = ab::sign_test_p(n, below(bound));
    j.p_pass = ab::sign_test_p(n, above(bound));
  } else {
    const double lo = 2 - bound;  // within: |ratio - 1| <= bound - 1
    j.p_fail = std::min(
        1.0, 2 * std::min(ab::sign_test_p(n, above(bound)), ab::sign_test_p(n, below(lo))));
    j.p_pass = std::max(ab::sign_test_p(n, below(bound)), ab::sign_test_p(n, above(lo)));
  }
}

TimingJudgement judge_timing(const Gate& g,
                             const std::vector<double>& b,
                             const std::vector<double>& c) {
  TimingJudgement j;
  j.result.gate = g;
  j.pairs = static_cast<int64_t>(b.size());
  if (b.size() < static_cast<size_t>(ab::kMinRepetitions)) {
    j.result.reason = fmt::format(
        "{} pairs with a value: at least {} are needed for a {:g}% "
        "interval",
        b.size(), ab::kMinRepetitions, 100 * ab::kConfidence);
    return j;
  }
  const ab::Comparison cmp = ab::compare(b, c);
  j.result.baseline = cmp.baseline_median;
  j.result.candidate = cmp.candidate_median;
  j.result.ratio = cmp.median_paired_ratio;
  j.result.interval = cmp.interval;
  j.result.limit = (cmp.baseline_median + (g.relative ? cmp.baseline_median * g.amount : g.amount));
  sign_tests(g, *j.result.limit / cmp.baseline_median, ab::paired_ratios(b, c), j);
  return j;
}

}  // namespace

CheckResult check_dirs(const std::string& baseline, const std::string& candidate,
                       const std::vector<Gate>& gates) {
  CheckResult out;
  out.baseline = baseline;
  out.candidate = candidate;
  const bool bs = rundir::is_sweep_dir(baseline), cs = rundir::is_sweep_dir(candidate);
  if (bs != cs) {
    throw DataError(fmt::format("{} is a {}, {} a {}: compare a run with a run, a sweep with a "
                                "sweep",
                                baseline, bs ? "sweep" : "run", candidate, cs ? "sweep" : "run"));
  }
  if (bs) {
    check_sweeps(baseline, candidate, gates, out);
    return out;
  }
  for (const Gate& g : gates) {
    out.results.push_back(
        judge_pair(g, read_figure(baseline, g.figure), read_figure(candidate, g.figure)));
  }
  return out;
}

namespace {

// A point's non-timing gate from its first pair, as between two directories.
GateResult judge_first_pair(const Gate& g, size_t i, const PointRepetitions& p) {
  const auto reading = [&](const std::vector<RepetitionFigures>& arm) {
    if (arm.empty() || i >= arm[0].values.size() || !arm[0].values[i]) {
      return Reading{std::nullopt, arm.empty() ? "no repetitions"
                                               : "no value in " + arm[0].run_dir};
    }
    return Reading{arm[0].values[i], ""};
  };
  GateResult r = judge_pair(g, reading(p.baseline), reading(p.candidate));
  r.point = p.point;
  return r;
}

// The rounds where both arms have a positive value of gate i.
void paired_values(size_t i, const PointRepetitions& p, std::vector<double>& b,
                   std::vector<double>& c) {
  for (size_t k = 0; k < std::min(p.baseline.size(), p.candidate.size()); ++k) {
    const auto& bv = p.baseline[k].values;
    const auto& cv = p.candidate[k].values;
    if (i >= bv.size() || i >= cv.size()) continue;
    if (bv[i] && cv[i] && *bv[i] > 0 && *cv[i] > 0) {
      b.push_back(*bv[i]);
      c.push_back(*cv[i]);
    }
  }
}

// "median paired ratio 1.012, 96.9% interval [0.981, 1.050], bound 1.050 (spans the bound; Holm
// over 1 timing gate, p 0.34)". The p-values are exact sign-test ones (never 0: at least 2^-n).
std::string timing_reason(
    const GateResult& r, bool fail, bool pass, double p, const std::string& family) {
  return fmt::format(
      "median paired ratio {:.3f}, {:.1f}% interval [{:.3f}, {:.3f}], bound {:.3f} ({} the bound; "
      "{}, p {:.2g})",
      *r.ratio, 100 * r.interval->confidence, r.interval->low, r.interval->high,
      *r.limit / *r.baseline,
      fail   ? "beyond"
      : pass ? "inside"
             : "spans",
      family, p);
}

// Holm's first level in a family of m is alpha / m; n pairs reach at best p = 2^-n. When they
// cannot, no gate of the family can pass or fail: say how many rounds would.
std::string reach_note(int64_t pairs, size_t comparisons) {
  const double first_level = kAlpha / static_cast<double>(std::max<size_t>(comparisons, 1));
  const int64_t needed = ab::min_pairs_one_sided(first_level);
  if (pairs >= needed) return "";
  return fmt::format(
      "; {} pairs cannot reach Holm's first level {:.2g} (p >= 2^-{}): {} rounds "
      "can",
      pairs, first_level, pairs, needed);
}

std::string family_text(size_t comparisons, size_t points) {
  if (points <= 1) {
    return fmt::format("Holm over {} timing gate{}", comparisons, comparisons == 1 ? "" : "s");
  }
  return fmt::format("Holm over {} comparisons: {} points x timing gates", comparisons, points);
}

}  // namespace

std::vector<GateResult> judge_points(const std::vector<Gate>& gates,
                                     const std::vector<PointRepetitions>& points) {
  std::vector<GateResult> out(gates.size() * points.size());
  std::vector<size_t> slot;  // out's index of each timing judgement
  std::vector<TimingJudgement> judged;
  for (size_t p = 0; p < points.size(); ++p) {
    for (size_t i = 0; i < gates.size(); ++i) {
      const size_t at = p * gates.size() + i;
      if (gates[i].figure.kind != Kind::kTiming) {
        out[at] = judge_first_pair(gates[i], i, points[p]);
        continue;
      }
      std::vector<double> b, c;
      paired_values(i, points[p], b, c);
      slot.push_back(at);
      judged.push_back(judge_timing(gates[i], b, c));
      judged.back().result.point = points[p].point;
    }
  }
  // One family: every point's every timing gate (a regression found among many comparisons is
  // held to the stricter level Holm gives it).
  std::vector<double> p_fail, p_pass;
  for (const auto& j : judged) {
    p_fail.push_back(j.result.interval ? j.p_fail : 1.0);
    p_pass.push_back(j.result.interval ? j.p_pass : 1.0);
  }
  const std::vector<bool> fail = holm_reject(p_fail, kAlpha), pass = holm_reject(p_pass, kAlpha);
  const std::string family = family_text(judged.size(), points.size());
  for (size_t k = 0; k < judged.size(); ++k) {
    GateResult r = judged[k].result;
    r.alpha = kAlpha;
    if (r.interval) {
      r.outcome = fail[k] ? Outcome::kFail : pass[k] ? Outcome::kPass : Outcome::kInconclusive;
      r.reason =
          timing_reason(r, fail[k], pass[k], fail[k] ? judged[k].p_fail : judged[k].p_pass, family);
      r.reason += reach_note(judged[k].pairs, judged.size());
    }
    out[slot[k]] = std::move(r);
  }
  return out;
}

std::vector<GateResult> judge_repetitions(const std::vector<Gate>& gates,
                                          const std::vector<RepetitionFigures>& baseline,
                                          const std::vector<RepetitionFigures>& candidate) {
  return judge_points(gates, {PointRepetitions{"", baseline, candidate}});
}

bool is_sweep_command(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  for (const char ch : command) {
    if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else if (ch != '\'' && ch != '"') {
      word += ch;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& w = words[i];
    const size_t slash = w.rfind('/');
    if (w.substr(slash == std::string::npos ? 0 : slash + 1) == "llmprof" &&
        words[i + 1] == "sweep") {
      return true;
    }
  }
  return false;
}

namespace {

// Files one repetition's figures under its points: a run is the point "", a sweep each of its
// points (matched across rounds and arms by the swept values and the repeat).
void collect(const ab::Repetition& rep, const std::vector<Gate>& gates, size_t rounds,
             std::vector<std::string>& order, std::map<std::string, PointRepetitions>& points) {
  const auto file = [&](const std::string& key, const std::string& id, const std::string& dir) {
    auto [it, fresh] = points.try_emplace(key);
    if (fresh) {
      order.push_back(key);
      it->second.point = id;
      it->second.baseline.resize(rounds);
      it->second.candidate.resize(rounds);
    }
    RepetitionFigures f;
    f.run_dir = dir;
    for (const Gate& g : gates) f.values.push_back(read_or_why(dir, g.figure).value);
    auto& arm = rep.arm == ab::Arm::kBaseline ? it->second.baseline : it->second.candidate;
    arm[static_cast<size_t>(rep.round)] = std::move(f);
  };
  if (!rundir::is_sweep_dir(rep.run_dir)) {
    file("", "", rep.run_dir);
    return;
  }
  for (const rundir::SweepPoint& p : rundir::load_sweep(rep.run_dir).points) {
    file(point_key(p), p.point_id, p.run_dir);
  }
}

// The command line of one repetition: output into <scratch>/<name>.
std::string repetition_command(const std::string& cmd, const std::string& scratch,
                               const std::string& name) {
  if (is_sweep_command(cmd)) return fmt::format("{} --out '{}' --name '{}'", cmd, scratch, name);
  return fmt::format("{} --set 'output.dir={}' --set 'output.name={}'", cmd, scratch, name);
}

}  // namespace

// The fewest rounds whose gates can pass or fail: a 95% interval (ab::kMinRepetitions), and the
// sign test reaching Holm's first level over the timing gates (a sweep's points, known only once
// it ran, may raise this again: its gates then say so).
void check_ab_rounds(const AbCheckOptions& opts) {
  const auto timing =
      static_cast<size_t>(std::count_if(opts.gates.begin(), opts.gates.end(), [](const Gate& g) {
        return g.figure.kind == Kind::kTiming;
      }));
  const int64_t needed =
      std::max(ab::kMinRepetitions,
               ab::min_pairs_one_sided(kAlpha / static_cast<double>(std::max<size_t>(timing, 1))));
  if (opts.rounds < needed) {
    throw UsageError(fmt::format(
        "--repetitions {}: at least {} are needed ({} pairs give the order-statistic interval "
        "of the median paired ratio {:.1f}% confidence at best{})",
        opts.rounds, needed, opts.rounds,
        100 * (1 - 2 * ab::binomial_half_cdf(std::min<int64_t>(opts.rounds, 1000), 0)),
        timing > 1 ? fmt::format("; {} timing gates need {} for Holm's first level", timing, needed)
                   : ""));
  }
}

namespace {

// A command that wrote no run or sweep directory where it was told to is not an llmprof train or
// sweep command line: bad input, which no rerun fixes.
void check_wrote_run(const std::string& cmd, const std::string& run_dir, ab::Arm arm) {
  if (std::filesystem::is_directory(run_dir)) return;
  throw UsageError(fmt::format(
      "--ab: the {} command `{}` exited 0 but wrote no run directory ({}): give an `llmprof "
      "train` or `llmprof sweep` command line, to which check appends where to write",
      ab::arm_name(arm), cmd, run_dir));
}

}  // namespace

CheckResult check_ab(const AbCheckOptions& opts, const ab::OnRepetition& progress) {
  check_ab_rounds(opts);
  const auto run_one = [&](ab::Arm arm, int64_t round) {
    const std::string name = fmt::format("check-{}-{}", ab::arm_name(arm), round + 1);
    const std::string& cmd =
        arm == ab::Arm::kBaseline ? opts.baseline_command : opts.candidate_command;
    const std::string run_dir = rundir::path(opts.scratch_dir, name);
    const std::vector<std::string> argv{"/bin/sh", "-c",
                                        repetition_command(cmd, opts.scratch_dir, name)};
    // The engine's own figure is the repetition's wall time (the gates are read afterwards).
    const auto t0 = std::chrono::steady_clock::now();
    ab::Repetition rep = ab::run_argv_repetition(argv, run_dir, arm, round, std::nullopt);
    rep.figure =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    check_wrote_run(cmd, run_dir, arm);
    return rep;
  };
  const ab::AbResult ab = ab::run_ab(opts.rounds, run_one, progress);
  std::vector<std::string> order;
  std::map<std::string, PointRepetitions> by_key;
  for (const ab::Repetition& rep : ab.repetitions) {
    collect(rep, opts.gates, static_cast<size_t>(opts.rounds), order, by_key);
  }
  std::vector<PointRepetitions> points;
  for (const std::string& key : order) points.push_back(std::move(by_key[key]));
  CheckResult out;
  out.repetitions = true;
  out.baseline = opts.baseline_command;
  out.candidate = opts.candidate_command;
  out.rounds = opts.rounds;
  out.results = judge_points(opts.gates, points);
  return out;
}

}  // namespace llmprof::check
