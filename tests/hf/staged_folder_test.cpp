// StagedFolder, what `llmprof export` writes through: the folder appears whole at commit or not at
// all, an existing destination is never replaced, and SIGINT becomes Interrupted (exit 130) with
// nothing left behind.
#include "llmprof/hf/staged_folder.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::hf {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

// Every entry of dir, by name.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(StagedFolder, LeavesNothingWhenNotCommitted) {
  ScratchDir dir;
  {
    StagedFolder staged(dir.file("out"));
    test::write_file(staged.path() + "/model.safetensors", "x");
    EXPECT_EQ(entries(dir.path()).size(), 1u);  // the staging folder, beside out
  }
  EXPECT_TRUE(entries(dir.path()).empty());
}

TEST(StagedFolder, CommitMakesOutWithWhatWasWritten) {
  ScratchDir dir;
  StagedFolder staged(dir.file("out"));
  test::write_file(staged.path() + "/config.json", "{}");
  staged.commit();
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out"});
  EXPECT_EQ(test::read_file(dir.file("out/config.json")), "{}");
}

TEST(StagedFolder, AnExistingOutIsRefusedAndKept) {
  ScratchDir dir;
  test::write_file(dir.file("out/mine.txt"), "keep");
  try {
    StagedFolder staged(dir.file("out"));
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("exists"), std::string::npos) << e.what();
  }
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out"});
  EXPECT_EQ(test::read_file(dir.file("out/mine.txt")), "keep");
}

TEST(StagedFolder, AnOutMadeMeanwhileIsNeverReplaced) {
  ScratchDir dir;
  {
    StagedFolder staged(dir.file("out"));
    test::write_file(staged.path() + "/config.json", "{}");
    fs::create_directory(dir.file("out"));  // empty: a plain rename would replace it
    EXPECT_THROW(staged.commit(), ConfigError);
  }
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out"});
  EXPECT_TRUE(entries(dir.file("out")).empty());
}

TEST(StagedFolder, SigintBecomesInterruptedAndLeavesNothing) {
  ScratchDir dir;
  {
    StagedFolder staged(dir.file("out"));
    test::write_file(staged.path() + "/model.safetensors", "x");
    staged.check_interrupted();  // no signal yet
    std::raise(SIGINT);          // would end the test process without the handler
    try {
      staged.check_interrupted();
      ADD_FAILURE() << "no Interrupted";
    } catch (const Interrupted& e) {
      EXPECT_EQ(e.exit_code(), kExitInterrupted);
      EXPECT_NE(std::string(e.what()).find("signal 2"), std::string::npos) << e.what();
    }
    EXPECT_THROW(staged.commit(), Interrupted);
  }
  EXPECT_TRUE(entries(dir.path()).empty());
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);  // the handler goes with the last StagedFolder
}

}  // namespace
}  // namespace llmprof::hf
