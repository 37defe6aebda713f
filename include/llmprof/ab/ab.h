// The A/B engine: two arms, baseline and candidate, run alternately for a number of rounds, each
// repetition measured by one figure (lower is better: a time, or energy per token), then compared
// (llmprof/ab/stats.h). What a repetition is stays with the caller (a function);
// llmprof/ab/train_trial.h makes it a short `llmprof train`. The engine never prints: progress
// goes to the caller's callback.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/ab/stats.h"

namespace llmprof::ab {

enum class Arm : int { kBaseline = 0, kCandidate = 1 };

// "baseline" | "candidate".
std::string_view arm_name(Arm arm);

// The order round `round` (from 0) runs the arms in: baseline first in even rounds, candidate
// first in odd ones (A B B A A B ...), so that neither arm always runs second, after the other
// has warmed the caches or heated the CPU.
std::array<Arm, 2> round_order(int64_t round);

// One finished repetition.
struct Repetition {
  Arm arm = Arm::kBaseline;
  int64_t round = 0;
  double figure = 0;    // the measured time (or energy per token), in the caller's unit
  std::string run_dir;  // where it wrote, when it wrote a run directory
  int64_t ranks = 1;    // the rank processes it trained (a data-parallel repetition's rank<k>/)
};

// Runs one repetition of an arm in a round; throws llmprof::Error when it cannot be measured.
using RunRepetition = std::function<Repetition(Arm arm, int64_t round)>;

// Called after each repetition: it, the repetitions done and the total.
using OnRepetition = std::function<void(const Repetition& rep, int64_t done, int64_t total)>;

struct AbResult {
  std::vector<Repetition> repetitions;      // in the order they ran
  std::vector<double> baseline, candidate;  // figures by round
  Comparison comparison;
};

// Runs `rounds` rounds of both arms in round_order and compares the pairs. Throws UsageError for
// rounds < kMinRepetitions; what run_one throws passes through (no partial verdict).
AbResult run_ab(int64_t rounds, const RunRepetition& run_one, const OnRepetition& on_done = {});

}  // namespace llmprof::ab
