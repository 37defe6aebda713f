// What llmprof eval and bench take from a checkpoint and from eval.max_batches: the model shape
// comes from the checkpoint, a checkpoint lacking the task's head is refused unless asked for and
// then marked, and a limited eval set is a seeded random subset, said so. The encoder cases use
// a WordPiece vocab and a CSV written here, so they run without ../shared/data.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/corpus.h"
#include "llmprof/error.h"
#include "llmprof/eval/evaluate.h"
#include "llmprof/output/csv.h"
#include "llmprof/train/run_data.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::eval {
namespace {

using test::ScratchDir;

const std::string& kEvalTiny = test::kTinyConfig;

std::string train_run(config::Config cfg) {
  cfg.train.save_checkpoint = true;
  cfg.energy.enabled = false;
  train::TrainOptions o;
  o.quiet = true;
  const train::TrainResult r = train::run_training(cfg, o);
  EXPECT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  return r.run_dir;
}

// ---------------------------------------------------------------------------------------------
// A tiny encoder world: 5 special tokens and 10 words; a CSV of 200 reviews sorted by label.

const char* kWords[] = {"good", "great", "fine", "nice", "bad", "poor", "awful", "dull", "the",
                        "film"};

std::string write_vocab(const ScratchDir& dir) {
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (const char* w : kWords) vocab += std::string(w) + "\n";
  test::write_file(dir.file("vocab.txt"), vocab);
  return dir.file("vocab.txt");
}

// rows reviews: the first half label 0 (bad words), the rest label 1 (good words).
std::string write_sorted_reviews(const ScratchDir& dir, const std::string& name, int rows) {
  std::string csv = "text,label\n";
  for (int i = 0; i < rows; ++i) {
    const int label = i < rows / 2 ? 0 : 1;
    std::string text = "the film";
    for (int k = 0; k < 6; ++k) text += std::string(" ") + kWords[(label ? 0 : 4) + (i + k) % 4];
    csv += text + "," + std::to_string(label) + "\n";
  }
  test::write_file(dir.file(name), csv);
  return dir.file(name);
}

config::Config tiny_encoder(const ScratchDir& dir, const std::string& task,
                            const std::string& name) {
  config::Config c = config::load_config(kEvalTiny);
  c.model.type = config::ModelType::kDistilbert;
  c.model.n_embd = 16;
  c.model.ffn_dim = 32;
  c.model.block_size = 16;
  c.data.tokenizer = config::TokenizerKind::kWordpiece;
  c.data.vocab_path = write_vocab(dir);
  c.data.path = write_sorted_reviews(dir, "train.csv", 200);
  c.data.val_path = write_sorted_reviews(dir, "val.csv", 100);
  c.train.task = config::parse_enum<config::TaskKind>(task);
  c.train.batch_size = 4;
  c.schedule.max_steps = 4;
  c.train.eval_interval = 0;
  c.output.dir = dir.path();
  c.output.name = name;
  c.energy.enabled = false;
  return c;
}

TEST(EvalSets, LimitedLmSetIsASeededRandomSubsetOfWindowsInFileOrder) {
  ScratchDir dir;
  config::Config cfg = config::load_config(kEvalTiny);
  const train::RunData rd = train::load_run_data(cfg);
  test::write_file(dir.file("more.txt"), data::generate_corpus(99, 5000));
  const train::EvalSet all = train::make_file_eval_set(cfg, rd, "more", dir.file("more.txt"), 4, 0);
  const train::EvalSet some = train::make_file_eval_set(cfg, rd, "more", dir.file("more.txt"), 4, 2);
  const train::EvalSet again = train::make_file_eval_set(cfg, rd, "more", dir.file("more.txt"), 4, 2);
  EXPECT_TRUE(all.sampling.empty());
  EXPECT_EQ(all.used, 156);
  EXPECT_EQ(some.available, 156);
  EXPECT_EQ(some.used, 8);
  EXPECT_EQ(some.sampling, "a seeded random 8 of the 156 windows (eval.max_batches=2 x batch 4), "
                           "in file order");
  ASSERT_EQ(some.batches.size(), 2u);
  // Which window each row is: its first token position in the full, in-order set.
  auto window_of = [&](const torch::Tensor& row) {
    for (size_t b = 0; b < all.batches.size(); ++b) {
      for (int64_t r = 0; r < all.batches[b].x.size(0); ++r) {
        if (torch::equal(all.batches[b].x[r], row)) return static_cast<int64_t>(b) * 4 + r;
      }
    }
    return int64_t{-1};
  };
  std::vector<int64_t> chosen;
  for (const auto& b : some.batches) {
    for (int64_t r = 0; r < b.x.size(0); ++r) chosen.push_back(window_of(b.x[r]));
  }
  for (size_t i = 0; i < chosen.size(); ++i) {
    EXPECT_GE(chosen[i], 0) << "row " << i << " is a window of the file";
    if (i > 0) {
      EXPECT_LT(chosen[i - 1], chosen[i]) << "file order";
    }
  }
  EXPECT_NE(chosen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7})) << "not the head of the file";
  EXPECT_GT(chosen.back(), 78) << "reaches the second half";
  for (size_t b = 0; b < 2; ++b) EXPECT_TRUE(torch::equal(some.batches[b].x, again.batches[b].x));
}

