// tried.json and what it does to findings: the text of each verdict (hand-set figures), the file
// round trip and merge, precision suggestions worded as experiments until tried, and a tried
// verdict kept in every format of a later report.
#include "llmprof/report/tried.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "llmprof/error.h"
#include "llmprof/report/report.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

namespace fs = std::filesystem;
using test::expect_contains;
using test::report_fixture;
using test::ScratchDir;

// A tried set with a comparison of the given ratio, interval and verdict (6 pairs of 20 steps: the
// order-statistic interval's 96.875%).
TriedSet tried(const std::string& set, double ratio, double low, double high, ab::Verdict v) {
  TriedSet t;
  t.set = set;
  t.rules = {"roofline"};
  t.figure = ab::Figure::kStepUsPerToken;
  t.steps = 20;
  t.baseline = {1.97, 2.01, 1.95, 1.97, 2.01, 1.95};
  t.candidate = {3.20, 3.1, 3.3, 3.20, 3.1, 3.3};
  ab::Comparison c;
  c.pairs = 6;
  c.confidence = 62.0 / 64;
  c.baseline_median = 1.97;
  c.candidate_median = 1.97 * ratio;
  c.ratio_of_medians = ratio;
  c.median_paired_ratio = ratio;
  c.interval = ab::Interval{low, high, c.confidence};
  c.verdict = v;
  t.comparison = c;
  t.time = "2026-11-27T10:00:00+0000";
  t.command = "llmprof report --try run";
  return t;
}

TEST(TriedText, SaysFasterAsASpeedupWithItsInterval) {
  // 1 / 0.6711 = 1.490; the interval inverts: 1 / 0.70 = 1.43, 1 / 0.65 = 1.54.
  EXPECT_EQ(tried_text(tried("optim.fused=true", 0.6711, 0.65, 0.70, ab::Verdict::kFaster)),
            "tried: 1.49x faster (96.9% CI 1.43x to 1.54x; 6 repetitions of 20 steps each, step "
            "time per token)");
}

TEST(TriedText, SaysSlowerIsNotAdvised) {
  // 3.20 / 1.97 = 1.624.
  EXPECT_EQ(
      tried_text(tried("train.precision=bf16", 3.20 / 1.97, 1.5, 1.7, ab::Verdict::kSlower)),
      "tried: slower, not advised (1.62x slower, 96.9% CI 1.50x to 1.70x; 6 repetitions of 20 "
      "steps each, step time per token)");
}

TEST(TriedText, SaysInconclusiveWhenTheIntervalSpansNoChange) {
  EXPECT_EQ(tried_text(tried("threads=1", 1.0, 0.9, 1.1, ab::Verdict::kInconclusive)),
            "tried: inconclusive (1.00x the time; the 96.9% CI 0.900x to 1.10x spans no change; 6 "
            "repetitions of 20 steps each, step time per token)");
}

TEST(TriedText, SaysWhyASetWasNotMeasured) {
  TriedSet t;
  t.set = "optim.fused=true";
  t.error = "A/B: the candidate repetition 1 failed (exit 2): optim.fused: true, but LibTorch 1.13";
  EXPECT_EQ(tried_text(t), "tried: not measured: " + t.error);
}

TEST(TriedFile, AbsentIsEmptyAndWrittenIsReadBack) {
  ScratchDir dir("tried");
  EXPECT_TRUE(read_tried(dir.path()).empty());
  TriedSet failed;
  failed.set = "optim.fused=true";
  failed.rules = {"optimizer_share"};
  failed.steps = 20;
  failed.error = "refused";
  write_tried(dir.path(),
              {tried("train.precision=bf16", 1.6, 1.5, 1.7, ab::Verdict::kSlower), failed});
  const std::vector<TriedSet> back = read_tried(dir.path());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].set, "train.precision=bf16");
  EXPECT_EQ(back[0].rules, std::vector<std::string>{"roofline"});
  EXPECT_EQ(back[0].figure, ab::Figure::kStepUsPerToken);
  EXPECT_EQ(back[0].steps, 20);
  EXPECT_EQ(back[0].candidate, (std::vector<double>{3.20, 3.1, 3.3, 3.20, 3.1, 3.3}));
  ASSERT_TRUE(back[0].comparison && back[0].comparison->interval);
  EXPECT_EQ(back[0].comparison->verdict, ab::Verdict::kSlower);
  EXPECT_DOUBLE_EQ(back[0].comparison->ratio_of_medians, 1.6);
  EXPECT_DOUBLE_EQ(back[0].comparison->interval->low, 1.5);
  EXPECT_DOUBLE_EQ(back[0].comparison->interval->confidence, 62.0 / 64);  // read back
  EXPECT_FALSE(back[1].comparison.has_value());
  EXPECT_EQ(back[1].error, "refused");
}

