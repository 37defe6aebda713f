// The llmprof executable as a user runs it: exit codes, one-line errors naming file/key/line,
// crash safety of the run directory under SIGKILL, SIGINT and SIGTERM, unwritable output.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "llmprof/output/csv.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof {
namespace {

using test::run_llmprof;
using test::expect_contains;
using test::ScratchDir;

const std::string& kTiny = test::kTinyConfig;

TEST(CliUsage, VersionAndHelpExitZero) {
  auto v = run_llmprof({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  expect_contains(v.output, "llmprof 0.");
  auto h = run_llmprof({"train", "--help"});
  EXPECT_EQ(h.exit_code, 0);
  expect_contains(h.output, "--config");
}

TEST(CliUsage, BadArgumentsExitTwoWithOneLine) {
  auto none = run_llmprof({});
  EXPECT_EQ(none.exit_code, 2);
  auto unknown = run_llmprof({"train", "--config", kTiny, "--bogus"});
  EXPECT_EQ(unknown.exit_code, 2);
  expect_contains(unknown.output, "--bogus");
  auto missing = run_llmprof({"train"});
  EXPECT_EQ(missing.exit_code, 2);
  expect_contains(missing.output, "--config");
}

TEST(CliUsage, ConfigHelpShowsConfigExamplesNotTrainOnes) {
  auto h = run_llmprof({"config", "--help"});
  EXPECT_EQ(h.exit_code, 0);
  expect_contains(h.output, "llmprof config show");
  EXPECT_EQ(h.output.find("llmprof train"), std::string::npos) << h.output;
}

TEST(CliUsage, AnOptionGivenTwiceSaysSoInWords) {
  ScratchDir dir;
  auto r = run_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--out", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  expect_contains(r.output, "--out was given 2 times; give it once");
  EXPECT_EQ(r.output.find("At Most"), std::string::npos) << r.output;
}

TEST(CliUsage, AnUnknownSubcommandIsNamedWithTheNearestOne) {
  auto bogus = run_llmprof({"bogus"});
  EXPECT_EQ(bogus.exit_code, 2);
  expect_contains(bogus.output,
                  "llmprof: error: unknown subcommand 'bogus'; the subcommands are train, eval");
  EXPECT_EQ(bogus.output.find("A subcommand is required"), std::string::npos) << bogus.output;
  auto typo = run_llmprof({"trian", "--config", kTiny});
  EXPECT_EQ(typo.exit_code, 2);
  expect_contains(typo.output, "unknown subcommand 'trian' (did you mean 'train'?); the");
  auto nested = run_llmprof({"config", "shwo"});
  EXPECT_EQ(nested.exit_code, 2);
  expect_contains(nested.output,
                  "unknown subcommand 'shwo' of llmprof config (did you mean 'show'?); the "
                  "subcommands are show, keys");
  // Without a word, CLI11's own answer stands.
  EXPECT_EQ(run_llmprof({"config"}).exit_code, 2);
}

TEST(CliUsage, AnEmptyDeviceIsNamedAsEmpty) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"plan", "--config", kTiny, "--device", ""},
           {"peak", "--device", ""},
           {"sweep", "--config", kTiny, "--plan", "--plan-device", ""}}) {
    auto r = run_llmprof(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.output;
    expect_contains(r.output, "device: the value is empty ('')");
    EXPECT_EQ(r.output.find("--device cuda"), std::string::npos) << r.output;
  }
}

