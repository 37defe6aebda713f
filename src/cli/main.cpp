// llmprof: train transformer LMs through an instrumented loop and see where time, memory, FLOPs
// and energy go. Only main catches errors: it prints one line and exits 2 (bad input), 130
// (stopped by a signal during set-up) or 1.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "llmprof/base/printable.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/log.h"
#include "llmprof/version.h"

namespace {

// The last line of defence: whatever a message embeds, the terminal gets one line of printable
// ASCII (control and high bytes escaped), at most this many bytes of message before the cut.
constexpr size_t kMaxMessageBytes = 4096;

// Prints "llmprof: error: <message>" and the optional hint line to stderr.
void print_error(const std::string& message, const char* hint = nullptr) {
  std::fprintf(stderr, "llmprof: error: %s\n",
               llmprof::printable(message, kMaxMessageBytes).c_str());
  if (hint != nullptr) std::fprintf(stderr, "%s\n", hint);
}

// CLI11's message in the user's words where it speaks the parser's: an option given twice reads
// "--out: At Most 1 required but received 2".
std::string usage_message(const CLI::ParseError& e) {
  const std::string what = e.what();
  const std::string marker = ": At Most 1 required but received ";
  const size_t at = what.find(marker);
  if (at != std::string::npos) {
    return what.substr(0, at) + " was given " + what.substr(at + marker.size()) +
           " times; give it once";
  }
  return what;
}

// Where a command needs a subcommand (llmprof, llmprof config), a word naming none is an unknown
// subcommand, said as such (CLI11 alone answers "A subcommand is required").
void check_subcommand_words(const CLI::App& app, int argc, char** argv) {
  const CLI::App* level = &app;
  for (int i = 1; i < argc && level->get_require_subcommand_min() > 0; ++i) {
    const std::string word = argv[i];
    if (!word.empty() && word[0] == '-') return;  // an option (--help, --version): CLI11's
    std::vector<std::string> names;
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : level->get_subcommands(nullptr)) {
      names.push_back(sub->get_name());
      if (sub->get_name() == word) next = sub;
    }
    if (next == nullptr) {
      const std::string of = level == &app ? std::string() : " of llmprof " + level->get_name();
      std::string hint = llmprof::config::nearest_name_hint(word, names);  // "; did you mean ..."
      if (!hint.empty()) hint = " (" + hint.substr(2) + ")";
      throw llmprof::UsageError(fmt::format("unknown subcommand '{}'{}{}; the subcommands are {}",
                                            llmprof::printable(word), of, hint,
                                            fmt::join(names, ", ")));
    }
    level = next;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"llmprof: a native LLM training profiler. Trains nanoGPT-style models through an "
               "instrumented loop and writes per-step phase timings, throughput, FLOPs and MFU "
               "to a run directory."};
  app.set_version_flag("--version", std::string("llmprof ") + llmprof::kVersion + " (" +
                                        llmprof::kGitSha + ", " + llmprof::kBuildType + ")");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  llmprof train --config configs/quickstart.yaml\n"
      "  llmprof train --config configs/quickstart.yaml --set train.batch_size=32 --set "
      "optim.lr=3e-4\n"
      "  llmprof config show configs/quickstart.yaml --set model.n_layer=6\n"
      "  llmprof config keys\n"
      "Exit codes: 0 ok, 1 runtime failure or diverged run, 2 bad usage/config/data, 130 "
      "interrupted.\n"
      "Guide: docs/index.md (one page per task; README.md lists them).");
  int exit_code = 0;
  llmprof::cli::add_train_command(app, exit_code);
  llmprof::cli::add_eval_command(app, exit_code);
  llmprof::cli::add_bench_command(app, exit_code);
  llmprof::cli::add_config_command(app, exit_code);
  llmprof::cli::add_sweep_command(app, exit_code);
  llmprof::cli::add_peak_command(app, exit_code);
  llmprof::cli::add_report_command(app, exit_code);
  llmprof::cli::add_plot_command(app, exit_code);
  llmprof::cli::add_export_command(app, exit_code);
  llmprof::cli::add_tokenize_command(app, exit_code);
  llmprof::cli::add_plan_command(app, exit_code);
  llmprof::cli::add_check_command(app, exit_code);
  llmprof::cli::add_tune_command(app, exit_code);
  // Each subcommand's help names its page of the user guide (docs/guide/, README's "The guide").
  const std::pair<const char*, const char*> guide_pages[] = {
      {"train", "docs/guide/training.md"},   {"eval", "docs/guide/eval-bench.md"},
      {"bench", "docs/guide/eval-bench.md"}, {"config", "docs/guide/training.md"},
      {"sweep", "docs/guide/sweeps.md"},     {"peak", "docs/guide/roofline.md"},
      {"report", "docs/guide/report.md"},    {"plot", "docs/guide/report.md"},
      {"export", "docs/guide/models.md"},    {"tokenize", "docs/guide/models.md"},
      {"plan", "docs/guide/plan.md"},        {"check", "docs/guide/check.md"},
      {"tune", "docs/guide/tune.md"}};
  for (const auto& [name, page] : guide_pages) {
    CLI::App* sub = app.get_subcommand(name);
    // A subcommand without a footer of its own inherited the top-level one: replace it.
    std::string footer = sub->get_footer();
    if (footer == app.get_footer()) footer.clear();
    sub->footer((footer.empty() ? "" : footer + "\n") + "Guide: " + page);
  }
  try {
    llmprof::output::init_logging(false);
    check_subcommand_words(app, argc, argv);
    app.parse(argc, argv);
    // What went to stdout must have arrived: a full disk or /dev/full behind a redirect is an
    // error, not a silent loss (fmt::print throws on the writes that fail at once).
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      print_error(std::string("cannot write the output (stdout): ") + std::strerror(errno));
      return llmprof::kExitRuntime;
    }
    return exit_code;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    print_error(usage_message(e), "Run 'llmprof --help' for usage.");
    return llmprof::kExitUsage;
  } catch (const llmprof::Error& e) {
    print_error(e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::string what = e.what();
    print_error(what.substr(0, what.find('\n')));
    return llmprof::kExitRuntime;
  } catch (...) {  // nothing leaves main as an abort, whatever a library throws
    print_error("unexpected error of unknown type");
    return llmprof::kExitRuntime;
  }
}
