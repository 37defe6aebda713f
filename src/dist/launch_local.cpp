// launch_local: the rank processes of `llmprof train --nproc N` and the loop that watches them.
//
// One loop, polled every kPollMs: read the stderr of ranks > 0 (line by line to on_rank_line),
// forward any SIGINT/SIGTERM the launcher got, reap or notice stopped ranks (WUNTRACED), and
// enforce the deadlines (grace after the first failure or a stop signal, the finish window after
// a clean exit, the overall limit; none once a rank failed and only stopped ranks are left). Past a
// deadline every live rank gets SIGKILL (a stopped one too: SIGKILL needs no SIGCONT), and the loop
// ends once all are reaped, or kReapLimitS after.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <set>

#include "llmprof/dist/launch.h"
#include "llmprof/error.h"
#include "llmprof/process/child.h"

namespace llmprof::dist {
namespace {

constexpr int kPollMs = 50;
constexpr double kReapLimitS = 10;  // after SIGKILL: a rank not reaped by then is given up on

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Rank {
  int64_t rank = 0;
  pid_t pid = -1;
  int err_fd = -1;      // read end of its stderr pipe (ranks > 0); -1 when none or closed
  std::string partial;  // stderr bytes after the last newline
  bool reaped = false;
  bool stopped = false;  // seen stopped (reported once)
};

// The variables of rank `rank` that replace this process's: its place, the rendezvous, threads.
std::vector<std::pair<std::string, std::string>> rank_environment(const LaunchOptions& o,
                                                                  int64_t rank) {
  const int64_t world = static_cast<int64_t>(o.rank_argv.size());
  std::vector<std::pair<std::string, std::string>> set = {
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(world)},
      {"LOCAL_RANK", std::to_string(rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(world)},
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(o.master_port)},
      {kLaunchedEnv, "1"}};
  if (o.threads > 0) set.emplace_back("OMP_NUM_THREADS", std::to_string(o.threads));
  return set;
}

// Starts one rank; its pid. The child: own process group (a terminal's Ctrl-C reaches the
// launcher only, which forwards it once), SIGTERM if the launcher dies, stdin /dev/null; ranks > 0
// write stdout to /dev/null and stderr into a pipe.
pid_t start_rank(const LaunchOptions& o, Rank& r) {
  const std::vector<std::string>& argv = o.rank_argv[static_cast<size_t>(r.rank)];
  if (argv.empty() || ::access(argv[0].c_str(), X_OK) != 0) {
    throw IoError(fmt::format("cannot start rank {}: '{}' is not an executable", r.rank,
                              argv.empty() ? "" : argv[0]));
  }
  process::ChildSpec spec;
  spec.argv = argv;
  spec.name = fmt::format("rank {}", r.rank);
  spec.env = rank_environment(o, r.rank);
  spec.output = r.rank > 0 ? process::Output::kStderrPipe : process::Output::kInherit;
  spec.own_group = true;
  const process::Child child = process::spawn(spec);
  r.err_fd = child.err_fd;
  return child.pid;
}

void signal_rank(const Rank& r, int sig) {
  if (!r.reaped) process::send_signal(r.pid, sig);  // its process group: it and its children
}

// Reads what rank r has written to stderr; whole lines go to the callback. At eof (or when
// final) the rest goes too and the pipe is closed.
void drain(Rank& r, const LaunchOptions& o, bool final) {
  if (r.err_fd < 0) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(r.err_fd, buf, sizeof buf);
    if (n > 0) {
      r.partial.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = r.partial.find('\n')) != std::string::npos) {
        if (o.on_rank_line) o.on_rank_line(r.rank, r.partial.substr(0, nl));
        r.partial.erase(0, nl + 1);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || final || (n < 0 && errno != EAGAIN)) {
      if (!r.partial.empty() && o.on_rank_line) o.on_rank_line(r.rank, r.partial);
      r.partial.clear();
      ::close(r.err_fd);
      r.err_fd = -1;
    }
    return;
  }
}