// Llama's 0.post_attention_layernorm is 26 characters: the module column grows to fit it, so the
// dtype and bytes columns stay aligned.
TEST(CliPlan, LongModuleNamesKeepTheColumnsAligned) {
  auto r =
      run_llmprof({"plan", "--config", std::string(LLMPROF_SOURCE_DIR) + "/configs/llama_tiny.yaml",
                   "--device", "h200", "--set", "model.vocab_size=65"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t start = r.output.find("saved for backward by one block");
  ASSERT_NE(start, std::string::npos) << r.output;
  std::istringstream lines(r.output.substr(start));
  std::string line;
  std::getline(lines, line);
  // Name, dtype and bytes, the last two right-aligned: aligned rows are all one length.
  std::vector<size_t> lengths;
  bool long_name = false;
  while (std::getline(lines, line) && !line.empty()) {
    long_name |= line.find("0.post_attention_layernorm ") != std::string::npos;
    lengths.push_back(line.size());
  }
  EXPECT_TRUE(long_name) << r.output;
  ASSERT_GE(lengths.size(), 2u) << r.output;
  for (size_t n : lengths) EXPECT_EQ(n, lengths.front()) << r.output.substr(start);
}

// Every step warm-up: the console says no step was measured, how many were warm-up and which key
// to change, never "null ms" or a "nan" loss.
TEST(CliTrain, AllWarmupSaysNoStepWasMeasured) {
  ScratchDir dir;
  auto r = run_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--quiet", "--set",
                        "output.name=warm", "--set", "schedule.max_steps=3", "--set",
                        "schedule.warmup_steps=1", "--set", "profile.warmup_steps=5", "--set",
                        "train.eval_interval=0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output,
                  "step time:  not measured: all 3 steps were warm-up "
                  "(profile.warmup_steps=5)");
  expect_contains(r.output, "--set profile.warmup_steps=N with N < 3");
  expect_contains(r.output, "throughput: not measured");
  expect_contains(r.output, "val none (no evaluation ran)");
  EXPECT_EQ(r.output.find("null"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("nan"), std::string::npos) << r.output;
}

TEST(CliTrain, WarmupLongerThanTheRunIsClampedWithAWarningNamingBothKeys) {
  ScratchDir dir;
  auto r = run_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--set",
                        "output.name=short", "--set", "schedule.warmup_steps=50", "--set",
                        "schedule.max_steps=3", "--set", "train.eval_interval=0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "schedule.warmup_steps 50 exceeds schedule.max_steps 3");
  const auto summary = nlohmann::json::parse(test::read_file(dir.file("short/summary.json")));
  EXPECT_EQ(summary["config_notes"].size(), 1u);
  expect_contains(test::read_file(dir.file("short/config.yaml")), "warmup_steps: 3");
}

// The bytes of a message a terminal can show: no control byte but the line ends, nothing >= 0x7f.
void expect_printable(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    ASSERT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f))
        << "raw byte 0x" << std::hex << int(c) << " at " << std::dec << i << " in:\n"
        << text.substr(0, 2000);
  }
}

TEST(CliConfigErrors, BinaryFileAsConfigGivesAReadableOneLineError) {
  const std::string binary = test::llmprof_binary();  // an ELF file: NULs, 0x7f, high bytes
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"train", "--config", binary},
        std::vector<std::string>{"config", "show", binary},
        std::vector<std::string>{"sweep", "--config", binary}}) {
    auto r = run_llmprof(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.output.substr(0, 2000);
    expect_printable(r.output);
    expect_contains(r.output, fs::path(binary).filename().string());
    EXPECT_LT(r.output.size(), 2000u) << r.output;
  }
}

TEST(CliConfigErrors, EmptyOrCommentsOnlyConfigIsRefusedByEveryCommand) {
  ScratchDir dir;
  test::write_file(dir.file("empty.yaml"), "");
  test::write_file(dir.file("comments.yaml"), "# all defaults?\n\n   \n# model:\n");
  for (const std::string file : {"empty.yaml", "comments.yaml"}) {
    const std::string path = dir.file(file);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"train", "--config", path, "--out", dir.path()},
          std::vector<std::string>{"config", "show", path},
          std::vector<std::string>{"sweep", "--config", path, "--out", dir.path()}}) {
      auto r = run_llmprof(args);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << file << ": " << r.output;
      expect_contains(r.output, file + ": the config file is empty");
    }
  }
  EXPECT_FALSE(fs::exists(dir.file("empty"))) << "no run directory for a refused config";
}

TEST(CliConfigErrors, NumberBeyondADoubleSaysOutOfRange) {
  auto r = run_llmprof({"config", "show", kTiny, "--set", "optim.lr=1e400"});
  EXPECT_EQ(r.exit_code, 2);
  expect_contains(r.output, "optim.lr: 1e400 is out of range");
}

