// The configs in configs/ as a user plans them: every one plans on this CPU machine (the CUDA ones
// with a named device), the vocabulary comes as `llmprof train` builds it, and the lecture's 7B
// case study is Llama-2-7B's real shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/corpus.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "llmprof/plan/device.h"
#include "llmprof/plan/plan.h"
#include "support/test_support.h"

namespace llmprof::plan {
namespace {

namespace fs = std::filesystem;

// The configs name their data relative to the checkout (../shared/data/...), as the README runs
// them: from the repository root.
class InSourceDir {
 public:
  InSourceDir() : before_(fs::current_path()) { fs::current_path(LLMPROF_SOURCE_DIR); }
  ~InSourceDir() { fs::current_path(before_); }
  InSourceDir(const InSourceDir&) = delete;
  InSourceDir& operator=(const InSourceDir&) = delete;

 private:
  fs::path before_;
};

std::vector<std::string> config_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(LLMPROF_SOURCE_DIR) / "configs")) {
    if (e.path().extension() == ".yaml" || e.path().extension() == ".json") {
      files.push_back("configs/" + e.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Whether config file f reads ../shared/data, which is absent beside this checkout (a clone
// elsewhere): such a config cannot be planned here, and the test says it skipped it.
bool reads_absent_shared_data(const std::string& f) {
  if (!test::shared_data_dir().empty()) return false;
  return test::read_file(f).find("shared/data") != std::string::npos;
}

TEST(PlanCli, EveryConfigInConfigsPlansWithoutExtraFlags) {
  const InSourceDir here;
  const std::vector<std::string> files = config_files();
  ASSERT_GE(files.size(), 10u);
  for (const std::string& f : files) {
    if (reads_absent_shared_data(f)) {
      std::cout << "skipped " << f << ": ../shared/data is absent beside the checkout\n";
      continue;
    }
    const config::Config cfg = config::load_config(f);
    std::vector<std::string> args = {"plan", "-c", f};
    // A CUDA config names its GPU's product here (this machine has none); the 7B case study its
    // A100.
    if (cfg.device.kind == config::DeviceKind::kCuda) {
      args.push_back("--device");
      args.push_back(f.find("a100") != std::string::npos ? "A100-40GB" : "H100");
    }
    const test::CommandResult r = test::run_llmprof(args);
    EXPECT_EQ(r.exit_code, 0) << f << ":\n" << r.output;
    EXPECT_NE(r.output.find("peak (reserved)"), std::string::npos) << f << ":\n" << r.output;
  }
}

TEST(TokenizerVocabSize, CharConfigsCountTheGeneratedCorpusAsTrainDoes) {
  const InSourceDir here;
  // llama_tiny.yaml and quickstart.yaml: 1,000,000 generated characters with train.seed's
  // default; the play script uses 64 distinct bytes (the old hint said 65, Tiny Shakespeare's).
  for (const char* f : {"configs/llama_tiny.yaml", "configs/quickstart.yaml"}) {
    const config::Config cfg = config::load_config(f);
    ASSERT_EQ(cfg.model.vocab_size, 0) << f;
    const std::string text =
        data::generate_corpus(static_cast<uint64_t>(cfg.train.seed), cfg.data.generated_chars);
    EXPECT_EQ(tokenizer_vocab_size(cfg), data::make_char_tokenizer(text)->vocab_size()) << f;
    EXPECT_EQ(tokenizer_vocab_size(cfg), 64) << f;
  }
  // A char corpus file: Tiny Shakespeare's 65 characters.
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const config::Config sh = config::load_config("configs/shakespeare_char.yaml");
  EXPECT_EQ(tokenizer_vocab_size(sh), 65);
}

TEST(TokenizerVocabSize, AMissingCorpusFileIsNamed) {
  config::Config c;
  c.data.tokenizer = config::TokenizerKind::kChar;
  c.data.path = "/nonexistent/corpus.txt";
  try {
    tokenizer_vocab_size(c);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/corpus.txt"), std::string::npos) << e.what();
  }
}

TEST(LlamaSevenBConfig, IsLlama2SevenBsShapeWithItsParameterCount) {
  const InSourceDir here;
  const config::Config c = config::load_config("configs/llama7b_a100.yaml");
  EXPECT_EQ(c.model.type, config::ModelType::kLlama);
  EXPECT_EQ(c.model.intermediate_size, 11008);
  EXPECT_FALSE(c.model.tie_embeddings);
  // 2 V C + L (4 C^2 + 3 C F + 2 C) + C, V 32000, C 4096, F 11008, L 32 (Touvron et al. 2023).
  const MemoryPlan m = plan_memory(c, {tokenizer_vocab_size(c)});
  EXPECT_EQ(m.parameters, 6738415616);
}

}  // namespace
}  // namespace llmprof::plan
