// scripts/hf/make_llama_fixtures.py run at test time: it writes the three Llama-family folders that
// tests/checkpoint/llama_hf_checkpoint_test.cpp reads, the same weights, configs and tokenizers as
// committed and the same expected logits (within 1e-6: another numpy may sum in another order) and
// token ids. Skipped with a message where no python3 has numpy.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.h"

namespace llmprof {
namespace {

const std::string kScript = std::string(LLMPROF_SOURCE_DIR) + "/scripts/hf/make_llama_fixtures.py";
const std::string kCommitted =
    std::string(LLMPROF_SOURCE_DIR) + "/tests/checkpoint/fixtures/hf_llama";

struct Shell {
  int exit_code = -1;
  std::string output;
};

Shell shell(const std::string& cmd) {
  Shell r;
  if (FILE* f = ::popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, f) != nullptr) r.output += buf;
    const int status = ::pclose(f);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return r;
}

// A python3 that imports numpy ("" when there is none): PATH's, else Debian's.
std::string python_with_numpy() {
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    if (shell(std::string("timeout 60 ") + py + " -c 'import numpy'").exit_code == 0) return py;
  }
  return "";
}

double max_abs_diff(const nlohmann::json& a, const nlohmann::json& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < a[i].size(); ++j) {
      worst = std::max(worst, std::abs(a[i][j].get<double>() - b[i][j].get<double>()));
    }
  }
  return worst;
}

TEST(MakeLlamaFixturesScript, WritesTheCommittedFoldersAgain) {
  const std::string py = python_with_numpy();
  if (py.empty()) GTEST_SKIP() << "no python3 with numpy (Debian: python3-numpy)";
  test::ScratchDir dir("llmprof-llama-fixtures");
  const Shell r = shell("timeout 300 " + py + " '" + kScript + "' --out '" + dir.path() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"llama_tiny", "qwen2_tiny", "mistral_tiny"}) {
    const std::string got = dir.file(name), want = kCommitted + "/" + name;
    EXPECT_NE(r.output.find("wrote " + got), std::string::npos) << r.output;
    for (const char* f :
         {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}) {
      EXPECT_TRUE(test::read_file(got + "/" + f) == test::read_file(want + "/" + f))
          << name << "/" << f << " differs from the committed one";
    }
    const auto e_got = nlohmann::json::parse(test::read_file(got + "/expected.json"));
    const auto e_want = nlohmann::json::parse(test::read_file(want + "/expected.json"));
    EXPECT_EQ(e_got["ids"], e_want["ids"]) << name;
    EXPECT_EQ(e_got["texts"], e_want["texts"]) << name;
    ASSERT_EQ(e_got["logits"].size(), e_want["logits"].size()) << name;
    EXPECT_LT(max_abs_diff(e_got["logits"], e_want["logits"]), 1e-6) << name;
  }
}

}  // namespace
}  // namespace llmprof
