// Runs a test scenario on N ranks, each a fresh process: the test binary re-executes itself
// (no fork after LibTorch started threads) with RANK/WORLD_SIZE/MASTER_* set and the gtest
// filter on DistWorker, which runs the named scenario and writes its findings to a file. Every
// wait is bounded: ranks still alive at the deadline are killed (SIGKILL, which also ends a
// stopped process), and the result says so.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace llmprof::test {

struct RankResult {
  int exit_code = -1;        // -1: killed at the deadline or by a signal
  int signal = 0;            // the signal that ended it, 0 if it exited
  std::string out;           // what the scenario wrote (key value lines)
  double elapsed_s = 0;      // from start to its end (or the deadline)
};

// The values the scenario wrote under `key` (the rest of its line), empty if absent.
std::string field(const RankResult& r, const std::string& key);

// Starts `world` ranks of `scenario` on a free port; waits at most deadline_s in all. With
// lead >= 0, the other ranks are killed as soon as rank `lead` has ended (a stopped peer).
std::vector<RankResult> run_ranks(const std::string& scenario, int world, double deadline_s,
                                  const std::map<std::string, std::string>& env = {},
                                  int lead = -1);

// Inside a rank: the scenario's name, the file to write findings to ("" outside a rank).
std::string rank_scenario();
void rank_write(const std::string& key, const std::string& value);

}  // namespace llmprof::test
