// The composed run-directory names of rundir/files.h, and a scan of src/ and include/ that finds
// a run-directory or Hugging Face file name written as a literal outside its table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "llmprof/hf/files.h"
#include "llmprof/rundir/files.h"

namespace fs = std::filesystem;

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

// The file without its whole-line comments (a comment may name a file the way code builds it).
std::string code_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string out, line;
  while (std::getline(in, line)) {
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "//") == 0) continue;
    out += line + "\n";
  }
  return out;
}

// Each literal as it would be written when a path is built by hand: quoted whole, or quoted
// after a '/'. Messages that mention a name inside a sentence are not paths and do not match.
TEST(FileNameLiterals, NoneOutsideTheTables) {
  const std::vector<std::string> names = {
      "config.yaml", ".point.json", ".log", ".lock", ".tables.lock", "submissions.csv", "model.pt",
      "checkpoint-step", "hf_config.json", "config.json", "model.safetensors",
      "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json",
      "vocab.json", "merges.txt", "vocab.txt", "tokenizer.json", "tokenizer_config.json"};
  // The tables themselves; gnuplot's own log beside a chart script is not a run-directory file.
  const std::set<std::string> tables = {"include/llmprof/rundir/files.h",
                                        "include/llmprof/hf/files.h"};
  const std::map<std::string, std::string> allowed = {{"src/plot/gnuplot.cpp", "\".log\""}};
  const fs::path root(LLMPROF_SOURCE_DIR);
  std::vector<std::string> found;
  for (const char* top : {"src", "include"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      const std::string rel = fs::relative(e.path(), root).string();
      if (tables.count(rel) != 0) continue;
      const std::string text = code_of(e.path());
      for (const std::string& n : names) {
        for (const std::string& lit : {"\"" + n + "\"", "\"/" + n + "\"", "\"" + n + "{"}) {
          if (text.find(lit) == std::string::npos) continue;
          auto a = allowed.find(rel);
          if (a != allowed.end() && a->second == lit) continue;
          found.push_back(rel + ": " + lit);
        }
      }
    }
  }
  EXPECT_TRUE(found.empty()) << "file names built by hand (use rundir/files.h or hf/files.h):\n"
                             << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace llmprof::rundir
