#include "train_launch.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "llmprof/base/printable.h"
#include "llmprof/config/schema.h"
#include "llmprof/dist/launch.h"
#include "llmprof/error.h"
#include "llmprof/process/child.h"

namespace llmprof::cli {

namespace {

// A generous bound on how long ranks may run on after one of them finished cleanly (rank 0
// merging the run directory, a last checkpoint): past it, a rank still running is a hang.
constexpr double kFinishWindowS = 600;
// How long ranks get to stop by themselves after the first failure or a Ctrl-C, beyond the
// process group's own timeout (ddp.timeout_s) within which they notice a lost rank.
constexpr double kGraceMarginS = 10;

// Several tasks under srun, or ranks under a torchrun-style launcher: each is a rank already.
void check_not_launched_elsewhere(int64_t nproc) {
  if (std::getenv(dist::kLaunchedEnv) != nullptr) {
    throw UsageError(
        fmt::format("--nproc {}: this process is already a rank started by --nproc", nproc));
  }
  for (const char* var : {"SLURM_NTASKS", "WORLD_SIZE"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && std::atol(v) > 1) {
      throw UsageError(fmt::format(
          "--nproc {} with {}={}: each of those tasks is a rank already; drop --nproc (or run "
          "one task with --nproc)",
          nproc, var, v));
    }
  }
}

int master_port() {
  const char* given = std::getenv("MASTER_PORT");
  if (given == nullptr || *given == '\0') return dist::free_port();
  const int port = dist::parse_port(given);
  dist::check_port_free(port);
  return port;
}

}  // namespace

int launch_self(int64_t nproc, int64_t threads, double timeout_s, bool train_flags) {
  check_not_launched_elsewhere(nproc);
  dist::LaunchOptions opts;
  opts.master_port = master_port();
  const int64_t split = dist::threads_per_rank(process::usable_cores(), nproc);
  opts.threads = threads > 0 ? threads : split;
  opts.grace_s = timeout_s + kGraceMarginS;
  opts.finish_window_s = kFinishWindowS;
  std::vector<std::string> args = dist::self_command_line();
  args.erase(args.begin());  // argv[0]: the ranks run /proc/self/exe's target
  args = dist::strip_nproc(args);
  const std::string exe = process::self_executable();
  for (int64_t rank = 0; rank < nproc; ++rank) {
    std::vector<std::string> argv{exe};
    const auto rest =
        train_flags ? dist::rank_args(args, rank, threads > 0 ? 0 : split) : args;
    argv.insert(argv.end(), rest.begin(), rest.end());
    opts.rank_argv.push_back(std::move(argv));
  }
  opts.on_rank_line = [](int64_t rank, const std::string& line) {
    std::fprintf(stderr, "[rank %lld] %s\n", static_cast<long long>(rank),
                 printable(line, 4096).c_str());
  };
  opts.on_note = [](const std::string& note) {
    std::fprintf(stderr, "llmprof: %s\n", note.c_str());
  };
  const dist::LaunchResult r = dist::launch_local(opts);
  return r.exit_code;
}

int launch_train(const std::string& config_path,
                 const std::vector<std::string>& overrides,
                 int64_t nproc) {
  check_not_launched_elsewhere(nproc);
  const config::Config cfg = config::load_config(config_path, overrides);  // bad input: exit 2 now
  return launch_self(nproc, cfg.threads, cfg.ddp.timeout_s, true);
}

}  // namespace llmprof::cli
