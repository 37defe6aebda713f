// A run's tokenizer is part of the run: a checkpoint keeps its files and content hash, eval takes
// it from there (a config naming another, by hash, is an error naming both), and export needs
// nothing outside the run; a failed or interrupted export leaves nothing behind. The folders are
// copies of the tiny Hugging Face fixtures (tests/checkpoint/fixtures/hf), one with a vocabulary of
// the same size and other content.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/data/wordpiece.h"
#include "llmprof/error.h"
#include "llmprof/eval/evaluate.h"
#include "llmprof/train/task.h"
#include "llmprof/train/task_model.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::eval {
namespace {

using test::ScratchDir;

std::string fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/checkpoint/fixtures/hf/" + name;
}

// A copy of fixture `name` at dir/as.
std::string copy_folder(const ScratchDir& dir, const std::string& name, const std::string& as) {
  fs::copy(fixture(name), dir.file(as));
  fs::remove(dir.file(as + "/expected.json"));
  return dir.file(as);
}

// Sentences in the words of both fixtures' vocabularies.
std::string write_text(const ScratchDir& dir) {
  const char* lines[] = {"the cat sat on the mat .", "a dog runs !", "the dogs sat on a mat .",
                         "a cat runs on the mat !"};
  std::string text;
  for (int i = 0; i < 80; ++i) text += std::string(lines[i % 4]) + "\n";
  test::write_file(dir.file("text.txt"), text);
  return dir.file("text.txt");
}

std::string train_yaml(const ScratchDir& dir, const std::string& name, const std::string& body) {
  const std::string common =
      "train:\n  batch_size: 2\n  eval_interval: 0\n  eval_steps: 1\n"
      "  save_checkpoint: true\n"
      "schedule:\n  warmup_steps: 0\n  max_steps: 2\n"
      // a known MFU peak: a measured one (5 matmuls of 2048^2) costs each run a second or more
      "profile:\n  level: off\n  peak_flops_per_s: 1.0e11\nenergy:\n  enabled: false\n"
      "threads: 1\n"
      "eval:\n  max_batches: 4\n"
      "output:\n  dir: " +
      dir.file("runs") + "\n  name: " + name + "\n";
  test::write_file(dir.file(name + ".yaml"), body + common);
  return dir.file(name + ".yaml");
}

std::string train(const std::string& yaml) {
  train::TrainOptions o;
  o.quiet = true;
  const train::TrainResult r = train::run_training(config::load_config(yaml), o);
  EXPECT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  return r.run_dir;
}

// The validation loss; eval.json's tokenizer record in *tokenizer when given.
double val_loss(const std::string& yaml, const std::string& checkpoint, const ScratchDir& dir,
                nlohmann::json* tokenizer = nullptr) {
  EvalOptions opts;
  opts.checkpoint = checkpoint;
  static int n = 0;  // output.name is fixed: one parent per eval
  opts.output_dir = dir.file("evals" + std::to_string(n++));
  const EvalResult r = run_eval(config::load_config(yaml), opts);
  EXPECT_EQ(r.weights, "checkpoint");
  if (tokenizer) {
    *tokenizer = nlohmann::json::parse(test::read_file(r.run_dir + "/eval.json"))["tokenizer"];
  }
  return r.sets.at(0).loss;
}

// DistilBERT yaml naming vocab (and init_from when given).
std::string bert_body(const ScratchDir& dir, const std::string& vocab, const std::string& init) {
  return "model:\n  type: distilbert\n  block_size: 8\n  dropout: 0.0\n" +
         (init.empty() ? "" : "  init_from: " + init + "\n") +
         "data:\n  tokenizer: wordpiece\n  vocab_path: " + vocab + "\n  path: " + write_text(dir) +
         "\n  format: text\n  val_fraction: 0.25\n"
         "train:\n  task: mlm\n";
}

