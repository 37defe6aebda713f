// The search of llmprof tune over fake repetitions whose figures are known by construction: the
// fast candidate wins, the slow ones are dropped after the first rung, a candidate the planner
// rejects is never measured, a failing one is recorded, and a stopped search resumes without
// measuring anything twice.
#include "llmprof/tune/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "llmprof/ab/train_trial.h"
#include "llmprof/error.h"

namespace llmprof::tune {
namespace {

using rundir::TuneCandidate;
using rundir::TuneDoc;

TuneCandidate candidate(int64_t id, const std::string& set, std::string outcome = "pending") {
  TuneCandidate c;
  c.id = id;
  c.sets = {set};
  c.numerics = "kept";
  c.outcome = std::move(outcome);
  c.planned_fits = c.outcome != "does_not_fit";
  return c;
}

// The start sleeps 20 ms a step over a 10 ms step: 30 ms. Candidate "sleep=S": 10 + S ms. Round r
// adds r% to both arms (a machine slowing down), which the paired ratio cancels.
double figure_of(const TuneCandidate& c, ab::Arm arm, int64_t round) {
  double ms = 30;
  if (arm == ab::Arm::kCandidate) ms = 10 + std::stod(c.sets[0].substr(c.sets[0].find('=') + 1));
  return ms * (1 + 0.01 * static_cast<double>(round));
}

TuneDoc doc_of() {
  TuneDoc d;
  d.inputs.steps = 20;
  d.inputs.loss_tolerance = 0.01;
  d.budget_s = 1000;
  d.candidates = {candidate(1, "sleep=60"), candidate(2, "sleep=0"), candidate(3, "sleep=90"),
                  candidate(4, "sleep=0 batch=huge", "does_not_fit")};
  return d;
}

struct Counter {
  std::map<int64_t, int64_t> calls;  // by candidate id
  int64_t total = 0;
  Measure measure() {
    return [this](const TuneCandidate& c, ab::Arm arm, int64_t round) {
      ++calls[c.id];
      ++total;
      return Measurement{figure_of(c, arm, round), 2.0, 1.0, ""};
    };
  }
};

const TuneCandidate& by_id(const TuneDoc& d, int64_t id) {
  for (const auto& c : d.candidates) {
    if (c.id == id) return c;
  }
  throw std::runtime_error("no candidate");
}

TEST(TuneSearch, FindsTheFastCandidateAndDropsTheSlowOnesAfterTheFirstRung) {
  TuneDoc d = doc_of();
  Counter counter;
  search(d, counter.measure(), SearchOptions{});
  ASSERT_TRUE(d.winner.has_value()) << d.conclusion;
  EXPECT_EQ(*d.winner, 2);
  EXPECT_EQ(by_id(d, 2).outcome, "winner");
  // The winner: confirmed over kConfirmRounds rounds, both arms; ratio 10 / 30.
  EXPECT_EQ(by_id(d, 2).rounds, kConfirmRounds);
  EXPECT_EQ(counter.calls[2], 2 * kConfirmRounds);
  EXPECT_NEAR(*by_id(d, 2).ratio, 1.0 / 3.0, 1e-9);
  EXPECT_EQ(by_id(d, 2).verdict, "faster");
  // The slowest: the first rung only (kMinRepetitions rounds, two arms), then dropped; the other
  // slow one fewer repetitions than the winner.
  EXPECT_EQ(by_id(d, 3).outcome, "dropped");
  EXPECT_EQ(counter.calls[3], 2 * ab::kMinRepetitions);
  EXPECT_NE(by_id(d, 1).outcome, "winner");
  // The other slow one (slower than the start): the first rung only, as the slowest.
  EXPECT_EQ(counter.calls[1], 2 * ab::kMinRepetitions);
  EXPECT_NEAR(*by_id(d, 1).ratio, 70.0 / 30.0, 1e-9);
  // The planner's rejection: never measured.
  EXPECT_EQ(counter.calls.count(4), 0u);
  EXPECT_EQ(by_id(d, 4).outcome, "does_not_fit");
  EXPECT_NE(d.planner_check.find("1 planned not to fit (not run)"), std::string::npos)
      << d.planner_check;
  EXPECT_EQ(d.status, "finished");
  // Loss: 2.0 in both arms, a difference of 0.
  EXPECT_DOUBLE_EQ(*by_id(d, 2).loss_difference, 0);
  // Every repetition's second counted once.
  EXPECT_DOUBLE_EQ(d.seconds_spent, static_cast<double>(counter.total));
}

TEST(TuneSearch, NotesARaceTheHostsSpeedChangedUnder) {
  // The steady machine of figure_of (1% slower a round): no note.
  TuneDoc quiet = doc_of();
  Counter counter;
  search(quiet, counter.measure(), SearchOptions{});
  for (const std::string& n : quiet.notes)
    EXPECT_EQ(n.rfind(kHostNoise, 0), std::string::npos) << n;
  // Candidate 2's baseline repetition of round 1 ran 5x slower (another job took the cores).
  TuneDoc noisy = doc_of();
  Measure m = [](const TuneCandidate& c, ab::Arm arm, int64_t round) {
    const bool burst = c.id == 2 && arm == ab::Arm::kBaseline && round == 1;
    return Measurement{figure_of(c, arm, round) * (burst ? 5 : 1), 2.0, 1.0, ""};
  };
  search(noisy, m, SearchOptions{});
  std::vector<std::string> noise;
  for (const std::string& n : noisy.notes) {
    if (n.rfind(kHostNoise, 0) == 0) noise.push_back(n);
  }
  ASSERT_EQ(noise.size(), 1u);
  EXPECT_NE(noise[0].find("candidate 2: the baseline arm's repetitions"), std::string::npos)
      << noise[0];
  EXPECT_NE(noise[0].find("spread 5."), std::string::npos) << noise[0];
  // Noted once however often it is asked (a resumed search decides again).
  note_host_noise(noisy);
  EXPECT_EQ(std::count_if(noisy.notes.begin(), noisy.notes.end(),
                          [](const std::string& n) { return n.rfind(kHostNoise, 0) == 0; }),
            1);
}

TEST(TuneSearch, ResumesAStoppedSearchWithoutMeasuringAnythingTwice) {
  Counter whole;
  TuneDoc full = doc_of();
  search(full, whole.measure(), SearchOptions{});

  TuneDoc saved = doc_of();
  int64_t first_calls = 0;
  Measure stopping = [&](const TuneCandidate& c, ab::Arm arm, int64_t round) {
    if (++first_calls > 5) throw Interrupted("stopped");
    return Measurement{figure_of(c, arm, round), 2.0, 1.0, ""};
  };
  TuneDoc running = doc_of();
  EXPECT_THROW(search(running, stopping, SearchOptions{}, {}, [&](const TuneDoc& d) { saved = d; }),
               Interrupted);
  Counter rest;
  search(saved, rest.measure(), SearchOptions{});
  EXPECT_EQ(rest.total, whole.total - 5);  // the 5 saved ones were not measured again
  EXPECT_EQ(saved.winner, full.winner);
  EXPECT_DOUBLE_EQ(saved.seconds_spent, full.seconds_spent);
}

// Four candidates faster than the start and close to each other (10 to 11.5 ms against 30), each
// repetition of a candidate up to +-10% by its round: the first rung keeps the faster half, the
// second races two. Stopped just after the first rung closed, then resumed, the search takes the
// same path: the first rung is not closed again over its two survivors (which would halve them
// again).
TEST(TuneSearch, ResumedAfterARungClosedTakesTheSamePath) {
  auto doc4 = [] {
    TuneDoc d = doc_of();
    d.candidates = {candidate(1, "sleep=0"), candidate(2, "sleep=0.5"), candidate(3, "sleep=1"),
                    candidate(4, "sleep=1.5")};
    return d;
  };
  auto noisy = [](const TuneCandidate& c, ab::Arm arm, int64_t round) {
    const double wobble = 1 + 0.05 * static_cast<double>((round * 7 + c.id * 3) % 5 - 2);
    return Measurement{figure_of(c, arm, round) * (arm == ab::Arm::kCandidate ? wobble : 1), 2.0,
                       1.0, ""};
  };
  TuneDoc full = doc4();
  int64_t whole = 0;
  search(
      full,
      [&](const TuneCandidate& c, ab::Arm a, int64_t r) {
        ++whole;
        return noisy(c, a, r);
      },
      SearchOptions{});
  int64_t dropped_first = 0, raced_second = 0;
  for (const auto& c : full.candidates) {
    dropped_first += c.outcome == "dropped" && c.rounds == ab::kMinRepetitions ? 1 : 0;
    raced_second += c.rounds > ab::kMinRepetitions ? 1 : 0;
  }
  ASSERT_EQ(dropped_first, 2) << full.conclusion;  // the first rung halved four to two
  ASSERT_EQ(raced_second, 2) << full.conclusion;
  // Stopped at the first repetition of the second rung (4 candidates x 6 rounds x 2 arms before).
  const int64_t first_rung = 4 * ab::kMinRepetitions * 2;
  TuneDoc saved = doc4();
  int64_t calls = 0;
  Measure stopping = [&](const TuneCandidate& c, ab::Arm arm, int64_t round) {
    if (++calls > first_rung) throw Interrupted("stopped");
    return noisy(c, arm, round);
  };
  TuneDoc running = doc4();
  EXPECT_THROW(search(running, stopping, SearchOptions{}, {}, [&](const TuneDoc& d) { saved = d; }),
               Interrupted);
  int64_t rest = 0;
  search(
      saved,
      [&](const TuneCandidate& c, ab::Arm a, int64_t r) {
        ++rest;
        return noisy(c, a, r);
      },
      SearchOptions{});
  EXPECT_EQ(rest, whole - first_rung);
  EXPECT_EQ(saved.winner, full.winner);
  for (size_t i = 0; i < full.candidates.size(); ++i) {
    EXPECT_EQ(saved.candidates[i].outcome, full.candidates[i].outcome) << i;
    EXPECT_EQ(saved.candidates[i].rounds, full.candidates[i].rounds) << i;
  }
}

TEST(TuneSearch, RecordsAnOutOfMemoryCandidateAndGoesOn) {
  TuneDoc d = doc_of();
  Measure m = [](const TuneCandidate& c, ab::Arm arm, int64_t round) {
    if (c.id == 3 && arm == ab::Arm::kCandidate) {
      throw ab::RepetitionError("train: CUDA out of memory", arm);
    }
    return Measurement{figure_of(c, arm, round), 2.0, 1.0, ""};
  };
  search(d, m, SearchOptions{});
  EXPECT_EQ(by_id(d, 3).outcome, "out_of_memory");
  EXPECT_EQ(d.winner, 2);
  EXPECT_NE(d.planner_check.find("1 planned to fit but ran out of memory (candidates 3"),
            std::string::npos)
      << d.planner_check;
}

TEST(TuneSearch, DropsAKeptNumericsCandidateWhoseLossMovesBeyondTheTolerance) {
  TuneDoc d = doc_of();
  Measure m = [](const TuneCandidate& c, ab::Arm arm, int64_t round) {
    const double loss = c.id == 2 && arm == ab::Arm::kCandidate ? 2.1 : 2.0;  // +5%
    return Measurement{figure_of(c, arm, round), loss, 1.0, ""};
  };
  search(d, m, SearchOptions{});
  EXPECT_EQ(by_id(d, 2).outcome, "dropped");
  EXPECT_NE(by_id(d, 2).reason.find("+5.00%"), std::string::npos) << by_id(d, 2).reason;
  EXPECT_FALSE(d.winner.has_value());  // 1 and 3 are slower than the start
}

TEST(TuneSearch, RefusesABudgetThatCannotHoldOneRound) {
  TuneDoc d = doc_of();
  d.budget_s = 3;  // a repetition takes 2 s: a round 4 s
  Measure m = [](const TuneCandidate& c, ab::Arm arm, int64_t round) {
    return Measurement{figure_of(c, arm, round), 2.0, 2.0, ""};
  };
  try {
    search(d, m, SearchOptions{});
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--budget 3s"), std::string::npos) << e.what();
  }
}

TEST(TuneSearch, StopsWhenTheBudgetIsSpentAndSaysSo) {
  TuneDoc d = doc_of();
  d.budget_s = 9;  // 1 s a repetition: the first rung of the first candidates only
  Counter counter;
  search(d, counter.measure(), SearchOptions{});
  EXPECT_EQ(d.status, "budget_spent");
  EXPECT_LE(d.seconds_spent, 9.0);
  EXPECT_EQ(by_id(d, 3).outcome, "unmeasured");
}

// The grid a search is judged against: every candidate that fits, kConfirmRounds rounds each.
TEST(TuneSearch, ExhaustiveMeasuresEveryCandidateOverTheConfirmingRounds) {
  TuneDoc d = doc_of();
  Counter counter;
  SearchOptions o;
  o.exhaustive = true;
  search(d, counter.measure(), o);
  for (int64_t id : {1, 2, 3}) EXPECT_EQ(counter.calls[id], 2 * kConfirmRounds) << id;
  EXPECT_EQ(counter.calls.count(4), 0u);
  EXPECT_EQ(d.winner, 2);
}

}  // namespace
}  // namespace llmprof::tune