TEST(EvalSets, LimitedClassifySetOfALabelSortedFileHoldsBothLabels) {
  ScratchDir dir;
  config::Config cfg = tiny_encoder(dir, "classify", "sets");
  const train::RunData rd = train::load_run_data(cfg);
  const std::string sorted = write_sorted_reviews(dir, "sorted.csv", 1000);
  // eval.max_batches=2 of batch 4: the head of the file is all label 0.
  const train::EvalSet some = train::make_file_eval_set(cfg, rd, "imdb", sorted, 4, 2);
  const train::EvalSet head = train::make_file_eval_set(cfg, rd, "imdb", sorted, 4, 0);
  std::set<int64_t> labels, head_labels;
  for (const auto& b : some.batches) {
    for (int64_t r = 0; r < b.y.size(0); ++r) labels.insert(b.y[r][0].item<int64_t>());
  }
  for (int64_t r = 0; r < 4; ++r) head_labels.insert(head.batches[0].y[r][0].item<int64_t>());
  EXPECT_EQ(head_labels, (std::set<int64_t>{0}));
  EXPECT_EQ(labels, (std::set<int64_t>{0, 1})) << some.sampling;
  EXPECT_EQ(some.available, 1000);
}

TEST(RunEval, ModelShapeComesFromTheCheckpointAndAConflictingSetIsAnError) {
  ScratchDir dir;
  config::Config small = config::load_config(kEvalTiny, {"model.n_embd=16", "model.n_layer=1"});
  small.output.dir = dir.path();
  small.output.name = "small";
  const std::string run = train_run(small);

  // The tiny config says n_embd 32 and 2 layers; the checkpoint's 16 and 1 win.
  config::Config cfg = config::load_config(kEvalTiny, {"eval.max_batches=1"});
  cfg.output.dir = dir.path();
  EvalOptions opts;
  opts.checkpoint = run;
  const EvalResult r = run_eval(cfg, opts);
  EXPECT_EQ(r.weights, "checkpoint");
  const auto doc = nlohmann::json::parse(test::read_file(r.run_dir + "/eval.json"));
  const std::string notes = doc["model_from_checkpoint"].dump();
  EXPECT_NE(notes.find("model.n_embd 16 from the checkpoint"), std::string::npos) << notes;
  EXPECT_NE(notes.find("model.n_layer 1 from the checkpoint"), std::string::npos) << notes;
  EXPECT_EQ(config::load_config(r.run_dir + "/config.yaml").model.n_embd, 16);

  // An explicit --set of a shape key that disagrees names both values.
  config::Config set = config::load_config(kEvalTiny, {"model.n_embd=32"});
  set.output.dir = dir.path();
  try {
    run_eval(set, opts);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--set model.n_embd=32 conflicts with the checkpoint's model.n_embd=16"),
              std::string::npos)
        << what;
    EXPECT_EQ(e.key(), "model.n_embd");
  }
}

