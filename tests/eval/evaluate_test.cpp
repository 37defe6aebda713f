// llmprof eval: loss/perplexity (accuracy) of a checkpoint on the validation split and eval.paths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/corpus.h"
#include "llmprof/error.h"
#include "llmprof/eval/evaluate.h"
#include "llmprof/output/csv.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::eval {
namespace {

using test::ScratchDir;

config::Config tiny_gpt(const std::string& out_dir, const std::string& name) {
  config::Config cfg =
      config::load_config(std::string(LLMPROF_SOURCE_DIR) + "/configs/tiny_test.yaml");
  cfg.output.dir = out_dir;
  cfg.output.name = name;
  cfg.energy.enabled = false;
  return cfg;
}

std::string train_checkpoint(config::Config cfg) {
  cfg.train.save_checkpoint = true;
  train::TrainOptions o;
  o.quiet = true;
  const train::TrainResult r = train::run_training(cfg, o);
  EXPECT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  return r.run_dir;
}

TEST(RunEval, TrainedCheckpointBeatsInitialWeightsOnEverySet) {
  ScratchDir dir;
  config::Config cfg = tiny_gpt(dir.path(), "train");
  const std::string run = train_checkpoint(cfg);
  // A second text from the same generator: the char tokenizer knows every character.
  test::write_file(dir.file("more.txt"), data::generate_corpus(99, 5000));
  cfg.eval.paths = "more=" + dir.file("more.txt");
  cfg.eval.max_batches = 3;

  cfg.output.name = "eval-trained";
  EvalOptions opts;
  opts.checkpoint = run;
  const EvalResult trained = run_eval(cfg, opts);
  cfg.output.name = "eval-init";
  const EvalResult init = run_eval(cfg, EvalOptions{});

  ASSERT_EQ(trained.sets.size(), 2u);
  EXPECT_EQ(trained.sets[0].name, "val");
  EXPECT_EQ(trained.sets[1].name, "more");
  EXPECT_EQ(trained.checkpoint, run + "/checkpoint");
  EXPECT_TRUE(init.checkpoint.empty());
  for (size_t i = 0; i < 2; ++i) {
    const EvalSetResult& t = trained.sets[i];
    EXPECT_EQ(t.batches, 3);
    EXPECT_EQ(t.sequences, 12);        // 3 batches x batch_size 4, no padding rows
    EXPECT_EQ(t.targets, 12 * 32);     // every position of every window
    ASSERT_TRUE(t.perplexity);
    EXPECT_NEAR(*t.perplexity, std::exp(t.loss), 1e-9);
    EXPECT_EQ(t.available_sequences, t.name == "val" ? 62 : 156);
    EXPECT_NE(t.sampling.find("seeded random 12 of the"), std::string::npos) << t.sampling;
    EXPECT_FALSE(t.accuracy);
    EXPECT_GT(t.samples_per_s, 0);
    EXPECT_LT(t.loss, init.sets[i].loss) << t.name;
  }
  const auto rows = output::parse_csv(test::read_file(trained.run_dir + "/eval_sets.csv"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"set", "source", "batches", "sequences",
                                               "available_sequences", "sampling", "targets",
                                               "loss", "perplexity", "accuracy", "weights",
                                               "seconds", "samples_per_s", "tokens_per_s"}));
  EXPECT_EQ(rows[1][10], "checkpoint");
  EXPECT_EQ(init.weights, "initial");
  const auto doc = nlohmann::json::parse(test::read_file(trained.run_dir + "/eval.json"));
  EXPECT_EQ(doc["task"], "lm");
  EXPECT_TRUE(doc["checkpoint"].is_string());
}

TEST(RunEval, ShortLastBatchIsNotCountedTwice) {
  ScratchDir dir;
  config::Config cfg = tiny_gpt(dir.path(), "short");
  // 200 generated chars -> 6 windows of 32 (+1 target): batches of 4 hold 4 + 2 real rows.
  test::write_file(dir.file("small.txt"), data::generate_corpus(5, 200));
  cfg.eval.paths = dir.file("small.txt");
  const EvalResult r = run_eval(cfg, EvalOptions{});
  ASSERT_EQ(r.sets.size(), 2u);
  EXPECT_EQ(r.sets[1].batches, 2);
  EXPECT_EQ(r.sets[1].sequences, 6);
  EXPECT_EQ(r.sets[1].targets, 6 * 32);
  EXPECT_EQ(r.sets[1].name, fs::path(dir.path()).filename().string() + "/small.txt");
}

TEST(EvalCommand, MissingCheckpointExitsTwoNamingTheFlag) {
  ScratchDir dir;
  const auto r = test::run_llmprof({"eval", "--config", std::string(LLMPROF_SOURCE_DIR) +
                                    "/configs/tiny_test.yaml", "--checkpoint",
                                    dir.file("nope"), "--out", dir.path()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--checkpoint: '" + dir.file("nope") + "' does not exist"),
            std::string::npos)
      << r.output;
  // A directory without model.pt is the other case, and says so.
  fs::create_directories(dir.file("empty"));
  const auto e = test::run_llmprof({"eval", "--config", std::string(LLMPROF_SOURCE_DIR) +
                                    "/configs/tiny_test.yaml", "--checkpoint",
                                    dir.file("empty"), "--out", dir.path()});
  EXPECT_EQ(e.exit_code, 2) << e.output;
  EXPECT_NE(e.output.find("holds no checkpoint"), std::string::npos) << e.output;
}

TEST(EvalCommand, MissingEvalPathsFileExitsTwoNamingItAndWritesNothing) {
  ScratchDir dir;
  const std::string missing = dir.file("no such.txt");
  const auto r = test::run_llmprof({"eval", "--config", std::string(LLMPROF_SOURCE_DIR) +
                                    "/configs/tiny_test.yaml", "--set", "eval.paths=x=" + missing,
                                    "--out", dir.file("out")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(missing), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("out")));  // the sets are read before any result directory
}

TEST(RunEval, GzippedGptCorpusReadsLikeThePlainFile) {
  ScratchDir dir;
  const std::string text = data::generate_corpus(7, 20000);
  test::write_file(dir.file("corpus.txt"), text);
  ASSERT_EQ(std::system(("gzip -k -n '" + dir.file("corpus.txt") + "'").c_str()), 0);
  config::Config plain = tiny_gpt(dir.path(), "plain");
  plain.data.path = dir.file("corpus.txt");
  plain.eval.max_batches = 2;
  config::Config gz = plain;
  gz.data.path = dir.file("corpus.txt.gz");
  gz.output.name = "gz";
  const EvalResult a = run_eval(plain, EvalOptions{}), b = run_eval(gz, EvalOptions{});
  EXPECT_EQ(a.sets[0].loss, b.sets[0].loss);
}

TEST(EvalCommand, PrintsATableOfTheSets) {
  ScratchDir dir;
  const auto r = test::run_llmprof({"eval", "--config", std::string(LLMPROF_SOURCE_DIR) +
                                    "/configs/tiny_test.yaml", "--set", "eval.max_batches=2",
                                    "--set", "energy.enabled=false", "--out", dir.path(), "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| val | 8 of 62 |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("val: a seeded random 8 of the 62 windows"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| perplexity |"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("accuracy"), std::string::npos) << "lm: no accuracy column\n"
                                                           << r.output;
  EXPECT_NE(r.output.find("none (initial weights)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace llmprof::eval
