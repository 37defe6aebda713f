// The local launcher of --nproc: its pure parts (arguments, threads, exit codes, descriptions,
// ports) and its process handling with small /bin/sh ranks (exit codes, a killed rank, a stopped
// rank, SIGINT forwarding, the environment, stderr lines, the guard), independent of training.
// Every launch here carries a limit_s, so no test can hang.
#include "llmprof/dist/launch.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::dist {
namespace {

using Args = std::vector<std::string>;
using Clock = std::chrono::steady_clock;

TEST(StripNproc, RemovesTheFlagAndItsValueInBothSpellings) {
  EXPECT_EQ(strip_nproc({"train", "--config", "a.yaml", "--nproc", "2", "--quiet"}),
            (Args{"train", "--config", "a.yaml", "--quiet"}));
  EXPECT_EQ(strip_nproc({"train", "--nproc=4", "--config", "a.yaml"}),
            (Args{"train", "--config", "a.yaml"}));
  EXPECT_EQ(strip_nproc({"train", "--config", "a.yaml"}), (Args{"train", "--config", "a.yaml"}));
  // A --set value that merely mentions nproc is kept.
  EXPECT_EQ(strip_nproc({"train", "--set", "output.name=nproc"}),
            (Args{"train", "--set", "output.name=nproc"}));
}

TEST(RankArgs, AddsThreadsForEveryRankAndQuietForRanksAboveZero) {
  const Args base{"train", "--config", "a.yaml"};
  EXPECT_EQ(rank_args(base, 0, 3), (Args{"train", "--config", "a.yaml", "--set", "threads=3"}));
  EXPECT_EQ(rank_args(base, 1, 3),
            (Args{"train", "--config", "a.yaml", "--set", "threads=3", "--quiet"}));
  EXPECT_EQ(rank_args(base, 1, 0), (Args{"train", "--config", "a.yaml", "--quiet"}));
  // Already quiet: not twice (CLI11 would refuse a flag given twice? it would not, but the
  // command stays as the user wrote it).
  EXPECT_EQ(rank_args({"train", "-q"}, 2, 0), (Args{"train", "-q"}));
}

TEST(ThreadsPerRank, DividesCoresEvenlyAndNeverBelowOne) {
  EXPECT_EQ(threads_per_rank(16, 4), 4);
  EXPECT_EQ(threads_per_rank(2, 2), 1);
  EXPECT_EQ(threads_per_rank(7, 2), 3);  // 7 / 2 rounded down: no rank oversubscribes
  EXPECT_EQ(threads_per_rank(2, 8), 1);
  EXPECT_EQ(threads_per_rank(8, 1), 8);
}

TEST(ParsePort, AcceptsOneTo65535AndNamesABadValue) {
  EXPECT_EQ(parse_port("29500"), 29500);
  EXPECT_EQ(parse_port("1"), 1);
  EXPECT_EQ(parse_port("65535"), 65535);
  for (const char* bad : {"0", "65536", "", "12ab", "-5", "http"}) {
    try {
      parse_port(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("MASTER_PORT='") + bad + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

RankEnd end_of(RankEnd::Kind kind, int code, int64_t rank = 1) {
  RankEnd e;
  e.rank = rank;
  e.pid = 4242;
  e.kind = kind;
  e.code = code;
  return e;
}

TEST(RankEndOf, ReadsExitKillAndStopStatuses) {
  // Wait statuses as the kernel encodes them: exit code << 8; the signal; 0x7f | signal << 8.
  const RankEnd exited = rank_end_of(1, 7, 3 << 8);
  EXPECT_EQ(exited.kind, RankEnd::Kind::kExited);
  EXPECT_EQ(exited.code, 3);
  const RankEnd killed = rank_end_of(1, 7, SIGKILL);
  EXPECT_EQ(killed.kind, RankEnd::Kind::kKilled);
  EXPECT_EQ(killed.code, SIGKILL);
  const RankEnd stopped = rank_end_of(1, 7, 0x7f | (SIGSTOP << 8));
  EXPECT_EQ(stopped.kind, RankEnd::Kind::kStopped);
  EXPECT_EQ(stopped.code, SIGSTOP);
  EXPECT_FALSE(is_failure(rank_end_of(0, 7, 0)));
  EXPECT_TRUE(is_failure(exited));
  EXPECT_TRUE(is_failure(stopped));
}

TEST(Describe, NamesRankPidAndWhatHappened) {
  EXPECT_EQ(describe(end_of(RankEnd::Kind::kExited, 2)), "rank 1 (pid 4242) exited with code 2");
  EXPECT_EQ(describe(end_of(RankEnd::Kind::kKilled, SIGKILL)),
            "rank 1 (pid 4242) was killed by signal 9 (Killed)");
  EXPECT_EQ(describe(end_of(RankEnd::Kind::kStopped, SIGSTOP))
                .rfind("rank 1 (pid 4242) was stopped by signal 19 (Stopped", 0),
            0u);
}

TEST(LaunchExitCode, IsTheFirstFailingRanksCode) {
  using K = RankEnd::Kind;
  EXPECT_EQ(launch_exit_code(std::nullopt, false), 0);
  EXPECT_EQ(launch_exit_code(std::nullopt, true), 130);
  EXPECT_EQ(launch_exit_code(end_of(K::kExited, 2), false), 2);
  EXPECT_EQ(launch_exit_code(end_of(K::kExited, 1), true), 1);  // failed, then interrupted
  EXPECT_EQ(launch_exit_code(end_of(K::kExited, 130), true), 130);
  EXPECT_EQ(launch_exit_code(end_of(K::kKilled, SIGKILL), false), 1);
  EXPECT_EQ(launch_exit_code(end_of(K::kKilled, SIGINT), false), 130);
  EXPECT_EQ(launch_exit_code(end_of(K::kKilled, SIGTERM), false), 130);
  EXPECT_EQ(launch_exit_code(end_of(K::kStopped, SIGSTOP), false), 1);
}

TEST(Ports, FreePortIsBindableAndABusyPortIsAUsageErrorNamingIt) {
  const int port = free_port();
  EXPECT_GT(port, 0);
  EXPECT_NO_THROW(check_port_free(port));
  // Hold a listener on it: now busy.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  try {
    check_port_free(port);
    ADD_FAILURE() << "a listening port passed as free";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_PORT " + std::to_string(port) + " is busy"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
  ::close(fd);
}

TEST(UsableCores, IsAtLeastOneAndAtMostTheOnlineCount) {
  EXPECT_GE(usable_cores(), 1);
  EXPECT_LE(usable_cores(), ::sysconf(_SC_NPROCESSORS_ONLN));
}

TEST(SelfCommandLine, StartsWithThisTestProgram) {
  const Args cl = self_command_line();
  ASSERT_FALSE(cl.empty());
  EXPECT_NE(cl[0].find("test_dist"), std::string::npos) << cl[0];
  EXPECT_NE(self_executable().find("test_dist"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Processes: each rank runs /bin/sh -c script[rank].

struct Seen {
  std::mutex m;
  std::vector<std::pair<int64_t, std::string>> lines;
  std::vector<std::string> notes;
};

LaunchOptions sh_ranks(const std::vector<std::string>& scripts, Seen& seen) {
  LaunchOptions o;
  for (const auto& s : scripts) o.rank_argv.push_back({"/bin/sh", "-c", s});
  o.master_port = 29999;
  o.grace_s = 1;
  o.limit_s = 30;  // every launch of these tests ends within this, whatever goes wrong
  o.on_rank_line = [&seen](int64_t rank, const std::string& line) {
    std::lock_guard<std::mutex> lock(seen.m);
    seen.lines.emplace_back(rank, line);
  };
  o.on_note = [&seen](const std::string& note) {
    std::lock_guard<std::mutex> lock(seen.m);
    seen.notes.push_back(note);
  };
  return o;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool any_note_has(const Seen& seen, const std::string& text) {
  for (const auto& n : seen.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string all_notes(const Seen& seen) {
  std::string out;
  for (const auto& n : seen.notes) out += n + "\n";
  return out;
}

TEST(LaunchLocal, EveryRankSeesItsPlaceInTheEnvironment) {
  test::ScratchDir dir;
  Seen seen;
  const std::string script =
      "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT "
      "$OMP_NUM_THREADS $LLMPROF_LAUNCHED\" > " +
      dir.path() + "/r$RANK";
  LaunchOptions o = sh_ranks({script, script, script}, seen);
  o.threads = 2;
  const LaunchResult r = launch_local(o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.first_failure);
  EXPECT_EQ(r.ends.size(), 3u);
  EXPECT_FALSE(r.killed);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(test::read_file(dir.file("r" + std::to_string(k))),
              std::to_string(k) + " 3 " + std::to_string(k) + " 3 127.0.0.1 29999 2 1\n");
  }
}

TEST(LaunchLocal, RanksAboveZeroHaveTheirStderrLinesPassedOnAndStdoutDropped) {
  Seen seen;
  const std::string script = "echo out$RANK; echo warn$RANK >&2; printf 'last' >&2";
  const LaunchResult r = launch_local(sh_ranks({script, script}, seen));
  EXPECT_EQ(r.exit_code, 0);
  // Rank 0's stderr is this process's own; rank 1's two lines (the last without a newline).
  const std::vector<std::pair<int64_t, std::string>> want{{1, "warn1"}, {1, "last"}};
  EXPECT_EQ(seen.lines, want);
}

TEST(LaunchLocal, ARankExitingNonZeroEndsTheOthersAfterTheGraceAndGivesItsCode) {
  Seen seen;
  const auto t0 = Clock::now();
  const LaunchResult r = launch_local(sh_ranks({"sleep 20", "exit 3"}, seen));
  EXPECT_LT(seconds_since(t0), 10);  // grace 1 s, not rank 0's 20 s
  EXPECT_EQ(r.exit_code, 3);
  ASSERT_TRUE(r.first_failure);
  EXPECT_EQ(r.first_failure->rank, 1);
  EXPECT_TRUE(r.killed);
  EXPECT_NE(r.reason.find("after rank 1 failed"), std::string::npos) << r.reason;
  EXPECT_TRUE(any_note_has(seen, "rank 1 (pid ")) << all_notes(seen);
  EXPECT_TRUE(any_note_has(seen, ") exited with code 3")) << all_notes(seen);
  EXPECT_TRUE(any_note_has(seen, "killing rank 0")) << all_notes(seen);
}

TEST(LaunchLocal, AKilledRankIsNamedWithItsSignalAndTheRunFails) {
  Seen seen;
  const LaunchResult r = launch_local(sh_ranks({"sleep 20", "kill -KILL $$"}, seen));
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_TRUE(r.first_failure);
  EXPECT_EQ(r.first_failure->rank, 1);
  EXPECT_EQ(r.first_failure->kind, RankEnd::Kind::kKilled);
  EXPECT_EQ(r.first_failure->code, SIGKILL);
  EXPECT_TRUE(any_note_has(seen, "was killed by signal 9")) << all_notes(seen);
}

TEST(LaunchLocal, AStoppedRankIsNoticedAndEveryRankEndsWithinTheGrace) {
  Seen seen;
  const auto t0 = Clock::now();
  const LaunchResult r = launch_local(sh_ranks({"sleep 20", "kill -STOP $$; sleep 20"}, seen));
  EXPECT_LT(seconds_since(t0), 10);
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_TRUE(r.first_failure);
  EXPECT_EQ(r.first_failure->rank, 1);
  EXPECT_EQ(r.first_failure->kind, RankEnd::Kind::kStopped);
  EXPECT_TRUE(any_note_has(seen, "was stopped by signal 19")) << all_notes(seen);
  EXPECT_TRUE(r.killed);
  // Both ranks reaped after the kill: the stop, then two kills.
  size_t kills = 0;
  for (const auto& e : r.ends) kills += e.kind == RankEnd::Kind::kKilled ? 1 : 0;
  EXPECT_EQ(kills, 2u);
}

TEST(LaunchLocal, AStoppedRankLeftAloneIsKilledWithoutWaitingOutTheGrace) {
  Seen seen;
  const auto t0 = Clock::now();
  LaunchOptions o = sh_ranks({"sleep 1; exit 3", "kill -STOP $$; sleep 20"}, seen);
  o.grace_s = 20;  // rank 0 ends at 1 s: the stopped rank 1 is killed then, not at 20 s
  const LaunchResult r = launch_local(o);
  EXPECT_LT(seconds_since(t0), 15);
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_TRUE(r.first_failure);
  EXPECT_EQ(r.first_failure->kind, RankEnd::Kind::kStopped);
  EXPECT_TRUE(r.killed);
  EXPECT_EQ(r.reason, "every other rank has ended and the rest are stopped");
  EXPECT_TRUE(any_note_has(seen, "killing rank 1")) << all_notes(seen);
}

TEST(LaunchLocal, SigintReachesEveryRankOnceAndTheLaunchExits130) {
  test::ScratchDir dir;
  Seen seen;
  // Each rank counts the SIGINTs it gets into its file and exits 130 on the first, ending its
  // sleep (a background job of a script ignores SIGINT: left running, it held the test's output
  // open for 20 s after the test had passed).
  const std::string script = "trap 'echo int >> " + dir.path() +
                             "/int$RANK; kill $! 2>/dev/null; exit 130' INT; touch " + dir.path() +
                             "/ready$RANK; sleep 20 & wait";
  std::thread interrupter([&dir] {
    const auto t0 = Clock::now();
    while (seconds_since(t0) < 10 && !(std::filesystem::exists(dir.file("ready0")) &&
                                       std::filesystem::exists(dir.file("ready1")))) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(::getpid(), SIGINT);
  });
  const auto t0 = Clock::now();
  const LaunchResult r = launch_local(sh_ranks({script, script}, seen));
  interrupter.join();
  EXPECT_LT(seconds_since(t0), 10);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_EQ(test::read_file(dir.file("int0")), "int\n");
  EXPECT_EQ(test::read_file(dir.file("int1")), "int\n");
  EXPECT_TRUE(any_note_has(seen, "forwarded to every rank")) << all_notes(seen);
}

TEST(LaunchLocal, TheOverallLimitKillsRanksThatNeverEnd) {
  Seen seen;
  LaunchOptions o = sh_ranks({"sleep 20", "sleep 20"}, seen);
  o.limit_s = 0.5;
  const auto t0 = Clock::now();
  const LaunchResult r = launch_local(o);
  EXPECT_LT(seconds_since(t0), 5);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(r.first_failure);
  EXPECT_TRUE(r.killed);
  EXPECT_NE(r.reason.find("limit of 0.5 s"), std::string::npos) << r.reason;
}

TEST(LaunchLocal, ARankStillRunningPastTheFinishWindowIsKilled) {
  Seen seen;
  LaunchOptions o = sh_ranks({"sleep 20", "exit 0"}, seen);
  o.finish_window_s = 0.5;
  const LaunchResult r = launch_local(o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.killed);
  EXPECT_NE(r.reason.find("after rank 1 finished"), std::string::npos) << r.reason;
}

TEST(LaunchLocal, AMissingProgramIsAnIoErrorNamingIt) {
  Seen seen;
  LaunchOptions o = sh_ranks({"sleep 20"}, seen);
  o.rank_argv.push_back({"/nonexistent/llmprof", "train"});
  const auto t0 = Clock::now();
  try {
    launch_local(o);
    ADD_FAILURE() << "started a missing program";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start rank 1: '/nonexistent/llmprof'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(seconds_since(t0), 5);  // rank 0, already started, was killed at once
}

}  // namespace
}  // namespace llmprof::dist
