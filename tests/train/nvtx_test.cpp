// profile.nvtx: steps, phases and module scopes as NVTX ranges, seen through an injection library
// (tests/train/nvtx_recorder) as Nsight Systems would see them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/profile/nvtx.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace llmprof::train {
namespace {

config::Config nvtx_config(const std::string& dir, const std::string& name) {
  config::Config cfg =
      config::load_config(std::string(LLMPROF_SOURCE_DIR) + "/configs/tiny_test.yaml");
  cfg.output.dir = dir;
  cfg.output.name = name;
  cfg.schedule.max_steps = 3;
  cfg.schedule.warmup_steps = 1;
  cfg.train.eval_interval = 0;
  cfg.profile.level = config::ProfileLevel::kPhases;
  cfg.profile.nvtx = true;
  return cfg;
}

TrainOptions nvtx_quiet() {
  TrainOptions o;
  o.quiet = true;
  return o;
}

#if defined(LLMPROF_NVTX_RECORDER)

struct Range {
  std::string name, payload;
  std::vector<std::string> parents;  // outermost first
};

TEST(Nvtx, StepsPhasesAndModuleScopesAreBalancedRangesOnTheirThread) {
  test::ScratchDir dir("nvtx");
  const std::string record = dir.file("nvtx.txt");
  // Read at the process's first NVTX call, which profile.nvtx=false never makes.
  ::setenv("NVTX_INJECTION64_PATH", LLMPROF_NVTX_RECORDER, 1);
  ::setenv("LLMPROF_NVTX_RECORD", record.c_str(), 1);
  ASSERT_TRUE(profile::nvtx::available());
  const TrainResult r = run_training(nvtx_config(dir.path(), "on"), nvtx_quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed");
  EXPECT_FALSE(profile::nvtx::enabled()) << "the run's end turns the ranges off";

  std::istringstream lines(test::read_file(record));
  std::map<long, std::vector<std::string>> open;  // thread -> its open ranges' names
  std::vector<Range> ranges;
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    long thread = 0;
    std::string what, name, payload;
    in >> thread >> what >> name >> payload;
    std::vector<std::string>& stack = open[thread];
    if (what == "push") {
      ranges.push_back({name, payload, stack});
      stack.push_back(name);
    } else {
      ASSERT_FALSE(stack.empty()) << "a pop without a push on thread " << thread;
      stack.pop_back();
    }
  }
  for (const auto& [thread, stack] : open) EXPECT_TRUE(stack.empty()) << "thread " << thread;

  std::vector<std::string> steps;
  std::map<std::string, int> phases;
  std::set<std::string> scopes_in_forward;
  for (const Range& g : ranges) {
    if (g.name == "step") {
      EXPECT_TRUE(g.parents.empty());
      steps.push_back(g.payload);
    } else if (g.name == "data" || g.name == "forward" || g.name == "backward" ||
               g.name == "optimizer") {
      ASSERT_EQ(g.parents, std::vector<std::string>{"step"}) << g.name;
      ++phases[g.name];
    } else if (std::find(g.parents.begin(), g.parents.end(), "forward") != g.parents.end()) {
      scopes_in_forward.insert(g.name + "#" + g.payload);
    }
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"1", "2", "3"}));
  for (const char* p : {"data", "forward", "backward", "optimizer"}) EXPECT_EQ(phases[p], 3) << p;
  // The tiny GPT's module scopes, with their layer as the payload (-1 outside blocks: none).
  EXPECT_TRUE(scopes_in_forward.count("block#0") && scopes_in_forward.count("block#1"))
      << ::testing::PrintToString(scopes_in_forward);
  EXPECT_TRUE(scopes_in_forward.count("attn#0")) << ::testing::PrintToString(scopes_in_forward);

  // profile.nvtx=false: not one more range.
  const size_t before = test::read_file(record).size();
  config::Config off = nvtx_config(dir.path(), "off");
  off.profile.nvtx = false;
  ASSERT_EQ(llmprof::config::name(run_training(off, nvtx_quiet()).status), "completed");
  EXPECT_EQ(test::read_file(record).size(), before);
}

#else

TEST(Nvtx, WithoutTheHeadersTheKeyIsAConfigError) {
  test::ScratchDir dir("nvtx");
  try {
    run_training(nvtx_config(dir.path(), "on"), nvtx_quiet());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "profile.nvtx");
  }
}

#endif

}  // namespace
}  // namespace llmprof::train