TEST(CliConfigErrors, EachClassExitsTwoNamingTheProblem) {
  ScratchDir dir;
  struct Case {
    std::string yaml;
    std::vector<std::string> sets;
    std::vector<std::string> expect;
  };
  std::vector<Case> cases = {
      {"model:\n  n_layer: abc\n", {}, {"model.n_layer", "bad.yaml", "line 2"}},
      {"model:\n  n_layr: 2\n", {}, {"model.n_layr", "model.n_layer", "line 2"}},
      {"train:\n  batch_size: 0\n", {}, {"train.batch_size", "0"}},
      {"model:\n  n_head: 5\n  n_embd: 128\n", {}, {"model.n_head", "model.n_embd"}},
      {"model:\n  n_layer: [1, 2\n", {}, {"bad.yaml", "line"}},
      {"threads: 1\n", {"optim.lr=fast"}, {"optim.lr", "fast"}},
      {"threads: 1\n", {"optim.lrr=1"}, {"optim.lrr", "optim.lr"}},
      {"threads: 1\n", {"optim.lr"}, {"key=value"}},
  };
  for (const auto& c : cases) {
    test::write_file(dir.file("bad.yaml"), c.yaml);
    std::vector<std::string> args = {"train", "--config", dir.file("bad.yaml"), "--out",
                                     dir.path()};
    for (const auto& s : c.sets) args.insert(args.end(), {"--set", s});
    auto r = run_llmprof(args);
    EXPECT_EQ(r.exit_code, 2) << c.yaml << r.output;
    for (const auto& e : c.expect) expect_contains(r.output, e);
    EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
  }
  test::write_file(dir.file("bad.json"), "{\n  \"model\": {\"n_layer\": 2,}\n}\n");
  auto json = run_llmprof({"config", "show", dir.file("bad.json")});
  EXPECT_EQ(json.exit_code, 2);
  expect_contains(json.output, "bad.json");
  expect_contains(json.output, "line 2");
  auto missing = run_llmprof({"train", "--config", dir.file("nope.yaml")});
  EXPECT_EQ(missing.exit_code, 2);
  expect_contains(missing.output, "nope.yaml");
  // A missing corpus is a data error: exit 2 naming the path, and no run directory left behind.
  auto no_data = run_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--set",
                              "data.path=" + dir.file("missing.txt")});
  EXPECT_EQ(no_data.exit_code, 2);
  expect_contains(no_data.output, "missing.txt");
}

