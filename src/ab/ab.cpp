#include "llmprof/ab/ab.h"

#include <fmt/format.h>

#include "llmprof/error.h"

namespace llmprof::ab {

std::string_view arm_name(Arm arm) { return arm == Arm::kBaseline ? "baseline" : "candidate"; }

std::array<Arm, 2> round_order(int64_t round) {
  if (round % 2 == 0) return {Arm::kBaseline, Arm::kCandidate};
  return {Arm::kCandidate, Arm::kBaseline};
}

AbResult run_ab(int64_t rounds, const RunRepetition& run_one, const OnRepetition& on_done) {
  if (rounds < kMinRepetitions) {
    throw UsageError(fmt::format("A/B: {} repetitions: at least {} are needed for a {:g}% interval",
                                 rounds, kMinRepetitions, 100 * kConfidence));
  }
  AbResult r;
  r.baseline.assign(static_cast<size_t>(rounds), 0);
  r.candidate.assign(static_cast<size_t>(rounds), 0);
  const int64_t total = 2 * rounds;
  for (int64_t round = 0; round < rounds; ++round) {
    for (Arm arm : round_order(round)) {
      Repetition rep = run_one(arm, round);
      rep.arm = arm;
      rep.round = round;
      (arm == Arm::kBaseline ? r.baseline : r.candidate)[static_cast<size_t>(round)] = rep.figure;
      r.repetitions.push_back(std::move(rep));
      if (on_done) on_done(r.repetitions.back(), static_cast<int64_t>(r.repetitions.size()), total);
    }
  }
  r.comparison = compare(r.baseline, r.candidate);
  return r;
}

}  // namespace llmprof::ab
