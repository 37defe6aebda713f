#include "llmprof/tune/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "llmprof/ab/stats.h"
#include "llmprof/ab/train_trial.h"
#include "llmprof/base/stats.h"
#include "llmprof/error.h"

namespace llmprof::tune {

namespace {

using rundir::TuneCandidate;
using rundir::TuneDoc;

struct BudgetSpent {};  // the next repetition would not fit the budget

std::string sets_text(const TuneCandidate& c) {
  std::string s;
  for (const std::string& set : c.sets) s += (s.empty() ? "" : " ") + set;
  return s;
}

std::string interval_text(const TuneCandidate& c) {
  if (!c.ratio) return "not measured";
  return c.ci_low ? fmt::format("{:.3f} [{:.3f}, {:.3f}]", *c.ratio, *c.ci_low, *c.ci_high)
                  : fmt::format("{:.3f} (no interval yet)", *c.ratio);
}

// The objective's words: a lower figure is faster, or (energy_per_token) less energy per token.
struct Words {
  const char* is_better;    // "<candidate> is faster than the start"
  const char* better;       // "no candidate measured faster than it"
  const char* worse;        // "slower than the start: ..."
  const char* not_clearly;  // "..., not clearly faster"
};
Words words_of(const TuneDoc& d) {
  if (d.inputs.objective == "energy_per_token") {
    return {"uses less energy per token than", "less energy per token than",
            "more energy per token than", "not clearly less energy per token"};
  }
  return {"is faster than", "faster than", "slower than", "not clearly faster"};
}

bool racing(const TuneCandidate& c) { return c.outcome == "pending" || c.outcome == "measured"; }

double mean_repetition_s(const TuneDoc& doc) {
  double sum = 0;
  int64_t n = 0;
  for (const TuneCandidate& c : doc.candidates) {
    for (const rundir::TuneRepetition& r : c.repetitions) {
      sum += r.seconds;
      ++n;
    }
  }
  return n > 0 ? sum / static_cast<double>(n) : 0;
}

int64_t repetitions_in(const TuneDoc& doc) {
  int64_t n = 0;
  for (const TuneCandidate& c : doc.candidates) n += static_cast<int64_t>(c.repetitions.size());
  return n;
}

// Whether an earlier session of a resumed search already closed the rung of `rounds`: one of
// its candidates was dropped there (its complete rounds are that rung's). Closing it again over
// the survivors alone would halve them once more: resumed, the search takes the same path.
bool closed_earlier(const TuneDoc& doc, const std::vector<TuneCandidate*>& alive, int64_t rounds) {
  for (const TuneCandidate& c : doc.candidates) {
    const bool racing_now = std::find(alive.begin(), alive.end(), &c) != alive.end();
    if (!racing_now && c.outcome == "dropped" && c.rounds == rounds) return true;
  }
  return false;
}

class Searcher {
 public:
  Searcher(TuneDoc& doc,
           const Measure& m,
           const SearchOptions& o,
           const OnProgress& p,
           const OnChange& ch)
      : doc_(doc), measure_(m), options_(o), on_progress_(p), on_change_(ch) {}

  void run();

 private:
  bool extend(TuneCandidate& c, int64_t rounds, double reserve_s);
  ab::Repetition one(TuneCandidate& c, ab::Arm arm, int64_t round, int64_t rounds, double reserve);
  void drop(std::vector<TuneCandidate*>& alive, bool halve);
  void decide(std::vector<TuneCandidate*>& alive);
  void changed() {
    if (on_change_) on_change_(doc_);
  }
  int64_t left() const {
    return std::count_if(doc_.candidates.begin(), doc_.candidates.end(), racing);
  }