TEST(CliPeak, PrintsAPeakAndRejectsBadArguments) {
  auto ok = run_llmprof({"peak", "--threads", "1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  expect_contains(ok.output, "peak_flops_per_s: ");
  // The triad bandwidth: a figure within what any machine llmprof runs on can reach (1 GB/s to
  // 10 TB/s), and copy moves at a similar rate (STREAM's copy and triad differ by well under 4x).
  const auto value_of = [&](const std::string& key) {
    const size_t at = ok.output.find(key + ": ");
    EXPECT_NE(at, std::string::npos) << key << " missing in " << ok.output;
    return at == std::string::npos ? 0.0 : std::stod(ok.output.substr(at + key.size() + 2));
  };
  const double triad = value_of("peak_bytes_per_s"), copy = value_of("copy_bytes_per_s");
  EXPECT_GT(triad, 1e9);
  EXPECT_LT(triad, 1e13);
  EXPECT_GT(copy / triad, 0.25);
  EXPECT_LT(copy / triad, 4.0);
  expect_contains(ok.output, "bandwidth_method: best of 5 fp32 copy/triad");
  // --flops-only (a sweep's shared peak): the matmul peak, no bandwidth measured.
  auto flops = run_llmprof({"peak", "--threads", "1", "--flops-only"});
  EXPECT_EQ(flops.exit_code, 0) << flops.output;
  expect_contains(flops.output, "peak_flops_per_s: ");
  EXPECT_EQ(flops.output.find("peak_bytes_per_s"), std::string::npos) << flops.output;
  auto comm = run_llmprof({"peak", "--comm", "--flops-only"});
  EXPECT_EQ(comm.exit_code, 2) << comm.output;
  expect_contains(comm.output, "--flops-only is not an option of --comm");
  auto bad = run_llmprof({"peak", "--precision", "fp16"});
  EXPECT_EQ(bad.exit_code, 2);
  expect_contains(bad.output, "--precision fp16: CPU matmuls have no fp16 path");
  auto typo = run_llmprof({"peak", "--precision", "fp61"});
  EXPECT_EQ(typo.exit_code, 2);
  expect_contains(typo.output, "--precision 'fp61'");
  auto device = run_llmprof({"peak", "--device", "cuda:x"});
  EXPECT_EQ(device.exit_code, 2);
  expect_contains(device.output, "the device ordinal after 'cuda:' must be 0..1023");
  auto neg = run_llmprof({"peak", "--threads", "-1"});
  EXPECT_EQ(neg.exit_code, 2);
  expect_contains(neg.output, "--threads");
}

TEST(CliExport, BadInputIsExit2NamingWhatIsWrong) {
  test::ScratchDir dir("cli_export");
  auto format = run_llmprof({"export", dir.path(), "--format", "onnx", "--out", dir.file("o")});
  EXPECT_EQ(format.exit_code, 2) << format.output;
  expect_contains(format.output, "--format 'onnx'");
  auto missing = run_llmprof({"export", dir.file("no-such-run"), "--out", dir.file("o")});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  expect_contains(missing.output, dir.file("no-such-run"));
  auto no_out = run_llmprof({"export", dir.path()});
  EXPECT_EQ(no_out.exit_code, 2) << no_out.output;
  expect_contains(no_out.output, "--out");
  EXPECT_FALSE(std::filesystem::exists(dir.file("o")));  // nothing half-written
}

TEST(CliConfig, ShowPrintsResolvedYamlAndKeysListsDocs) {
  auto show = run_llmprof({"config", "show", kTiny, "--set", "model.n_layer=3"});
  EXPECT_EQ(show.exit_code, 0) << show.output;
  expect_contains(show.output, "n_layer: 3");
  auto keys = run_llmprof({"config", "keys"});
  EXPECT_EQ(keys.exit_code, 0);
  expect_contains(keys.output, "train.batch_size");
  expect_contains(keys.output, "runtime.malloc_tuning");
}

TEST(CliTrain, PrintsSummaryAndWritesRunDirectory) {
  ScratchDir dir;
  auto r = run_llmprof(
      {"train", "--config", kTiny, "--out", dir.path(), "--quiet", "--set", "output.name=r1"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "status:     completed");
  EXPECT_TRUE(fs::exists(dir.file("r1/summary.json")));
  auto again =
      run_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--set", "output.name=r1"});
  EXPECT_EQ(again.exit_code, 2);
  expect_contains(again.output, "already exists");
}

TEST(CliTrain, NanLossStopsTheRunAsDivergedWithExitOne) {
  ScratchDir dir;
  auto r = run_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--quiet", "--set",
                        "output.name=nan", "--set", "optim.name=sgd", "--set", "optim.lr=10",
                        "--set", "optim.grad_clip=0", "--set", "schedule.warmup_steps=0", "--set",
                        "schedule.max_steps=200"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "diverged");
  expect_contains(r.output, "lower optim.lr");
  auto summary = nlohmann::json::parse(test::read_file(dir.file("nan/summary.json")));
  EXPECT_EQ(summary["status"], "diverged");
  auto rows = output::parse_csv(test::read_file(dir.file("nan/steps.csv")));
  ASSERT_GE(rows.size(), 2u);
  EXPECT_LT(rows.size() - 1, 200u) << "stopped early";
  EXPECT_EQ(rows.back()[1], "nan") << "the diverged step's loss is kept";
  // One step convention: the step named in the message is the last steps.csv row's number, and
  // the count of rows (steps numbered from 1).
  const std::string last = rows.back()[0];
  EXPECT_EQ(last, std::to_string(rows.size() - 1));
  expect_contains(r.output, "loss became nan at step " + last + " ");
}

// Waits until path has at least n lines or the timeout passes.
bool wait_for_lines(const std::string& path, size_t n, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string text = test::read_file(path);
    if (static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Two runs given the same output.dir and output.name at once: mkdir decides, one wins, the other
// exits 2 naming the directory and leaves the winner's files alone.
TEST(CliTrain, TwoRunsWithTheSameNameOneWinsTheOtherExitsTwo) {
  ScratchDir dir;
  const std::vector<std::string> args{"train",
                                      "--config",
                                      kTiny,
                                      "--out",
                                      dir.path(),
                                      "--set",
                                      "output.name=same",
                                      "--set",
                                      "schedule.max_steps=5",
                                      "--set",
                                      "train.eval_interval=0"};
  const int a = test::spawn_llmprof(args, dir.file("a.log"));
  const int b = test::spawn_llmprof(args, dir.file("b.log"));
  const int code_a = test::wait_llmprof(a), code_b = test::wait_llmprof(b);
  const std::string log_a = test::read_file(dir.file("a.log"));
  const std::string log_b = test::read_file(dir.file("b.log"));
  ASSERT_EQ(std::min(code_a, code_b), 0) << log_a << "\n---\n" << log_b;
  ASSERT_EQ(std::max(code_a, code_b), 2) << log_a << "\n---\n" << log_b;
  const std::string& loser = code_a == 2 ? log_a : log_b;
  expect_contains(loser, "run directory '" + dir.file("same") + "' already exists");
  const std::string run = dir.file("same");
  const auto summary = nlohmann::json::parse(test::read_file(run + "/summary.json"));
  EXPECT_EQ(summary["status"], "completed");
  const auto rows = output::parse_csv(test::read_file(run + "/steps.csv"));
  EXPECT_EQ(rows.size(), 6u) << "a header and 5 steps, nothing from the other run";
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i][0], std::to_string(i));
  EXPECT_TRUE(fs::exists(run + "/config.yaml"));
  EXPECT_EQ(test::read_file(run + "/log.txt").find("already exists"), std::string::npos);
}

TEST(CliTrain, SigkillMidRunLeavesReadableStepsCsv) {
  ScratchDir dir;
  int pid = test::spawn_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--set",
                                 "output.name=killed", "--set", "schedule.max_steps=100000"},
                                dir.file("log"));
  ASSERT_TRUE(wait_for_lines(dir.file("killed/steps.csv"), 6, 60))
      << test::read_file(dir.file("log"));
  ::kill(pid, SIGKILL);
  EXPECT_EQ(test::wait_llmprof(pid), 128 + SIGKILL);
  auto rows = output::parse_csv(test::read_file(dir.file("killed/steps.csv")));
  ASSERT_GE(rows.size(), 6u);
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), rows[0].size()) << "row " << i << " is torn";
    EXPECT_EQ(std::stoll(rows[i][0]), static_cast<long long>(i)) << "steps count from 1";
  }
  EXPECT_FALSE(fs::exists(dir.file("killed/summary.json")));
}