TEST(TriedFile, ATryAgainReplacesTheSameSetAndKeepsTheOthers) {
  ScratchDir dir("tried");
  write_tried(dir.path(), {tried("a=1", 0.5, 0.4, 0.6, ab::Verdict::kFaster),
                           tried("b=2", 1.0, 0.9, 1.1, ab::Verdict::kInconclusive)});
  write_tried(dir.path(), {tried("a=1", 1.6, 1.5, 1.7, ab::Verdict::kSlower)});
  const std::vector<TriedSet> back = read_tried(dir.path());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].set, "b=2");
  EXPECT_EQ(back[1].set, "a=1");
  EXPECT_EQ(back[1].comparison->verdict, ab::Verdict::kSlower);
}

TEST(TriedFile, MalformedFileIsADataErrorNamingIt) {
  ScratchDir dir("tried");
  test::write_file(dir.file("tried.json"), "{\"tried\": [{\"set\": 3}]}");
  expect_contains(test::data_error_of([&] { read_tried(dir.path()); }), "tried.json");
  test::write_file(dir.file("tried.json"), "{\"tried\": [");
  expect_contains(test::data_error_of([&] { read_tried(dir.path()); }), "tried.json");
}

TEST(TriedFile, AFigureOrVerdictThisVersionDoesNotKnowIsADataErrorNamingTheField) {
  ScratchDir dir("tried");
  write_tried(dir.path(), {tried("a=1", 0.5, 0.4, 0.6, ab::Verdict::kFaster)});
  std::string text = test::read_file(dir.file("tried.json"));
  text.replace(text.find("\"faster\""), 8, "\"sideways\"");
  test::write_file(dir.file("tried.json"), text);
  expect_contains(
      test::data_error_of([&] { read_tried(dir.path()); }),
      "tried.json: tried.0.verdict 'sideways' is not one of faster|slower|inconclusive");
}

TEST(TriedFile, AnotherTryKeepsTheFieldsOfEntriesItDoesNotKnow) {
  ScratchDir dir("tried");
  write_tried(dir.path(), {tried("a=1", 0.5, 0.4, 0.6, ab::Verdict::kFaster),
                           tried("b=2", 1.0, 0.9, 1.1, ab::Verdict::kInconclusive)});
  std::string text = test::read_file(dir.file("tried.json"));
  text.replace(text.find("\"set\": \"b=2\""), 0, "\"seed\": 7, ");
  test::write_file(dir.file("tried.json"), text);
  write_tried(dir.path(), {tried("a=1", 1.6, 1.5, 1.7, ab::Verdict::kSlower)});
  const nlohmann::json j = nlohmann::json::parse(test::read_file(dir.file("tried.json")));
  ASSERT_EQ(j.at("tried").size(), 2u);
  EXPECT_EQ(j["tried"][0].at("set"), "b=2");  // kept first, with its field
  EXPECT_EQ(j["tried"][0].at("seed"), 7);
  EXPECT_EQ(j["tried"][1].at("verdict"), "slower");
}

// A run directory whose summary.json says a data-parallel run of `world_size` ranks.
void write_distributed_summary(const ScratchDir& dir, int world_size) {
  test::write_file(dir.file("summary.json"),
                   "{\"schema_version\": 1, \"status\": \"completed\", \"distributed\": "
                   "{\"world_size\": " +
                       std::to_string(world_size) + ", \"launcher\": \"torchrun\"}}");
}