  TuneDoc& doc_;
  const Measure& measure_;
  const SearchOptions& options_;
  const OnProgress& on_progress_;
  const OnChange& on_change_;
  bool budget_spent_ = false;
};

ab::Repetition Searcher::one(
    TuneCandidate& c, ab::Arm arm, int64_t round, int64_t rounds, double reserve_s) {
  const std::string arm_name(ab::arm_name(arm));
  for (const rundir::TuneRepetition& r : c.repetitions) {
    if (r.arm == arm_name && r.round == round) return {arm, round, r.figure, "", 1};
  }
  const bool first = repetitions_in(doc_) == 0;
  if (!first && doc_.seconds_spent + mean_repetition_s(doc_) + reserve_s > doc_.budget_s) {
    throw BudgetSpent{};
  }
  if (on_progress_) {
    on_progress_({fmt::format("candidate {} `{}`: {} round {}/{}", c.id, sets_text(c), arm_name,
                              round + 1, rounds),
                  left(), doc_.seconds_spent, doc_.budget_s});
  }
  const Measurement m = measure_(c, arm, round);
  c.repetitions.push_back({arm_name, round, m.figure, m.loss, m.seconds, m.log, m.ranks});
  c.seconds += m.seconds;
  doc_.seconds_spent += m.seconds;
  changed();
  if (first && 2 * m.seconds > doc_.budget_s) {
    throw UsageError(fmt::format(
        "--budget {:.0f}s: one round (the start and a candidate) takes about 2 x {:.1f} s here; "
        "give at least {:.0f}s",
        doc_.budget_s, m.seconds, std::ceil(4 * m.seconds)));
  }
  return {arm, round, m.figure, "", 1};
}

// Extends c's A/B to `rounds` rounds; false when the budget stopped it.
bool Searcher::extend(TuneCandidate& c, int64_t rounds, double reserve_s) {
  auto run_one = [&](ab::Arm arm, int64_t round) { return one(c, arm, round, rounds, reserve_s); };
  try {
    ab::run_ab(rounds, run_one);
  } catch (const BudgetSpent&) {
    compare_candidate(c, doc_.inputs.loss_tolerance);
    budget_spent_ = true;
    return false;
  } catch (const ab::RepetitionError& e) {
    if (e.arm() == ab::Arm::kBaseline) throw;
    const std::string what = e.what();
    const bool oom = what.find("out of memory") != std::string::npos ||
                     what.find("OutOfMemory") != std::string::npos;
    c.outcome = oom ? "out_of_memory" : "failed";
    c.reason = what;
    compare_candidate(c, doc_.inputs.loss_tolerance);
    changed();
    return true;
  }
  compare_candidate(c, doc_.inputs.loss_tolerance);
  c.outcome = "measured";
  return true;
}

// After a rung: slower than the start, numerics lost, clearly worse than the incumbent, and
// (halve) the slower half.
void Searcher::drop(std::vector<TuneCandidate*>& alive, bool halve) {
  const double tol = doc_.inputs.loss_tolerance;
  auto drop_one = [](TuneCandidate* c, std::string why) {
    c->outcome = "dropped";
    c->reason = std::move(why);
  };
  for (TuneCandidate* c : alive) {
    if (c->verdict == "slower") {
      drop_one(c, fmt::format("{} the start: {}", words_of(doc_).worse, interval_text(*c)));
    } else if (c->numerics == "kept" && c->loss_within_tolerance == false) {
      drop_one(c, fmt::format("loss@{} differs by {:+.2f}% (tolerance {:.2f}%): the numerics are "
                              "not kept here",
                              doc_.inputs.steps, 100 * *c->loss_difference, 100 * tol));
    }
  }
  auto by_ratio = [](const TuneCandidate* a, const TuneCandidate* b) {
    return a->ratio.value_or(INFINITY) < b->ratio.value_or(INFINITY);
  };
  std::vector<TuneCandidate*> left;
  for (TuneCandidate* c : alive) {
    if (c->outcome == "measured") left.push_back(c);
  }
  std::stable_sort(left.begin(), left.end(), by_ratio);
  if (!left.empty() && left.front()->ci_high) {
    const TuneCandidate* best = left.front();
    for (TuneCandidate* c : left) {
      if (c != best && c->ci_low && *c->ci_low > *best->ci_high) {
        drop_one(c, fmt::format("clearly worse than candidate {}: {} against {}", best->id,
                                interval_text(*c), interval_text(*best)));
      }
    }
  }
  left.erase(std::remove_if(left.begin(), left.end(),
                            [](const TuneCandidate* c) { return c->outcome != "measured"; }),
             left.end());
  if (halve && left.size() > 1) {
    const size_t keep = (left.size() + 1) / 2;
    for (size_t i = keep; i < left.size(); ++i) {
      drop_one(left[i], fmt::format("successive halving: in the slower half after {} rounds ({})",
                                    left[i]->rounds, interval_text(*left[i])));
    }
  }
  alive.erase(std::remove_if(alive.begin(), alive.end(),
                             [](const TuneCandidate* c) { return c->outcome != "measured"; }),
              alive.end());
  changed();
}

}  // namespace

namespace {

std::string planner_check_of(const TuneDoc& doc) {
  int64_t fit_ran = 0, misfit = 0, fit_oom = 0, unplanned = 0;
  std::string oom_ids;
  for (const TuneCandidate& c : doc.candidates) {
    if (!c.planned_fits) {
      ++unplanned;
    } else if (!*c.planned_fits) {
      ++misfit;
    } else if (c.outcome == "out_of_memory") {
      ++fit_oom;
      oom_ids += (oom_ids.empty() ? "" : ", ") + std::to_string(c.id);
    } else if (!c.repetitions.empty()) {
      ++fit_ran;
    }
  }
  std::string s = fmt::format(
      "{} planned to fit and ran without running out of memory; {} planned not to fit (not "
      "run); {} planned to fit but ran out of memory",
      fit_ran, misfit, fit_oom);
  if (fit_oom > 0) s += " (candidates " + oom_ids + ": the planner was wrong there)";
  if (unplanned > 0) s += fmt::format("; {} the planner could not plan", unplanned);
  return s;
}

}  // namespace

void Searcher::decide(std::vector<TuneCandidate*>& alive) {
  TuneCandidate* best = nullptr;
  for (TuneCandidate* c : alive) {
    if (c->outcome != "measured" || !c->ratio || *c->ratio >= 1) continue;
    if (best == nullptr || *c->ratio < *best->ratio) best = c;
  }
  doc_.winner.reset();
  if (best == nullptr) {
    doc_.conclusion = fmt::format("the starting config stays: no candidate measured {} it",
                                  words_of(doc_).better);
    return;
  }
  for (TuneCandidate* c : alive) {
    if (c != best && c->outcome == "measured") {
      c->reason = fmt::format("candidate {} was the best when the search ended", best->id);
    }
  }
  const int64_t rounds = std::max(options_.confirm_rounds, best->rounds);
  extend(*best, rounds, 0);
  const std::string who = fmt::format("candidate {} (`{}`)", best->id, sets_text(*best));
  if (best->outcome == "measured" && best->verdict == "faster") {
    best->outcome = "winner";
    doc_.winner = best->id;
    doc_.conclusion = fmt::format("{} {} the start: {} over {} rounds", who,
                                  words_of(doc_).is_better, interval_text(*best), best->rounds);
  } else {
    best->reason = fmt::format("the best, but {} than the start with the engine's confidence",
                               words_of(doc_).not_clearly);
    doc_.conclusion =
        fmt::format("the starting config stays: the best, {}, measured {} over {} rounds, {}", who,
                    interval_text(*best), best->rounds, words_of(doc_).not_clearly);
  }
  if (best->rounds < options_.confirm_rounds) {
    doc_.conclusion += fmt::format(" (the budget allowed {} of the {} confirming rounds)",
                                   best->rounds, options_.confirm_rounds);
  }
}

void Searcher::run() {
  doc_.status = "running";
  doc_.winner.reset();
  std::vector<TuneCandidate*> alive;
  for (TuneCandidate& c : doc_.candidates) {
    if (c.outcome == "winner") c.outcome = "measured";  // decided again from the repetitions
    if (racing(c)) alive.push_back(&c);
  }
  int64_t rounds = std::max(options_.min_rounds, ab::kMinRepetitions);
  int64_t max_rounds = std::max(rounds, options_.max_rounds);
  if (options_.exhaustive) rounds = max_rounds = std::max(rounds, options_.confirm_rounds);
  while (!alive.empty()) {
    // Kept back for the winner's confirmation: its rounds beyond this rung, both arms.
    const double reserve =
        2 * mean_repetition_s(doc_) *
        static_cast<double>(std::max<int64_t>(0, options_.confirm_rounds - rounds));
    for (TuneCandidate* c : alive) {
      if (!extend(*c, rounds, reserve)) break;
    }
    if (budget_spent_) break;
    const bool last = rounds >= max_rounds;
    if (options_.exhaustive) break;
    if (!closed_earlier(doc_, alive, rounds)) drop(alive, !last);
    if (alive.size() <= 1 || last) break;
    rounds = std::min(max_rounds, rounds * 2);
  }
  for (TuneCandidate& c : doc_.candidates) {
    if (c.outcome == "pending") {
      c.outcome = "unmeasured";
      c.reason = "the budget was spent before its turn";
    }
  }
  alive.erase(std::remove_if(alive.begin(), alive.end(),
                             [](const TuneCandidate* c) { return c->outcome != "measured"; }),
              alive.end());
  decide(alive);
  note_host_noise(doc_);
  doc_.planner_check = planner_check_of(doc_);
  doc_.status = budget_spent_ ? "budget_spent" : "finished";
  changed();
}

void note_host_noise(TuneDoc& doc) {
  std::vector<std::string>& notes = doc.notes;
  notes.erase(std::remove_if(notes.begin(), notes.end(),
                             [](const std::string& n) { return n.rfind(kHostNoise, 0) == 0; }),
              notes.end());
  for (const TuneCandidate& c : doc.candidates) {
    for (const char* arm : {"baseline", "candidate"}) {
      double lo = INFINITY, hi = 0;
      for (const rundir::TuneRepetition& r : c.repetitions) {
        if (r.arm != arm || !(r.figure > 0)) continue;
        lo = std::min(lo, r.figure);
        hi = std::max(hi, r.figure);
      }
      if (hi > 0 && hi / lo > kNoisySpread) {
        notes.push_back(fmt::format(
            "{}candidate {}: the {} arm's repetitions, one command each time, spread {:.1f}x "
            "({:.4g} to {:.4g}): the host's speed changed during the race, so its ratio and "
            "interval are of the pairs as measured and may not repeat on a quiet host",
            kHostNoise, c.id, arm, hi / lo, lo, hi));
        break;
      }
    }
  }
}

void compare_candidate(TuneCandidate& c, double loss_tolerance) {
  std::map<int64_t, const rundir::TuneRepetition*> base, cand;
  for (const rundir::TuneRepetition& r : c.repetitions) {
    (r.arm == "baseline" ? base : cand)[r.round] = &r;
  }
  std::vector<double> b, k, loss_ratios;
  for (const auto& [round, rb] : base) {
    const auto it = cand.find(round);
    if (it == cand.end()) continue;
    b.push_back(rb->figure);
    k.push_back(it->second->figure);
    if (rb->loss && it->second->loss && *rb->loss != 0) {
      loss_ratios.push_back(*it->second->loss / *rb->loss - 1);
    }
  }
  c.rounds = static_cast<int64_t>(b.size());
  c.baseline_median = c.candidate_median = c.ratio = c.ci_low = c.ci_high = std::nullopt;
  c.verdict.clear();
  if (!b.empty()) {
    const ab::Comparison cmp = ab::compare(b, k);
    c.baseline_median = cmp.baseline_median;
    c.candidate_median = cmp.candidate_median;
    c.ratio = cmp.ratio_of_medians;
    if (cmp.interval) {
      c.ci_low = cmp.interval->low;
      c.ci_high = cmp.interval->high;
    }
    c.verdict = std::string(ab::verdict_name(cmp.verdict));
  }
  c.loss_difference.reset();
  c.loss_within_tolerance.reset();
  if (!loss_ratios.empty()) {
    c.loss_difference = llmprof::median(loss_ratios);
    c.loss_within_tolerance = std::abs(*c.loss_difference) <= loss_tolerance;
  }
}

void search(TuneDoc& doc,
            const Measure& measure,
            const SearchOptions& options,
            const OnProgress& on_progress,
            const OnChange& on_change) {
  Searcher(doc, measure, options, on_progress, on_change).run();
}

}  // namespace llmprof::tune