// Sends sig to a run once it has 3 step rows: the step finishes, summary.json says
// "interrupted ... stopped by signal <sig> after step N" with N the rows written, exit 130.
void check_stop_signal(int sig) {
  ScratchDir dir;
  int pid = test::spawn_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--set",
                                 "output.name=stop", "--set", "schedule.max_steps=100000"},
                                dir.file("log"));
  ASSERT_TRUE(wait_for_lines(dir.file("stop/steps.csv"), 4, 60));
  ::kill(pid, sig);
  EXPECT_EQ(test::wait_llmprof(pid), 130) << test::read_file(dir.file("log"));
  auto summary = nlohmann::json::parse(test::read_file(dir.file("stop/summary.json")));
  EXPECT_EQ(summary["status"], "interrupted");
  auto rows = output::parse_csv(test::read_file(dir.file("stop/steps.csv")));
  EXPECT_EQ(summary["steps"]["completed"].get<size_t>(), rows.size() - 1);
  // "stopped by signal 2 after step N" names the last step written, which is also the count.
  EXPECT_EQ(rows.back()[0], std::to_string(rows.size() - 1));
  expect_contains(summary["message"].get<std::string>(),
                  fmt::format("stopped by signal {} after step {}", sig, rows.back()[0]));
  const std::string log = test::read_file(dir.file("log"));
  EXPECT_EQ(log.find("terminate called"), std::string::npos) << log;
}

TEST(CliTrain, SigintFinishesTheStepAndWritesInterrupted) { check_stop_signal(SIGINT); }