// The case: a 2-rank run's ddp.bucket_mb=12.5 judged "slower, not advised" by trials of
// one process, in a tried.json from before world_size: the next report drops the verdict and
// says so; the next --try's rewrite removes it; a verdict at 2 ranks stays.
TEST(TriedFile, AVerdictMeasuredWithOneProcessIsDroppedForATwoRankRun) {
  ScratchDir dir("tried");
  write_distributed_summary(dir, 2);
  write_tried(dir.path(), {tried("ddp.bucket_mb=12.5", 1.35, 1.2, 1.5, ab::Verdict::kSlower)});
  std::string text = test::read_file(dir.file("tried.json"));
  for (const std::string field : {"world_size\": 1", "launcher\": \"none\""}) {
    const size_t at = text.find(field);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, field.size(), "x_" + field.substr(0, 3) + "\": 0");  // a file before them
  }
  test::write_file(dir.file("tried.json"), text);
  const std::vector<TriedSet> back = read_tried(dir.path());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].world_size, 1);
  EXPECT_FALSE(back[0].comparison.has_value());
  EXPECT_TRUE(back[0].baseline.empty());
  EXPECT_EQ(tried_text(back[0]),
            "tried: not measured: a verdict (slower) measured with one process for this run of "
            "2 ranks is dropped; `llmprof report --try " +
                dir.path() + "` measures it with 2 ranks");
  TriedSet two = tried("train.batch_size=8", 0.5, 0.4, 0.6, ab::Verdict::kFaster);
  two.world_size = 2;
  two.launcher = "nproc";
  write_tried(dir.path(), {two});
  const nlohmann::json j = nlohmann::json::parse(test::read_file(dir.file("tried.json")));
  ASSERT_EQ(j.at("tried").size(), 1u) << j.dump(2);
  EXPECT_EQ(j["tried"][0].at("set"), "train.batch_size=8");
  EXPECT_EQ(j["tried"][0].at("world_size"), 2);
  EXPECT_EQ(j["tried"][0].at("launcher"), "nproc");
  const std::vector<TriedSet> kept = read_tried(dir.path());
  ASSERT_EQ(kept.size(), 1u);
  ASSERT_TRUE(kept[0].comparison.has_value());
  expect_contains(tried_text(kept[0]), "step time per token, 2 ranks)");
}

// A single-process run keeps its verdicts; one measured at 2 ranks is not its own.
TEST(TriedFile, ASingleProcessRunDropsAVerdictOfTwoRanks) {
  ScratchDir dir("tried");
  TriedSet one = tried("a=1", 0.5, 0.4, 0.6, ab::Verdict::kFaster);
  TriedSet two = tried("b=2", 0.5, 0.4, 0.6, ab::Verdict::kFaster);
  two.world_size = 2;
  write_tried(dir.path(), {one, two});
  const std::vector<TriedSet> back = read_tried(dir.path());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(back[0].comparison.has_value());
  EXPECT_EQ(tried_text(back[0]).find("ranks"), std::string::npos) << tried_text(back[0]);
  EXPECT_FALSE(back[1].comparison.has_value());
  expect_contains(back[1].error, "measured with 2 ranks for this run of one process is dropped");
}

// run_a with a memory-bound op losing 5 ms of its 10 ms step: the roofline rule fires on an fp32
// run and may suggest bf16.
rundir::Run memory_bound_run() {
  rundir::Run r = rundir::load_run(report_fixture("run_a"));
  OpRow op;
  op.op = "aten::mul_";
  op.calls = 40;
  op.total_ms = 6;
  op.roofline.bound = "memory";
  op.roofline.roofline_ms = 1;
  op.roofline.lost_ms = 5;
  r.ops = {op};
  return r;
}

const Finding& finding(const std::vector<Finding>& fs, const std::string& rule) {
  for (const auto& f : fs) {
    if (f.rule == rule) return f;
  }
  throw std::runtime_error("no finding " + rule);
}