TEST(RunTokenizer, EvalWithAThirdConfigNamingAnotherVocabularyIsAnErrorTheTrainingOneIsNot) {
  ScratchDir dir;
  // The folder's vocab.txt trades "cat" and "dog": 20 tokens, like the config's, other ids.
  const std::string folder = copy_folder(dir, "distilbert_tiny", "hf");
  std::string vocab = test::read_file(folder + "/vocab.txt");
  const size_t cat = vocab.find("cat\n"), dog = vocab.find("dog\n");
  vocab.replace(dog, 3, "cat");
  vocab.replace(cat, 3, "dog");
  test::write_file(folder + "/vocab.txt", vocab);
  const std::string original = fixture("distilbert_tiny/vocab.txt");
  const std::string run = train(train_yaml(dir, "ft", bert_body(dir, original, folder)));
  const std::string run_sha =
      data::make_wordpiece_tokenizer(folder + "/vocab.txt", true)->fingerprint();
  const std::string config_sha = data::make_wordpiece_tokenizer(original, true)->fingerprint();
  ASSERT_NE(run_sha, config_sha);
  const auto meta = nlohmann::json::parse(test::read_file(run + "/checkpoint/checkpoint.json"));
  EXPECT_EQ(meta["tokenizer"]["sha256"], run_sha);
  EXPECT_EQ(meta["tokenizer"]["vocab_size"], 20);

  // The training config's own tokenizer keys, which the folder's replaced, are recorded.
  ASSERT_TRUE(meta["tokenizer"].contains("config_keys")) << meta.dump(1);
  EXPECT_EQ(meta["tokenizer"]["config_keys"].size(), 2u) << meta.dump(1);

  // A third config names the fixture's vocab.txt (a copy: other keys than the run's training
  // config gave): before the check, eval tokenized with it without a word.
  fs::create_directories(dir.file("third"));
  fs::copy_file(original, dir.file("third/vocab.txt"));
  const std::string third =
      train_yaml(dir, "third", bert_body(dir, dir.file("third/vocab.txt"), ""));
  try {
    val_loss(third, run, dir);
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(run_sha.substr(0, 12)), std::string::npos) << what;
    EXPECT_NE(what.find(config_sha.substr(0, 12)), std::string::npos) << what;
    EXPECT_NE(what.find(dir.file("third/vocab.txt")), std::string::npos) << what;
    EXPECT_NE(what.find("third.yaml line"), std::string::npos) << what;
  }
  // The training config's tokenizer keys (without model.init_from, as a user evaluates with the
  // config they trained with) name the run's own tokenizer: no conflict, the run's is used.
  const std::string named = train_yaml(dir, "named", bert_body(dir, original, ""));
  nlohmann::json named_used;
  val_loss(named, run, dir, &named_used);
  EXPECT_EQ(named_used["sha256"], run_sha);

  // The same vocabulary elsewhere is the run's; its figures are those of the exported folder.
  fs::create_directories(dir.file("elsewhere"));
  fs::copy_file(folder + "/vocab.txt", dir.file("elsewhere/vocab.txt"));
  const std::string same =
      train_yaml(dir, "same", bert_body(dir, dir.file("elsewhere/vocab.txt"), ""));
  nlohmann::json used;
  const double from_run = val_loss(same, run, dir, &used);
  EXPECT_EQ(used["sha256"], run_sha);
  checkpoint::export_hf(run, dir.file("exported"), train::task_model);
  const double from_export = val_loss(named, dir.file("exported"), dir);
  EXPECT_NEAR(from_run, from_export, 1e-6);
}

// GPT-2 yaml with the tokenizer kind only (the folder gives the files, no vocabulary paths).
std::string gpt2_body(const ScratchDir& dir, const std::string& init) {
  return "model:\n  block_size: 8\n  dropout: 0.0\n  init_from: " + init +
         "\ndata:\n  tokenizer: gpt2\n  path: " + write_text(dir) + "\n  val_fraction: 0.25\n";
}

