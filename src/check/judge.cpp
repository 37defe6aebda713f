// Both modes of check: two directories (runs, or sweeps point by point) and paired repetitions.
#include "judge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
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
};

TimingJudgement judge_timing(const Gate& g, const std::vector<double>& b,
                             const std::vector<double>& c) {
  TimingJudgement j;
  j.result.gate = g;
  if (b.size() < static_cast<size_t>(ab::kMinRepetitions)) {
    j.result.reason = fmt::format("{} pairs with a value: at least {} are needed", b.size(),
                                  ab::kMinRepetitions);
    return j;
  }
  const ab::Comparison cmp = ab::compare(b, c);
  j.result.baseline = cmp.baseline_median;
  j.result.candidate = cmp.candidate_median;
  j.result.ratio = cmp.ratio_of_medians;
  j.result.interval = cmp.interval;
  j.result.limit = (cmp.baseline_median + (g.relative ? cmp.baseline_median * g.amount : g.amount));
  const double bound = *j.result.limit / cmp.baseline_median;  // as a ratio
  const std::vector<double> ratios = ab::bootstrap_ratios(b, c);
  const double n = static_cast<double>(ratios.size());
  const auto below = static_cast<double>(
      std::upper_bound(ratios.begin(), ratios.end(), bound) - ratios.begin());  // <= bound
  if (g.bound == Bound::kMax) {
    j.p_fail = below / n;       // evidence against "regressed beyond the bound"
    j.p_pass = 1 - below / n;
  } else if (g.bound == Bound::kMin) {
    const auto strictly_below = static_cast<double>(
        std::lower_bound(ratios.begin(), ratios.end(), bound) - ratios.begin());
    j.p_fail = 1 - strictly_below / n;
    j.p_pass = strictly_below / n;
  } else {
    const double lo = 2 - bound;  // within: |ratio - 1| <= bound - 1
    const auto inside = static_cast<double>(std::count_if(
        ratios.begin(), ratios.end(), [&](double r) { return r >= lo && r <= bound; }));
    j.p_fail = inside / n;
    j.p_pass = 1 - inside / n;
  }
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

std::vector<GateResult> judge_repetitions(const std::vector<Gate>& gates,
                                          const std::vector<RepetitionFigures>& baseline,
                                          const std::vector<RepetitionFigures>& candidate) {
  std::vector<GateResult> out(gates.size());
  std::vector<size_t> timing;
  std::vector<TimingJudgement> judged;
  for (size_t i = 0; i < gates.size(); ++i) {
    const Gate& g = gates[i];
    if (g.figure.kind != Kind::kTiming) {
      const auto reading = [&](const std::vector<RepetitionFigures>& arm) {
        if (arm.empty() || !arm[0].values.at(i)) {
          return Reading{std::nullopt, arm.empty() ? "no repetitions"
                                                   : "no value in " + arm[0].run_dir};
        }
        return Reading{arm[0].values[i], ""};
      };
      out[i] = judge_pair(g, reading(baseline), reading(candidate));
      continue;
    }
    std::vector<double> b, c;
    for (size_t k = 0; k < std::min(baseline.size(), candidate.size()); ++k) {
      const auto& vb = baseline[k].values.at(i);
      const auto& vc = candidate[k].values.at(i);
      if (vb && vc && *vb > 0 && *vc > 0) {
        b.push_back(*vb);
        c.push_back(*vc);
      }
    }
    timing.push_back(i);
    judged.push_back(judge_timing(g, b, c));
  }
  std::vector<double> p_fail, p_pass;
  for (const auto& j : judged) {
    p_fail.push_back(j.result.interval ? j.p_fail : 1.0);
    p_pass.push_back(j.result.interval ? j.p_pass : 1.0);
  }
  const std::vector<bool> fail = holm_reject(p_fail, kAlpha), pass = holm_reject(p_pass, kAlpha);
  for (size_t k = 0; k < judged.size(); ++k) {
    GateResult r = judged[k].result;
    r.alpha = kAlpha;
    if (r.interval) {
      r.outcome = fail[k] ? Outcome::kFail : pass[k] ? Outcome::kPass : Outcome::kInconclusive;
      r.reason = fmt::format(
          "ratio of medians {:.3f}, 95% interval [{:.3f}, {:.3f}], bound {:.3f} ({} the bound; "
          "Holm over {} timing gate{}, p {:.4f})",
          *r.ratio, r.interval->low, r.interval->high, *r.limit / *r.baseline,
          fail[k] ? "beyond" : pass[k] ? "inside" : "spans", judged.size(),
          judged.size() == 1 ? "" : "s", fail[k] ? judged[k].p_fail : judged[k].p_pass);
    }
    out[timing[k]] = std::move(r);
  }
  return out;
}

CheckResult check_ab(const AbCheckOptions& opts, const ab::OnRepetition& progress) {
  if (opts.rounds < ab::kMinRepetitions) {
    throw UsageError(fmt::format("--repetitions {}: at least {} are needed for an interval",
                                 opts.rounds, ab::kMinRepetitions));
  }
  const auto run_one = [&](ab::Arm arm, int64_t round) {
    const std::string name = fmt::format("check-{}-{}", ab::arm_name(arm), round + 1);
    const std::string& cmd =
        arm == ab::Arm::kBaseline ? opts.baseline_command : opts.candidate_command;
    const std::string run_dir = rundir::path(opts.scratch_dir, name);
    const std::vector<std::string> argv{
        "/bin/sh", "-c",
        fmt::format("{} --set 'output.dir={}' --set 'output.name={}'", cmd, opts.scratch_dir,
                    name)};
    // The engine's own figure is the repetition's wall time (the gates are read afterwards).
    const auto t0 = std::chrono::steady_clock::now();
    ab::Repetition rep = ab::run_argv_repetition(argv, run_dir, arm, round, std::nullopt);
    rep.figure = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count();
    return rep;
  };
  const ab::AbResult ab = ab::run_ab(opts.rounds, run_one, progress);
  std::vector<RepetitionFigures> base(static_cast<size_t>(opts.rounds)),
      cand(static_cast<size_t>(opts.rounds));
  for (const ab::Repetition& rep : ab.repetitions) {
    RepetitionFigures f;
    f.run_dir = rep.run_dir;
    for (const Gate& g : opts.gates) f.values.push_back(read_or_why(rep.run_dir, g.figure).value);
    (rep.arm == ab::Arm::kBaseline ? base : cand)[static_cast<size_t>(rep.round)] = std::move(f);
  }
  CheckResult out;
  out.repetitions = true;
  out.baseline = opts.baseline_command;
  out.candidate = opts.candidate_command;
  out.rounds = opts.rounds;
  out.results = judge_repetitions(opts.gates, base, cand);
  return out;
}

}  // namespace llmprof::check