void wait_for_output(std::vector<Rank>& ranks, const LaunchOptions& o) {
  std::vector<pollfd> fds;
  for (const Rank& r : ranks) {
    if (r.err_fd >= 0) fds.push_back({r.err_fd, POLLIN, 0});
  }
  if (fds.empty()) {
    ::usleep(kPollMs * 1000);
    return;
  }
  ::poll(fds.data(), fds.size(), kPollMs);  // EINTR (a signal) just ends the wait early
  for (Rank& r : ranks) drain(r, o, false);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The watch loop

namespace {

struct Watch {
  Watch(const LaunchOptions& options,
        std::vector<Rank>& all,
        LaunchResult& out,
        const process::StopSignals& stop)
      : o(options), ranks(all), result(out), signals(stop) {}
  const LaunchOptions& o;
  std::vector<Rank>& ranks;
  LaunchResult& result;
  const process::StopSignals& signals;
  Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> deadline;  // past it, live ranks are killed
  std::string deadline_reason;
  std::optional<Clock::time_point> killed_at;
  int signals_forwarded = 0;

  void note(const std::string& text) const {
    if (o.on_note) o.on_note(text);
  }
  void set_deadline(double after_s, const std::string& reason) {
    const auto t = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(after_s));
    if (!deadline || t < *deadline) {
      deadline = t;
      deadline_reason = reason;
    }
  }
  bool all_reaped() const {
    for (const Rank& r : ranks) {
      if (!r.reaped) return false;
    }
    return true;
  }

  void forward_signals() {
    const int count = signals.count();
    if (count == signals_forwarded) return;
    const int sig = signals.signal();
    signals_forwarded = count;
    result.interrupted = true;
    for (const Rank& r : ranks) signal_rank(r, sig);
    note(fmt::format("{} received: forwarded to every rank", ::strsignal(sig)));
    set_deadline(o.grace_s,
                 fmt::format("still running {:g} s after {}", o.grace_s, ::strsignal(sig)));
  }

  void record(Rank& r, int status) {
    RankEnd end = rank_end_of(r.rank, r.pid, status);
    if (end.kind == RankEnd::Kind::kStopped) {
      if (r.stopped) return;
      r.stopped = true;
    } else {
      r.reaped = true;
      drain(r, o, true);
    }
    result.ends.push_back(end);
    if (!is_failure(end)) {
      if (o.finish_window_s > 0) {
        set_deadline(o.finish_window_s, fmt::format("still running {:g} s after rank {} finished",
                                                    o.finish_window_s, end.rank));
      }
      return;
    }
    if (killed_at) return;  // our own SIGKILL
    if (!result.first_failure) {
      result.first_failure = end;
      if (!result.interrupted) note(describe(end));
      set_deadline(o.grace_s,
                   fmt::format("still running {:g} s after rank {} failed", o.grace_s, end.rank));
    } else if (!result.interrupted) {
      note(describe(end));
    }
  }

  void reap() {
    for (Rank& r : ranks) {
      if (r.reaped) continue;
      int status = 0;
      if (process::try_reap(r.pid, status, /*stopped_too=*/true)) record(r, status);
    }
  }

  // A rank failed and every rank still alive is stopped: nothing can finish (a stopped rank's
  // peers time out and exit), so the grace period is not waited out. A SIGSTOPped rank of 2 held
  // the launch 10.7 s after its peer had exited.
  void end_when_only_stopped_ranks_are_left() {
    if (killed_at || !result.first_failure) return;
    bool any_ended = false;
    for (const Rank& r : ranks) {
      if (!r.reaped && !r.stopped) return;
      any_ended = any_ended || r.reaped;
    }
    if (!any_ended) return;
    deadline = Clock::now();
    deadline_reason = "every other rank has ended and the rest are stopped";
  }

  void enforce_deadlines() {
    if (o.limit_s > 0 && seconds_since(start) > o.limit_s && !killed_at) {
      deadline = Clock::now();
      deadline_reason = fmt::format("the launch ran past its limit of {:g} s", o.limit_s);
    }
    if (killed_at || !deadline || Clock::now() < *deadline) return;
    killed_at = Clock::now();
    result.killed = true;
    result.reason = deadline_reason;
    for (const Rank& r : ranks) {
      if (r.reaped) continue;
      note(fmt::format("killing rank {} (pid {}): {}", r.rank, r.pid, deadline_reason));
      signal_rank(r, SIGKILL);
    }
  }
};

}  // namespace

LaunchResult launch_local(const LaunchOptions& options) {
  LaunchResult result;
  std::vector<Rank> ranks(options.rank_argv.size());
  process::StopSignals signals(/*every=*/true);  // each one forwarded to every rank
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].rank = static_cast<int64_t>(i);
    try {
      ranks[i].pid = start_rank(options, ranks[i]);
    } catch (const Error&) {
      for (size_t j = 0; j < i; ++j) {
        signal_rank(ranks[j], SIGKILL);
        process::wait_exit(ranks[j].pid);
        if (ranks[j].err_fd >= 0) ::close(ranks[j].err_fd);
      }
      throw;
    }
  }
  Watch watch{options, ranks, result, signals};
  while (!watch.all_reaped()) {
    wait_for_output(ranks, options);
    watch.forward_signals();
    watch.reap();
    watch.end_when_only_stopped_ranks_are_left();
    watch.enforce_deadlines();
    if (watch.killed_at && seconds_since(*watch.killed_at) > kReapLimitS) {
      for (const Rank& r : ranks) {
        if (!r.reaped)
          watch.note(fmt::format("rank {} (pid {}) did not end after SIGKILL", r.rank, r.pid));
      }
      break;
    }
  }
  for (Rank& r : ranks) drain(r, options, true);
  result.exit_code = launch_exit_code(result.first_failure, result.interrupted);
  if (result.exit_code == kExitOk && result.killed) result.exit_code = kExitRuntime;
  return result;
}

}  // namespace llmprof::dist