TEST(CliTrain, SigtermFinishesTheStepWritesInterruptedAndExits130) { check_stop_signal(SIGTERM); }

// True once pid has a handler for sig (SigCgt in /proc/<pid>/status), false if it exits or the
// timeout passes first.
bool wait_for_handler(int pid, int sig, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  const uint64_t bit = uint64_t{1} << (sig - 1);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string status = test::read_file(fmt::format("/proc/{}/status", pid));
    const size_t at = status.find("SigCgt:\t");
    if (at == std::string::npos) return false;  // gone (or a zombie: no SigCgt line)
    if (std::stoull(status.substr(at + 8, 16), nullptr, 16) & bit) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

// SIGTERM while the model and data are being set up (a 30M-character generated corpus makes that
// last a second or more): the run stops with exit 130 and a message saying when, not killed by the
// signal. The handler is in place from set-up on: the test waits for it, then signals at once.
TEST(CliTrain, SigtermDuringSetUpExits130) {
  ScratchDir dir;
  const int pid = test::spawn_llmprof(
      {"train", "--config", kTiny, "--out", dir.path(), "--set", "output.name=setup", "--set",
       "data.generated_chars=30000000", "--set", "schedule.max_steps=100000"},
      dir.file("log"));
  ASSERT_TRUE(wait_for_handler(pid, SIGTERM, 60)) << test::read_file(dir.file("log"));
  ::kill(pid, SIGTERM);
  const int code = test::wait_llmprof(pid);
  const std::string log = test::read_file(dir.file("log"));
  ASSERT_EQ(code, 130) << log;
  EXPECT_EQ(log.find("terminate called"), std::string::npos) << log;
  if (fs::exists(dir.file("setup"))) {  // the signal came as the run directory was being made
    const auto summary = nlohmann::json::parse(test::read_file(dir.file("setup/summary.json")));
    EXPECT_EQ(summary["status"], "interrupted");
    expect_contains(summary["message"].get<std::string>(),
                    "stopped by signal 15 before the first step");
  } else {
    expect_contains(log, "stopped by signal 15 during set-up, before the run directory was made");
  }
}

// `llmprof report` on a run that is still appending rows, five times over: each reads a
// consistent prefix (exit 0, valid JSON), calls the run incomplete, and leaves a partial last row
// out with a warning rather than failing on it.
TEST(CliReport, ReadsARunThatIsStillWriting) {
  ScratchDir dir;
  const int pid = test::spawn_llmprof({"train", "--config", kTiny, "--out", dir.path(), "--set",
                                       "output.name=live", "--set", "schedule.max_steps=100000"},
                                      dir.file("log"));
  ASSERT_TRUE(wait_for_lines(dir.file("live/steps.csv"), 4, 60))
      << test::read_file(dir.file("log"));
  for (int i = 0; i < 5; ++i) {
    const auto r = run_llmprof({"report", dir.file("live"), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const size_t brace = r.output.find('{');  // warnings, if any, come before the document
    ASSERT_NE(brace, std::string::npos) << r.output;
    const auto doc = nlohmann::json::parse(r.output.substr(brace));
    EXPECT_EQ(doc["incomplete_runs"], nlohmann::json::array({"live"})) << r.output;
  }
  ::kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_llmprof(pid), 130) << test::read_file(dir.file("log"));
  const auto done = run_llmprof({"report", dir.file("live"), "--format", "json"});
  ASSERT_EQ(done.exit_code, 0) << done.output;
  EXPECT_EQ(nlohmann::json::parse(done.output)["incomplete_runs"], nlohmann::json::array())
      << "a finished (interrupted) run has its summary.json";
}

// stdout that cannot take the output (a full disk behind a redirect; /dev/full here) is a runtime
// failure with one line naming it, not a silent loss with exit 0.
TEST(CliExitCodes, OutputThatCannotBeWrittenExitsOne) {
  ScratchDir dir;
  const std::string cmd = test::llmprof_binary() + " config keys > /dev/full 2> " + dir.file("err");
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string err = test::read_file(dir.file("err"));
  expect_contains(err, "llmprof: error:");
  expect_contains(err, std::strerror(ENOSPC));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace llmprof
