// RankEnv from torchrun-style and Slurm environments (include/llmprof/dist/rank_env.h).
#include "llmprof/dist/rank_env.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "llmprof/error.h"

namespace llmprof::dist {
namespace {

using Env = std::map<std::string, std::string>;

RankEnv parse(const Env& env) {
  return rank_env_from([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const Env& env) {
  try {
    parse(env);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.what();
  }
  return "(no error)";
}

TEST(RankEnv, NoLauncherVariablesIsOneProcess) {
  RankEnv env = parse({{"HOME", "/root"}});
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.rank, 0);
  EXPECT_FALSE(env.distributed());
  EXPECT_EQ(env.source, EnvSource::kNone);
}

TEST(RankEnv, TorchrunVariablesAreRead) {
  RankEnv env = parse({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"},
                       {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29601"}});
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 29601);
  EXPECT_EQ(env.port_origin, "MASTER_PORT");
  EXPECT_EQ(env.source, EnvSource::kTorchrun);
  EXPECT_TRUE(env.distributed());
}

TEST(RankEnv, TorchrunDefaultsAddressAndPort) {
  RankEnv env = parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(env.master_addr, "127.0.0.1");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_EQ(env.local_rank, 0);
}

TEST(RankEnv, SlurmStepTakesTheFirstHostOfTheBracketList) {
  RankEnv env = parse({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                       {"SLURM_STEP_ID", "0"}, {"SLURM_JOB_ID", "123456"},
                       {"SLURM_STEP_NODELIST", "gpu[03-05,9],cpu1"}});
  EXPECT_EQ(env.source, EnvSource::kSlurm);
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "gpu03");
  EXPECT_EQ(env.master_port, 20000 + 123456 % 10000);  // 23456
  EXPECT_EQ(env.port_origin, "SLURM_JOB_ID");
}

TEST(RankEnv, SlurmMasterPortWins) {
  RankEnv env = parse({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "1"},
                       {"SLURM_JOB_ID", "77"}, {"MASTER_PORT", "31000"},
                       {"SLURM_JOB_NODELIST", "n1"}});
  EXPECT_EQ(env.master_port, 31000);
  EXPECT_EQ(env.master_addr, "n1");
}

TEST(RankEnv, SlurmBatchScriptWithoutStepIsOneProcess) {
  RankEnv env = parse({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "9"}});
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.source, EnvSource::kNone);
}

TEST(RankEnv, ExpandsNodeLists) {
  using V = std::vector<std::string>;
  EXPECT_EQ(expand_nodelist("node[01-03,7]"), (V{"node01", "node02", "node03", "node7"}));
  EXPECT_EQ(expand_nodelist("a1,b[8-10]x,c"), (V{"a1", "b8x", "b9x", "b10x", "c"}));
  EXPECT_EQ(expand_nodelist("single"), (V{"single"}));
  EXPECT_EQ(expand_nodelist("n[007-008]"), (V{"n007", "n008"}));
}

TEST(RankEnv, MalformedNodeListIsAConfigError) {
  EXPECT_THROW(expand_nodelist("node[01-03"), ConfigError);
  EXPECT_THROW(expand_nodelist("node[3-1]"), ConfigError);
  EXPECT_THROW(expand_nodelist("node[a-b]"), ConfigError);
  EXPECT_THROW(expand_nodelist("a,,b"), ConfigError);
}

TEST(RankEnv, BadValuesNameTheVariableAndValue) {
  std::string e = error_of({{"RANK", "two"}, {"WORLD_SIZE", "4"}});
  EXPECT_NE(e.find("RANK"), std::string::npos) << e;
  EXPECT_NE(e.find("two"), std::string::npos) << e;
  e = error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}});
  EXPECT_NE(e.find("RANK=2 is not below WORLD_SIZE=2"), std::string::npos) << e;
  e = error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}});
  EXPECT_NE(e.find("MASTER_PORT"), std::string::npos) << e;
  EXPECT_NE(e.find("70000"), std::string::npos) << e;
  e = error_of({{"RANK", "0"}});
  EXPECT_NE(e.find("WORLD_SIZE"), std::string::npos) << e;
  e = error_of({{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NTASKS", "0"}});
  EXPECT_NE(e.find("SLURM_NTASKS"), std::string::npos) << e;
  e = error_of({{"SLURM_PROCID", "1"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NTASKS", "2"},
                {"SLURM_STEP_NODELIST", "x[1-"}});
  EXPECT_NE(e.find("x[1-"), std::string::npos) << e;
}

}  // namespace
}  // namespace llmprof::dist
