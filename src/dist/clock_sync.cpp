// The clock ping-pong and the test-only clock skew and forward delay (llmprof/dist/clock_sync.h).
#include "llmprof/dist/clock_sync.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "llmprof/dist/process_group.h"
#include "llmprof/error.h"

namespace llmprof::dist {

std::vector<ClockEstimate> measure_clocks(ProcessGroup& group,
                                          int rounds,
                                          const std::function<int64_t()>& clock) {
  if (rounds < 1) throw std::invalid_argument("measure_clocks: rounds must be >= 1");
  std::vector<int64_t> msg(1, 0);
  if (group.rank() != 0) {
    // Answer each ping at once with this rank's clock: the stamp is taken as the ping arrives.
    for (int i = 0; i < rounds; ++i) {
      group.recv(msg, 0);
      msg[0] = clock();
      group.send(msg, 0);
    }
    return {};
  }
  std::vector<ClockEstimate> out(static_cast<size_t>(group.world_size()));
  out[0].at_ns = clock();
  out[0].rounds = rounds;
  std::vector<PingSample> samples(static_cast<size_t>(rounds));
  for (int peer = 1; peer < group.world_size(); ++peer) {
    for (int i = 0; i < rounds; ++i) {
      PingSample& s = samples[static_cast<size_t>(i)];
      msg[0] = i;
      s.t0_ns = clock();
      group.send(msg, peer);
      group.recv(msg, peer);
      s.t3_ns = clock();
      s.peer_ns = msg[0];
    }
    out[static_cast<size_t>(peer)] = estimate_clock(samples);
  }
  return out;
}

namespace {

// "<rank>:<integer>" from an environment variable; 0 when unset or for another rank.
int64_t rank_setting(const char* name, int rank) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || *raw == '\0') return 0;
  const std::string text = raw;
  const size_t colon = text.find(':');
  const auto bad = [&] {
    return ConfigError(
        fmt::format("{}='{}': expected <rank>:<integer> (a test-only setting)", name, text), {},
        name);
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) throw bad();
  char* end = nullptr;
  errno = 0;
  const long long r = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + colon || errno != 0) throw bad();
  const long long v = std::strtoll(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || errno != 0) throw bad();
  return r == rank ? static_cast<int64_t>(v) : 0;
}

}  // namespace

int64_t test_clock_skew_ns(int rank) {
  static const int64_t us = rank_setting("LLMPROF_TEST_CLOCK_SKEW_US", rank);
  return us * 1000;
}

int64_t test_forward_delay_ns(int rank) {
  static const int64_t delay_ms = rank_setting("LLMPROF_TEST_FORWARD_DELAY_MS", rank);
  if (delay_ms < 0) {
    throw ConfigError("LLMPROF_TEST_FORWARD_DELAY_MS: the delay must be >= 0 ms", {},
                      "LLMPROF_TEST_FORWARD_DELAY_MS");
  }
  return delay_ms * 1000000;
}

}  // namespace llmprof::dist
