// Liveness of the ranks, for naming the one that died or stopped when a collective fails: every
// rank bumps a counter under its store key from a small thread; on a failure, one reading of all
// keys, a pause, and a second reading show whose counter stood still. Private to src/dist.
#pragma once

#if LLMPROF_WITH_DIST

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "c10d_compat.h"

namespace llmprof::dist {

// What a heartbeat reading concluded.
struct Liveness {
  enum class Kind { kAllLive, kStale, kStoreGone, kStoreSilent } kind = Kind::kAllLive;
  std::vector<int> stale_ranks;      // counters that did not move, or never appeared
  std::vector<double> last_seen_s;   // per stale rank: seconds since its last beat (-1 never)
  std::string detail;                // the store's error, for kStoreGone
};

class Heartbeat {
 public:
  // Starts the beating thread on its own store connection to host:port.
  Heartbeat(const std::string& host, int port, int rank, int world_size, double interval_s);
  ~Heartbeat();  // stops the thread; gives up on it (detached) after 2 s if the store hangs
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // A refused plain TCP connect to the store means its host is gone; else reads every rank's
  // counter twice, 2.5 intervals apart, through the beating thread's connection; never waits
  // longer than `budget_s` (a silent store host is itself the finding).
  Liveness probe(double budget_s) const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace llmprof::dist

#endif  // LLMPROF_WITH_DIST