TEST(PrecisionSuggestion, IsAnExperimentUntilTried) {
  const rundir::Run r = memory_bound_run();
  std::vector<Finding> fs = run_findings(r, compute_metrics(r));
  const Finding& f = finding(fs, "roofline");
  expect_contains(f.suggestion,
                  "`--set train.precision=bf16` halves its bytes, but autocast adds casts around "
                  "each op");
  expect_contains(
      f.suggestion,
      "an experiment, not advice, until measured (`llmprof report --try " + r.dir + "`)");
  EXPECT_EQ(f.sets, std::vector<std::string>{"train.precision=bf16"});
  EXPECT_TRUE(f.experiment);
  EXPECT_EQ(suggestion_label(f), "Experiment (not yet tried)");
  attach_tried(fs, {tried("train.precision=bf16", 1.6, 1.5, 1.7, ab::Verdict::kSlower),
                    tried("other=1", 0.5, 0.4, 0.6, ab::Verdict::kFaster)});
  const Finding& t = finding(fs, "roofline");
  ASSERT_EQ(t.tried.size(), 1u);  // only the set it names
  EXPECT_EQ(suggestion_label(t), "Not advised (tried: slower)");
  fs = run_findings(r, compute_metrics(r));
  attach_tried(fs, {tried("train.precision=bf16", 0.5, 0.4, 0.6, ab::Verdict::kFaster)});
  EXPECT_EQ(suggestion_label(finding(fs, "roofline")), "Suggested");
}

TEST(PrecisionSuggestion, PrecisionRuleIsWordedAsAnExperiment) {
  rundir::Run r = rundir::load_run(report_fixture("run_a"));
  r.native_bf16 = true;
  r.peak_flops_per_s = 95e9;
  r.peak_bf16_flops_per_s = 196e9;
  const auto f = rule_precision(r, compute_metrics(r));
  ASSERT_TRUE(f.has_value());
  expect_contains(f->suggestion, "`--set train.precision=bf16` runs the matmuls in bf16");
  expect_contains(f->suggestion, "an experiment, not advice, until measured");
  EXPECT_EQ(f->suggestion.find("(autocast: matmuls in bf16"), std::string::npos);
}

TEST(FindingSets, AreTheSetsItsSuggestionNames) {
  const rundir::Run b = rundir::load_run(report_fixture("run_b"));
  const std::vector<Finding> fs = run_findings(b, compute_metrics(b));
  const Finding& f = finding(fs, "optimizer_share");
  EXPECT_EQ(f.sets, (std::vector<std::string>{"optim.fused=true", "train.batch_size=32",
                                              "train.grad_accum_steps=2"}));
  EXPECT_FALSE(f.experiment);
  EXPECT_EQ(f.suggestion.find("no config key yet"), std::string::npos) << f.suggestion;
}

TEST(FindingSets, NoFusedSetForSgdOrAnAlreadyFusedOptimizer) {
  rundir::Run b = rundir::load_run(report_fixture("run_b"));
  b.config["optim.name"] = "sgd";
  const Finding sgd = *rule_optimizer_share(b, compute_metrics(b));
  EXPECT_EQ(sgd.suggestion.find("optim.fused"), std::string::npos) << sgd.suggestion;
  b.config["optim.name"] = "adamw";
  b.config["optim.fused"] = "true";
  const Finding fused = *rule_optimizer_share(b, compute_metrics(b));
  expect_contains(fused.suggestion, "already fused (optim.fused = true)");
  EXPECT_EQ(fused.suggestion.find("--set optim.fused"), std::string::npos);
}

// A verdict in tried.json shows under its finding in Markdown, CSV, JSON and HTML.
TEST(BuildReport, KeepsTriedVerdictsInEveryFormat) {
  ScratchDir dir("tried");
  const std::string run = dir.file("run_b");
  fs::copy(report_fixture("run_b"), run, fs::copy_options::recursive);
  write_tried(run, {tried("optim.fused=true", 1.6, 1.5, 1.7, ab::Verdict::kSlower)});
  ReportOptions o;
  o.inputs = {run};
  const Document doc = build_report(o);
  const std::string line = "tried: slower, not advised (1.60x slower";
  expect_contains(render(doc, Format::kMarkdown), "`--set optim.fused=true` " + line);
  expect_contains(render(doc, Format::kCsv), line);
  expect_contains(render(doc, Format::kHtml), "data-verdict=\"slower\"");
  const auto j = nlohmann::json::parse(render(doc, Format::kJson));
  bool seen = false;
  for (const auto& f : j["findings"]) {
    if (f["rule"] != "optimizer_share") continue;
    ASSERT_EQ(f["tried"].size(), 1u);
    EXPECT_EQ(f["tried"][0]["verdict"], "slower");
    EXPECT_DOUBLE_EQ(f["tried"][0]["ratio_of_medians"].get<double>(), 1.6);
    seen = true;
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace llmprof::report
