// llmprof train records its plan beside what it measured (summary.json "plan"), and llmprof
// plan's command line: small CPU shapes, predicted vs measured within 10% (model states 1%).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace llmprof::plan {
namespace {

using nlohmann::json;
using test::run_llmprof;

// Trains 3 steps of tiny_test.yaml (or `config`) with the extra settings and returns
// summary.json's plan.
json plan_section(const test::ScratchDir& dir,
                  const std::vector<std::string>& sets,
                  const std::string& config = test::kTinyConfig) {
  std::vector<std::string> args = {"train", "--config", config, "--quiet", "--set",
                                   "schedule.max_steps=3", "--set", "train.eval_interval=0",
                                   "--set", "output.dir=" + dir.path(), "--set", "output.name=run",
                                   // a known MFU peak: llama_tiny.yaml has none, and measuring
                                   // one costs the run more than its 3 steps; no MFU is read
                                   "--set", "profile.peak_flops_per_s=1e11"};
  for (const std::string& s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  const auto r = run_llmprof(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return json::parse(test::read_file(dir.file("run/summary.json"))).at("plan");
}

void expect_reconciled(const json& plan) {
  const json& c = plan.at("components");
  const double peak = c.at("peak").at("ratio").get<double>();
  EXPECT_NEAR(peak, 1.0, 0.10) << plan.dump(1);
  for (const char* k : {"parameters", "gradients", "optimizer_state"}) {
    EXPECT_NEAR(c.at(k).at("ratio").get<double>(), 1.0, 0.01) << k;
  }
  EXPECT_EQ(plan.at("peak_phase").at("predicted"), plan.at("peak_phase").at("measured"));
}

TEST(TrainPlan, GptFp32PeakWithinTenPercentAndSamePhase) {
  test::ScratchDir dir("plan-gpt");
  const json p = plan_section(dir, {"train.batch_size=6", "model.block_size=24"});
  expect_reconciled(p);
  EXPECT_EQ(p.at("peak_phase").at("measured"), "backward");
}

TEST(TrainPlan, ProfilingOpsFromTheFirstStepStillMeasuresStepsOneAndTwo) {
  // The profiler's window opens at step 1 (schedule_wait=0) and records steps 1-2, the steps the
  // memory probe measures: both take part in every phase, neither takes the other's place.
  test::ScratchDir dir("plan-ops-wait0");
  const json p =
      plan_section(dir, {"train.batch_size=6", "model.block_size=24", "profile.level=ops",
                         "profile.schedule_wait=0", "profile.schedule_warmup=0",
                         "profile.schedule_active=2", "profile.peak_bytes_per_s=1e10"});
  expect_reconciled(p);
  EXPECT_EQ(p.at("peak_phase").at("measured"), "backward");
}

TEST(TrainPlan, GptBf16CheckpointedSdpaWithinTenPercent) {
  test::ScratchDir dir("plan-gpt-bf16");
  expect_reconciled(plan_section(dir, {"train.precision=bf16", "model.attention=sdpa",
                                       "train.activation_checkpointing=true", "model.n_layer=3"}));
}

TEST(TrainPlan, GptDropoutMasksAreCountedInSavedBytes) {
  // LibTorch 1.13's CPU dropout saves its noise tensor (input dtype): embedding, attention
  // probabilities (mask and output), both residual branches.
  test::ScratchDir dir("plan-dropout");
  const json p = plan_section(dir, {"model.dropout=0.2", "train.batch_size=8"});
  expect_reconciled(p);
  EXPECT_NEAR(p.at("components").at("saved_for_backward").at("ratio").get<double>(), 1.0, 0.01);
}

TEST(TrainPlan, AccumulationPeaksInTheLastMicroBatchWithAllGradientsLive) {
  test::ScratchDir dir("plan-accum");
  const json p = plan_section(dir, {"train.grad_accum_steps=2", "train.batch_size=6"});
  expect_reconciled(p);
}

const std::string kLlamaTiny = std::string(LLMPROF_SOURCE_DIR) + "/configs/llama_tiny.yaml";

TEST(TrainPlan, LlamaGqaFp32PeakWithinTenPercentAndSamePhase) {
  // RMSNorm in fp32, RoPE, 4 query heads over 2 key/value heads, SwiGLU 352, untied head.
  test::ScratchDir dir("plan-llama");
  const json p = plan_section(dir,
                              {"model.n_layer=2", "train.batch_size=4", "model.block_size=32",
                               "data.generated_chars=20000", "threads=1"},
                              kLlamaTiny);
  expect_reconciled(p);
}

TEST(TrainPlan, LlamaBf16SdpaCheckpointedTiedWithinTenPercent) {
  // sdpa in LibTorch 1.13 on the CPU: k and v repeated to the query heads before the math path.
  test::ScratchDir dir("plan-llama-bf16");
  expect_reconciled(plan_section(
      dir,
      {"model.n_layer=2", "train.batch_size=4", "model.block_size=32", "data.generated_chars=20000",
       "threads=1", "train.precision=bf16", "model.attention=sdpa",
       "train.activation_checkpointing=true", "model.tie_embeddings=true"},
      kLlamaTiny));
}

TEST(TrainPlan, DistilbertMlmWithinTenPercent) {
  const std::string vocab = test::shared_data("vocab/bert-base-uncased-vocab.txt");
  const std::string text = test::shared_data("wikitext-2/wiki.valid.tokens");
  if (test::read_file(vocab).empty() || test::read_file(text).empty()) {
    GTEST_SKIP() << "shared data absent: " << vocab;
  }
  test::ScratchDir dir("plan-distilbert");
  expect_reconciled(
      plan_section(dir, {"model.type=distilbert", "train.task=mlm", "data.tokenizer=wordpiece",
                         "data.vocab_path=" + vocab, "data.path=" + text, "data.format=text",
                         "data.max_examples=300", "model.n_embd=48", "model.n_head=4"}));
}

TEST(TrainPlan, ReportShowsTheTableAndNamesAComponentOffByMoreThanTenPercent) {
  test::ScratchDir dir("plan-report");
  plan_section(dir, {});
  const std::string summary = dir.file("run/summary.json");
  auto report = run_llmprof({"report", dir.file("run")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  test::expect_contains(report.output, "Plan: predicted vs measured memory");
  EXPECT_EQ(report.output.find("mispredicts"), std::string::npos) << report.output;
  // The same run with its predicted peak made 1.5x the measured one: the finding names it.
  json s = json::parse(test::read_file(summary));
  json& peak = s["plan"]["components"]["peak"];
  peak["predicted_bytes"] = peak["measured_bytes"].get<int64_t>() * 3 / 2;  // bytes: integers
  peak["ratio"] = 1.5;
  test::write_file(summary, s.dump());
  report = run_llmprof({"report", dir.file("run")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  test::expect_contains(report.output, "llmprof plan mispredicts peak");
}

TEST(PlanCommand, UnknownDeviceExitsTwoListingKnownOnes) {
  const auto r = run_llmprof(
      {"plan", "--config", test::kTinyConfig, "--set", "model.vocab_size=65", "--device", "v100"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  test::expect_contains(r.output, "v100");
  test::expect_contains(r.output, "a100-40gb");
}

TEST(PlanCommand, AllocatorIsCachingOrExpandableSegments) {
  const std::vector<std::string> base = {
      "plan",     "--config",  test::kTinyConfig, "--set", "model.vocab_size=65",
      "--device", "h100-80gb", "--format",        "json"};
  auto with = [&](const std::string& allocator) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--allocator", allocator});
    return run_llmprof(args);
  };
  const auto bad = with("cudaMallocAsync");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  test::expect_contains(bad.output, "--allocator 'cudaMallocAsync'");
  const auto x = with("expandable_segments");
  ASSERT_EQ(x.exit_code, 0) << x.output;
  const auto k = with("caching");
  ASSERT_EQ(k.exit_code, 0) << k.output;
  const json jx = json::parse(x.output), jk = json::parse(k.output);
  EXPECT_EQ(jx.at("allocator"), "expandable_segments");
  EXPECT_EQ(jk.at("allocator"), "caching");
  EXPECT_EQ(
      jk.at("peak_reserved_bytes").get<int64_t>() - jx.at("peak_reserved_bytes").get<int64_t>(),
      jk.at("largest_tensor_bytes").get<int64_t>());
}

TEST(PlanCommand, JsonHasComponentsAndTechniques) {
  const auto r = run_llmprof({"plan", "--config", test::kTinyConfig, "--set", "model.vocab_size=65",
                              "--device", "h100-80gb", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output);
  EXPECT_EQ(j.at("device").at("name"), "h100-80gb");
  EXPECT_GT(j.at("peak_bytes").get<int64_t>(), 0);
  EXPECT_TRUE(j.at("fits").get<bool>());
  EXPECT_GE(j.at("techniques").size(), 8u);
  EXPECT_EQ(j.at("step_ms_label"), "roofline lower bound");
}

// The char vocabulary comes from the corpus as train builds it: the generated one by default, a
// data.path that cannot be read is named.
TEST(PlanCommand, CharVocabularyComesFromTheCorpusAndAnUnreadableOneIsNamed) {
  const auto r = run_llmprof({"plan", "-c", test::kTinyConfig});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto missing =
      run_llmprof({"plan", "-c", test::kTinyConfig, "--set", "data.path=/nonexistent/corpus.txt"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  test::expect_contains(missing.output, "/nonexistent/corpus.txt");
}

TEST(PlanCommand, OptimizerStatesNonePrintsTheAdamwRowsBeside) {
  const auto r = run_llmprof({"plan", "-c", test::kTinyConfig, "--optimizer-states", "none"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  test::expect_contains(r.output, "weights and gradients only (no optimizer state)");
  test::expect_contains(r.output, "with AdamW");
  // Units that show the value, and the two activation columns named.
  test::expect_contains(r.output, "act. held");
  test::expect_contains(r.output, "act. peak");
  EXPECT_EQ(r.output.find(" 0.0 MiB"), std::string::npos) << r.output;
  const auto bad = run_llmprof({"plan", "-c", test::kTinyConfig, "--optimizer-states", "sgd"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  test::expect_contains(bad.output, "--optimizer-states 'sgd'");
}

}  // namespace
}  // namespace llmprof::plan
