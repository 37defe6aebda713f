// Every model type trains on several ranks: GPT, Llama, DistilBERT MLM and sentiment, each at 2
// ranks of batch B against 1 rank of batch 2B (the same global batch). The first step's loss is
// taken before any update on the same samples, so the mean of the ranks' equals the one rank's
// where each rank's loss averages the same number of targets (GPT, Llama, classification); MLM
// masks a different number of tokens per rank, so only its training is checked.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof {
namespace {

using test::run_llmprof;
using test::ScratchDir;

struct ModelCase {
  const char* name;
  std::vector<std::string> sets;  // beyond tiny_test.yaml
  bool same_first_loss;
  bool needs_shared_data;
};

std::vector<std::string> encoder(const std::string& task) {
  std::vector<std::string> s = {
      "model.type=distilbert",
      "model.n_layer=1",
      "model.n_head=2",
      "model.n_embd=32",
      "model.ffn_dim=64",
      "model.dropout=0",
      "train.task=" + task,
      "data.tokenizer=wordpiece",
      "data.vocab_path=" + test::shared_data("vocab/bert-base-uncased-vocab.txt")};
  if (task == "mlm") {
    s.insert(s.end(), {"data.path=" + test::shared_data("wikitext-2/wiki.valid.tokens"),
                       "data.format=text", "data.max_examples=300"});
  } else {
    s.insert(s.end(),
             {"data.path=" + test::shared_data("sentiment/imdb_test.csv.gz"), "data.format=csv",
              "data.text_column=text", "data.label_column=label", "model.num_labels=2",
              "data.max_examples=200", "data.val_max_examples=50", "model.block_size=32"});
  }
  return s;
}

nlohmann::json summary_of(const std::string& dir) {
  return nlohmann::json::parse(test::read_file(dir + "/summary.json"), nullptr, false);
}

std::vector<std::string> train_args(
    const ScratchDir& dir, const ModelCase& c, const std::string& name, int nproc, int batch) {
  std::vector<std::string> a = {"train",           "--config",
                                test::kTinyConfig, "--out",
                                dir.path(),        "--quiet",
                                "--set",           "output.name=" + name,
                                "--set",           "schedule.max_steps=3",
                                "--set",           "train.eval_interval=0",
                                "--set",           "train.batch_size=" + std::to_string(batch)};
  if (nproc > 1) a.insert(a.end(), {"--nproc", std::to_string(nproc)});
  for (const std::string& s : c.sets) a.insert(a.end(), {"--set", s});
  return a;
}

class NprocModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(NprocModels, TwoRanksTrainAsOneAtTheSameGlobalBatch) {
  const ModelCase& c = GetParam();
  if (c.needs_shared_data &&
      test::read_file(test::shared_data("vocab/bert-base-uncased-vocab.txt")).empty()) {
    GTEST_SKIP() << "shared data absent: " << test::shared_data("vocab");
  }
  ScratchDir dir;
  const auto one = run_llmprof(train_args(dir, c, "one", 1, 4));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto two = run_llmprof(train_args(dir, c, "two", 2, 2));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  const nlohmann::json s = summary_of(dir.file("two"));
  ASSERT_TRUE(s.is_object()) << two.output;
  EXPECT_EQ(s["distributed"]["world_size"], 2);
  EXPECT_EQ(s["distributed"]["ranks"].size(), 2u);
  EXPECT_TRUE(s["throughput"]["tokens_per_s"].is_object()) << s["throughput"];
  const std::string steps1 = test::read_file(dir.file("one/steps.csv"));
  const std::string steps2 = test::read_file(dir.file("two/steps.csv"));
  ASSERT_FALSE(steps2.empty());
  if (!c.same_first_loss) return;
  // step 1's loss: the second column of the first data row.
  const auto first_loss = [](const std::string& csv) {
    const size_t row = csv.find('\n') + 1;
    const size_t at = csv.find(',', row) + 1;
    return std::stod(csv.substr(at, csv.find(',', at) - at));
  };
  EXPECT_NEAR(first_loss(steps2), first_loss(steps1), 1e-4) << steps1 << "\n" << steps2;
}

INSTANTIATE_TEST_SUITE_P(
    EveryModelType,
    NprocModels,
    ::testing::Values(ModelCase{"gpt", {"model.dropout=0"}, true, false},
                      ModelCase{"llama", {"model.type=llama", "model.n_kv_head=1"}, true, false},
                      ModelCase{"distilbert_mlm", encoder("mlm"), false, true},
                      ModelCase{"distilbert_sentiment", encoder("classify"), true, true}),
    [](const ::testing::TestParamInfo<ModelCase>& i) { return std::string(i.param.name); });

// The merged run's report shows what a one-rank report shows: tokens/s, MFU, val loss and every
// phase as figures, the evals that ran, the ranks table; the console's throughput is the global
// one with rank 0's beside it.
TEST(NprocReport, TheTopDirectoryReportsGlobalFiguresNotNa) {
  ScratchDir dir;
  const auto r = run_llmprof({"train", "--config", test::kTinyConfig, "--nproc", "2", "--out",
                              dir.path(), "--set", "output.name=top", "--set",
                              "schedule.max_steps=6", "--set", "train.eval_interval=3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  test::expect_contains(r.output,
                        "(global: all 2 ranks' tokens over the slowest rank's step; "
                        "rank 0 alone ");
  const auto report = run_llmprof({"report", dir.file("top")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const std::string& out = report.output;
  const size_t summary = out.find("| top ");
  ASSERT_NE(summary, std::string::npos) << out;
  std::string row = out.substr(summary, out.find('\n', summary) - summary);
  row = row.substr(0, row.rfind('|', row.size() - 2));  // the energy cell aside: no sensor here
  EXPECT_EQ(row.find("n/a"), std::string::npos) << row;
  test::expect_contains(out, "(2 evals,");
  test::expect_contains(out, "Data-parallel: each of the 2 ranks (top)");
  for (const char* phase : {"| data ", "| forward ", "| backward ", "| optimizer "}) {
    const size_t at = out.find(phase);
    ASSERT_NE(at, std::string::npos) << phase << "\n" << out;
    const std::string line = out.substr(at, out.find('\n', at) - at);
    EXPECT_EQ(line.find("n/a"), std::string::npos) << line;
  }
}

// Ctrl-C before the first step reaches every rank's decision together: rank 1 raises SIGINT at a
// fixed point before step 1 (the test-only hook), rank 0 never sees a signal, and both stop
// there: exit 130 well within ddp.timeout_s, with the top directory's summary.json.
TEST(NprocSignals, ASignalBeforeTheFirstStepStopsEveryRankTogether) {
  ScratchDir dir;
  ::setenv("LLMPROF_TEST_SIGINT_BEFORE_FIRST_STEP_RANK", "1", 1);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r =
      run_llmprof({"train", "--config", test::kTinyConfig, "--nproc", "2", "--out", dir.path(),
                   "--set", "output.name=early", "--set", "ddp.timeout_s=60"});
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::unsetenv("LLMPROF_TEST_SIGINT_BEFORE_FIRST_STEP_RANK");
  EXPECT_EQ(r.exit_code, 130) << r.output;
  EXPECT_LT(took_s, 10) << r.output;
  const nlohmann::json s = summary_of(dir.file("early"));
  ASSERT_TRUE(s.is_object()) << r.output;
  EXPECT_EQ(s.value("status", ""), "interrupted");
  test::expect_contains(s.value("message", ""), "another rank was stopped by a signal");
  test::expect_contains(r.output, "run:        " + dir.file("early") + " (2 ranks)");
}

// The top directory is the run: printed, taken for resume in the forms a one-rank run's are
// (<run>/checkpoint-stepN and <run>), and reported when rank 0 never merged it (killed).
TEST(NprocTopDirectory, IsPrintedResumedFromAndReportedWhenUnmerged) {
  ScratchDir dir;
  const std::vector<std::string> common = {"train",
                                           "--config",
                                           test::kTinyConfig,
                                           "--nproc",
                                           "2",
                                           "--out",
                                           dir.path(),
                                           "--set",
                                           "train.save_checkpoint=true",
                                           "--set",
                                           "train.checkpoint_interval=3",
                                           "--set",
                                           "train.eval_interval=0"};
  auto args = [&](const std::string& name, int steps, const std::string& resume) {
    std::vector<std::string> a = common;
    a.insert(a.end(), {"--set", "output.name=" + name, "--set",
                       "schedule.max_steps=" + std::to_string(steps)});
    if (!resume.empty()) a.insert(a.end(), {"--set", "train.resume_from=" + resume});
    return a;
  };
  const auto first = run_llmprof(args("a", 6, ""));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  test::expect_contains(first.output, "run:        " + dir.file("a") + " (2 ranks)");
  test::expect_contains(first.output, "run " + dir.file("a") + " (2 ranks");
  for (const std::string& from : {dir.file("a/checkpoint-step3"), dir.file("a")}) {
    const auto resumed = run_llmprof(args("b", 8, from));
    EXPECT_EQ(resumed.exit_code, 0) << from << "\n" << resumed.output;
    fs::remove_all(dir.file("b"));
  }
  // As rank 0 leaves it when killed before merging: the rank directories only.
  for (const auto& e : fs::directory_iterator(dir.file("a"))) {
    if (e.path().filename().string().rfind("rank", 0) != 0) fs::remove_all(e.path());
  }
  const auto report = run_llmprof({"report", dir.file("a")});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  test::expect_contains(report.output, "no merged documents at the top");
  EXPECT_EQ(report.output.find("not a run directory"), std::string::npos) << report.output;
}

}  // namespace
}  // namespace llmprof
