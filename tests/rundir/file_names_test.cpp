// The composed run-directory names of rundir/files.h, and a scan of src/ and include/ that finds
// a run-directory or Hugging Face file name written as a literal outside its table.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "llmprof/hf/files.h"
#include "llmprof/rundir/files.h"
#include "rundir/source_scan.h"

namespace llmprof::rundir {
namespace {

TEST(RunDirFiles, RunLogPathIsTheRunDirectoryPlusLog) {
  EXPECT_EQ(run_log_path("sw/runs/lr_0.001"), "sw/runs/lr_0.001.log");
  EXPECT_EQ(run_log_path(""), ".log");
}

TEST(RunDirFiles, CheckpointStepDirNamesTheStep) {
  EXPECT_EQ(checkpoint_step_dir("/tmp/run", 40), "/tmp/run/checkpoint-step40");
  EXPECT_EQ(checkpoint_step_dir("r", 0), "r/checkpoint-step0");
}

TEST(HfFiles, InFolderJoinsWithOneSlashAndKeepsATrailingOne) {
  EXPECT_EQ(hf::in_folder("gpt2", hf::kConfigJson), "gpt2/config.json");
  // Byte for byte what the readers built by hand before: a trailing '/' stays.
  EXPECT_EQ(hf::in_folder("gpt2/", hf::kMergesTxt), "gpt2//merges.txt");
}

// Each literal as it would be written when a path is built by hand: quoted whole, or quoted
// after a '/'. Messages that mention a name inside a sentence are not paths and do not match.
TEST(FileNameLiterals, NoneOutsideTheTables) {
  const std::vector<std::string> names = {
      "config.yaml", ".point.json", ".log", ".lock", ".tables.lock", "submissions.csv", "model.pt",
      "checkpoint-step", "hf_config.json", "config.json", "model.safetensors",
      "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json",
      "vocab.json", "merges.txt", "vocab.txt", "tokenizer.json", "tokenizer_config.json"};
  // Gnuplot's own log beside a chart script is not a run-directory file.
  const std::map<std::string, std::string> allowed = {{"src/plot/gnuplot.cpp", "\".log\""}};
  std::vector<std::string> found;
  for (const scan::Source& s : scan::sources_outside_the_tables()) {
    for (const std::string& n : names) {
      for (const std::string& lit : {"\"" + n + "\"", "\"/" + n + "\"", "\"" + n + "{"}) {
        if (s.code.find(lit) == std::string::npos) continue;
        auto a = allowed.find(s.rel);
        if (a != allowed.end() && a->second == lit) continue;
        found.push_back(s.rel + ": " + lit);
      }
    }
  }
  EXPECT_TRUE(found.empty()) << "file names built by hand (use rundir/files.h or hf/files.h):\n"
                             << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace llmprof::rundir
