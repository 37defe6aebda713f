// The search of `llmprof tune` over planned candidates: each raced against the starting config
// by the A/B engine (llmprof/ab/ab.h: interleaved rounds of both arms, its interval and verdict),
// by successive halving: every candidate gets min_rounds rounds, then after each rung those
// clearly worse are dropped and the better half gets twice the rounds, up to max_rounds; the best
// left is confirmed against the start up to confirm_rounds, the rounds `check --ab` asks for its
// interval. A repetition already in the document is never measured again (resume). The search
// never prints: progress goes to a callback; measuring goes through a function (a short
// `llmprof train`, or a test's fake).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "llmprof/ab/ab.h"
#include "llmprof/rundir/tune_doc.h"

namespace llmprof::tune {

// What one repetition measured.
struct Measurement {
  double figure = 0;           // a time or energy per token: lower is better
  std::optional<double> loss;  // the last train-step loss
  double seconds = 0;          // its wall time, start-up included
  std::string log;
  std::optional<int64_t> ranks;  // the rank processes its run directory showed
};

// Measures one repetition of candidate c (the baseline arm: the starting config) in a round.
// Throws ab::RepetitionError when it fails (an out-of-memory candidate among them),
// Interrupted when stopped.
using Measure =
    std::function<Measurement(const rundir::TuneCandidate& c, ab::Arm arm, int64_t round)>;

struct Progress {
  std::string what;             // e.g. "candidate 3 `threads=2`: candidate round 2/2"
  int64_t candidates_left = 0;  // not yet decided (pending or racing)
  double spent_s = 0, budget_s = 0;
};
using OnProgress = std::function<void(const Progress&)>;
// Called whenever the document changed (after each repetition): the caller saves it.
using OnChange = std::function<void(const rundir::TuneDoc&)>;

// The rounds `check --ab` uses for its interval after the intervals issue (6 for 95%).
inline constexpr int64_t kConfirmRounds = 6;

struct SearchOptions {
  int64_t min_rounds = ab::kMinRepetitions;  // each candidate's first rung
  // The most rounds a candidate races: two rungs (6 rounds, then 12 for the better half).
  int64_t max_rounds = 2 * ab::kMinRepetitions;
  int64_t confirm_rounds = kConfirmRounds;   // the winner against the start
  // The exhaustive grid the search is judged against: every candidate confirm_rounds rounds,
  // none dropped.
  bool exhaustive = false;
};

// Runs (or resumes) the search over doc.candidates whose outcome is pending or measured, in
// their order (of predicted effect), under doc.budget_s seconds of repetitions (doc.seconds_spent
// included). Sets each candidate's figures, outcome and reason, doc.winner, doc.conclusion,
// doc.planner_check and doc.status (finished or budget_spent). A failed candidate repetition is
// recorded and the search goes on; a failed baseline repetition throws ab::RepetitionError; the
// first baseline repetition taking more than half the budget throws UsageError (the budget
// cannot hold one round). Interrupted passes through, the document saved up to it.
void search(rundir::TuneDoc& doc,
            const Measure& measure,
            const SearchOptions& options,
            const OnProgress& on_progress = {},
            const OnChange& on_change = {});

// One arm's repetitions are the same command each time: on a quiet host their figures stay
// within 1.5x of each other (the 2-core machine type measured 1.02-1.43x); past kNoisySpread the
// host's speed changed under the race.
inline constexpr double kNoisySpread = 2.0;
inline constexpr const char* kHostNoise = "host noise: ";

// doc.notes gets, for each candidate whose race saw the host's speed change (one arm's figures
// apart by more than kNoisySpread, max over min), a note starting with kHostNoise naming the
// candidate, the arm and the spread; the notes of an earlier call are replaced (a resumed search).
void note_host_noise(rundir::TuneDoc& doc);

// The comparison of a candidate from its recorded repetitions (complete rounds only): rounds,
// medians, ratio, interval, verdict, loss difference (and whether it is within tolerance).
void compare_candidate(rundir::TuneCandidate& c, double loss_tolerance);

}  // namespace llmprof::tune