TEST(RunTokenizer, EvalAndExportOfARunNeedNeitherTheFolderNorAConfigNamingTheTokenizer) {
  ScratchDir dir;
  const std::string folder = copy_folder(dir, "gpt2_tiny", "hf");
  const std::string run = train(train_yaml(dir, "ft", gpt2_body(dir, folder)));
  fs::rename(folder, dir.file("moved"));

  // A config with no tokenizer key (data.tokenizer's default is char): the run's gpt2 is used.
  const std::string plain = train_yaml(
      dir, "plain",
      "model:\n  block_size: 8\ndata:\n  path: " + write_text(dir) + "\n  val_fraction: 0.25\n");
  const double from_run = val_loss(plain, run, dir);

  const test::CommandResult x =
      test::run_llmprof({"export", run, "--format", "hf", "--out", dir.file("out")});
  ASSERT_EQ(x.exit_code, 0) << x.output;
  EXPECT_EQ(test::read_file(dir.file("out/vocab.json")),
            test::read_file(fixture("gpt2_tiny/vocab.json")));
  EXPECT_EQ(test::read_file(dir.file("out/merges.txt")),
            test::read_file(fixture("gpt2_tiny/merges.txt")));
  const auto config = nlohmann::json::parse(test::read_file(dir.file("out/config.json")));
  EXPECT_EQ(config["bos_token_id"], 260);  // kept from the folder's config.json
  EXPECT_EQ(config["n_layer"], 2);
  EXPECT_NEAR(val_loss(plain, dir.file("out"), dir), from_run, 1e-6);
}

// Every name in dir that starts with prefix.
std::vector<std::string> starting_with(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0) names.push_back(n);
  }
  return names;
}

TEST(ExportCommand, AFailedExportLeavesNothingAndNeverTouchesAnExistingOut) {
  ScratchDir dir;
  const std::string folder = copy_folder(dir, "gpt2_tiny", "hf");
  const std::string run = train(train_yaml(dir, "ft", gpt2_body(dir, folder)));
  test::write_file(dir.file("out/mine.txt"), "keep");
  test::CommandResult x = test::run_llmprof({"export", run, "--out", dir.file("out")});
  EXPECT_EQ(x.exit_code, 2) << x.output;
  EXPECT_EQ(test::read_file(dir.file("out/mine.txt")), "keep");
  EXPECT_EQ(starting_with(dir.path(), "out"), std::vector<std::string>{"out"});

  // The run's copy of its tokenizer changed after the run: refused, nothing written.
  nlohmann::json vocab =
      nlohmann::json::parse(test::read_file(run + "/checkpoint/tokenizer/vocab.json"));
  const auto a = vocab["a"].get<int>();
  vocab["a"] = vocab["b"].get<int>();
  vocab["b"] = a;
  test::write_file(run + "/checkpoint/tokenizer/vocab.json", vocab.dump());
  x = test::run_llmprof({"export", run, "--out", dir.file("out2")});
  EXPECT_EQ(x.exit_code, 2) << x.output;
  EXPECT_NE(x.output.find("changed after the run"), std::string::npos) << x.output;
  EXPECT_TRUE(starting_with(dir.path(), "out2").empty());
}

TEST(ExportCommand, SigintDuringTheWriteLeavesNothingBehind) {
  ScratchDir dir;
  // A checkpoint big enough (about 110 MB of weights) to be caught while it is written.
  config::Config cfg;
  cfg.model.block_size = 8;
  checkpoint::adopt_hf_model(cfg, fixture("gpt2_tiny"), "model.init_from");
  cfg.model.n_layer = 4;
  cfg.model.n_embd = 768;
  cfg.model.n_head = 4;
  const auto tok = data::make_tokenizer(cfg.data, "");
  const auto task = train::make_task(cfg, tok->vocab_size(), 0);
  checkpoint::save_checkpoint(dir.file("ckpt"), task->module(), cfg, config::TaskKind::kLm, 1,
                              tok.get());
  const int pid = test::spawn_llmprof({"export", dir.file("ckpt"), "--out", dir.file("out")},
                                      dir.file("export.log"));
  bool seen = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    seen = !starting_with(dir.path(), "out.tmp-").empty();
    if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_TRUE(seen) << "the export never staged its folder: "
                    << test::read_file(dir.file("export.log"));
  ::kill(pid, SIGINT);
  const int code = test::wait_llmprof(pid);
  const std::string log = test::read_file(dir.file("export.log"));
  EXPECT_EQ(code, kExitInterrupted) << log;
  EXPECT_NE(log.find("stopped by signal 2"), std::string::npos) << log;  // not killed outright
  EXPECT_TRUE(starting_with(dir.path(), "out").empty());
}

}  // namespace
}  // namespace llmprof::eval