TEST(RunEval, CheckpointWithoutItsConfigIsAConfigErrorNamingTheDirectory) {
  ScratchDir dir;
  config::Config cfg = config::load_config(kEvalTiny, {"schedule.max_steps=2"});
  cfg.output.dir = dir.path();
  cfg.output.name = "noconfig";
  const std::string run = train_run(cfg);
  fs::remove(run + "/checkpoint/config.yaml");
  EvalOptions opts;
  opts.checkpoint = run;
  cfg.output.name = "eval";
  try {
    run_eval(cfg, opts);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(run + "/checkpoint has no config.yaml"), std::string::npos) << what;
    EXPECT_EQ(e.key(), "--checkpoint");
  }
  EXPECT_FALSE(fs::exists(dir.file("eval"))) << "refused before any result directory";
  EXPECT_TRUE(fs::exists(run + "/checkpoint/model.pt")) << "the checkpoint is left as it was";
}

TEST(EvalCommand, CheckpointOfAnotherShapeEvaluatesFromTheCommandLine) {
  ScratchDir dir;
  config::Config small = config::load_config(kEvalTiny, {"model.n_embd=16"});
  small.output.dir = dir.path();
  small.output.name = "small";
  const std::string run = train_run(small);
  const auto r = test::run_llmprof({"eval", "-c", kEvalTiny, "--checkpoint", run, "--set",
                                    "eval.max_batches=1", "--set", "energy.enabled=false",
                                    "--out", dir.file("out"), "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| val |"), std::string::npos) << r.output;
}

TEST(RunEval, CheckpointWithoutTheTaskHeadIsRefusedUnlessAllowedAndThenMarked) {
  ScratchDir dir;
  const std::string mlm_run = train_run(tiny_encoder(dir, "mlm", "mlm"));
  config::Config cls = tiny_encoder(dir, "classify", "cls-eval");
  cls.eval.max_batches = 2;
  EvalOptions opts;
  opts.checkpoint = mlm_run;
  try {
    run_eval(cls, opts);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("lacks 4 tensors of this classify model"), std::string::npos) << what;
    EXPECT_NE(what.find("--allow-init-weights"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir.file("cls-eval"))) << "refused before any result directory";

  opts.allow_init_weights = true;
  const EvalResult r = run_eval(cls, opts);
  EXPECT_EQ(r.weights, "partly initial (4 tensors at init)");
  EXPECT_EQ(r.init_tensors.size(), 4u);  // pre_classifier and classifier
  // Classification: accuracy, no perplexity.
  EXPECT_FALSE(r.reports_perplexity);
  ASSERT_FALSE(r.sets.empty());
  EXPECT_TRUE(r.sets[0].accuracy);
  EXPECT_FALSE(r.sets[0].perplexity);
  const auto rows = output::parse_csv(test::read_file(r.run_dir + "/eval_sets.csv"));
  ASSERT_GE(rows.size(), 2u);
  EXPECT_EQ(rows[1][8], "") << "perplexity column empty for classify";
  EXPECT_EQ(rows[1][10], "partly initial (4 tensors at init)");
  const auto doc = nlohmann::json::parse(test::read_file(r.run_dir + "/eval.json"));
  EXPECT_TRUE(doc["weights_note"].is_string());
  EXPECT_EQ(doc["init_tensors"].size(), 4u);

  // The command line says it in the table's header lines and refuses without the flag.
  const std::string cfg_path = dir.file("cls.yaml");
  test::write_file(cfg_path, config::to_yaml(cls));
  const auto refused = test::run_llmprof({"eval", "-c", cfg_path, "--checkpoint", mlm_run,
                                          "--out", dir.file("cli"), "-q"});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  const auto allowed = test::run_llmprof({"eval", "-c", cfg_path, "--checkpoint", mlm_run,
                                          "--allow-init-weights", "--out", dir.file("cli"), "-q"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  EXPECT_NE(allowed.output.find("randomly initialised"), std::string::npos) << allowed.output;
  EXPECT_NE(allowed.output.find("| accuracy |"), std::string::npos) << allowed.output;
  EXPECT_EQ(allowed.output.find("perplexity"), std::string::npos) << allowed.output;
}

}  // namespace
}  // namespace llmprof::eval
