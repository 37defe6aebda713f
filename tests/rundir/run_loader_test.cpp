// Reading run directories back: every file into typed rows, an incomplete run from steps.csv
// alone, and malformed files failing with the file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "llmprof/error.h"
#include "llmprof/rundir/read.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

using test::report_fixture;
using test::ScratchDir;

// Runs fn, expects a DataError whose message holds every part.
template <typename Fn>
void expect_data_error(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no DataError thrown";
  } catch (const DataError& e) {
    std::string what = e.what();
    for (const auto& p : parts)
      EXPECT_NE(what.find(p), std::string::npos) << p << " not in: " << what;
    EXPECT_EQ(e.exit_code(), 2);
  }
}

TEST(LoadRun, ReadsEveryFileOfACompleteRun) {
  auto run = load_run(report_fixture("run_a"));
  EXPECT_EQ(run.label, "run_a");
  EXPECT_EQ(run.status_text(), "completed");
  EXPECT_FALSE(run.incomplete);
  EXPECT_EQ(run.steps.size(), 11u);
  EXPECT_EQ(run.config.at("train.batch_size"), "4");
  EXPECT_EQ(run.config.at("optim.name"), "adamw");
  EXPECT_EQ(*run.config_number("model.block_size"), 128);
  EXPECT_EQ(*run.host_memory_bytes, 17179869184.0);
  EXPECT_EQ(*run.peak_flops_per_s, 1e11);
  EXPECT_EQ(*run.summary_warmup_steps, 1);
  ASSERT_EQ(run.evals.size(), 4u);
  EXPECT_EQ(run.evals[3].split, "val");
  EXPECT_DOUBLE_EQ(run.evals[3].loss, 3.2);
  // embedding + 14 scopes x 2 blocks + ln_f, lm_head, loss = 32 rows per pass.
  EXPECT_EQ(run.modules.size(), 64u);
  EXPECT_EQ(run.ops.size(), 17u);
  EXPECT_EQ(run.ops[0].input_shapes, "[[512, 32], [32, 96], [96]]");  // quoted, with commas
  EXPECT_EQ(run.memory.size(), 6u);
  EXPECT_EQ(run.activations.size(), 6u);
  EXPECT_FALSE(run.energy.has_value());
}

TEST(LoadRun, ReadsEnergyFromSummary) {
  auto run = load_run(report_fixture("run_b"));
  ASSERT_TRUE(run.energy.has_value());
  EXPECT_EQ(*run.energy->total_j, 6.0);
  EXPECT_EQ(run.energy->source, "rapl");
  EXPECT_FALSE(run.energy->estimated);
  EXPECT_FALSE(run.energy->co2_g.has_value());  // null stays unknown
}

TEST(LoadRun, MarksARunWithoutSummaryIncomplete) {
  auto run = load_run(report_fixture("run_incomplete"));
  EXPECT_EQ(run.status_text(), "incomplete");
  EXPECT_TRUE(run.incomplete);
  EXPECT_EQ(run.steps.size(), 4u);
  EXPECT_TRUE(run.evals.empty());
  EXPECT_TRUE(run.modules.empty());
}

TEST(LoadRun, MissingDirectoryNamesIt) {
  expect_data_error([] { load_run("/nonexistent/llmprof-run"); },
                    {"/nonexistent/llmprof-run", "no such directory"});
}

TEST(LoadRun, DirectoryWithoutStepsIsNotARun) {
  ScratchDir dir;
  expect_data_error([&] { load_run(dir.path()); }, {dir.path(), "steps.csv"});
}

TEST(LoadRun, ShortCsvRowBeforeTheLastNamesFileAndLine) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms,loss\n0,1.5,4\n1,1.5\n2,1.5,3.8\n");
  expect_data_error([&] { load_run(dir.path()); },
                    {dir.file("steps.csv"), "line 3", "2 fields, the header has 3"});
}

TEST(LoadRun, PartialLastStepsRowOfAKilledRunIsSkippedWithAWarning) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms,loss\n0,1.5,4\n1,1.5,3.9\n2,1.");
  auto run = load_run(dir.path());
  EXPECT_EQ(run.steps.size(), 2u);
  EXPECT_TRUE(run.incomplete);
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_EQ(run.warnings[0].file, dir.file("steps.csv"));
  EXPECT_EQ(run.warnings[0].line, 4);
  std::string text = run.warnings[0].text();
  EXPECT_NE(text.find(dir.file("steps.csv") + " line 4"), std::string::npos) << text;
  EXPECT_NE(text.find("2 fields, the header has 3"), std::string::npos) << text;
}

TEST(LoadRun, PartialLastRowEndingInANewlineIsSkippedToo) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1.5\n1,1.5\n");
  test::write_file(dir.file("eval.csv"), "step,split,loss\n5,val,3.7\n10,val\n");
  auto run = load_run(dir.path());
  EXPECT_EQ(run.evals.size(), 1u);
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_EQ(run.warnings[0].file, dir.file("eval.csv"));
  EXPECT_EQ(run.warnings[0].line, 3);
}

TEST(LoadRun, LastRowWithoutItsNewlineIsSkippedEvenWithEveryField) {
  // Every writer ends a row with a newline: without it the last field may be cut ("1.5" -> "1.").
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1.5\n1,1.");
  auto run = load_run(dir.path());
  EXPECT_EQ(run.steps.size(), 1u);
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_EQ(run.warnings[0].line, 3);
  EXPECT_NE(run.warnings[0].text().find("no newline"), std::string::npos) << run.warnings[0].text();
}

TEST(LoadRun, UnterminatedQuoteOnTheLastLineIsAPartialRow) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1\n");
  test::write_file(dir.file("ops.csv"),
                   "op,self_ms,input_shapes\naten::mm,1,\"[[2]]\"\naten::add,2,\"[[2");
  auto run = load_run(dir.path());
  EXPECT_EQ(run.ops.size(), 1u);
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_EQ(run.warnings[0].line, 3);
}

TEST(LoadRun, EmptySideFilesOfAFullDiskAreSkippedWithAWarning) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1\n1,1\n");
  for (const char* f : {"modules.csv", "memory.csv", "env.json", "summary.json"}) {
    test::write_file(dir.file(f), "");
  }
  auto run = load_run(dir.path());
  EXPECT_EQ(run.steps.size(), 2u);
  EXPECT_TRUE(run.modules.empty());
  EXPECT_TRUE(run.incomplete);
  EXPECT_EQ(run.status_text(),
            "incomplete");  // an empty summary.json says no more than a missing one
  ASSERT_EQ(run.warnings.size(), 4u);
  std::string all;
  for (const auto& w : run.warnings) all += w.text() + "\n";
  for (const char* f : {"modules.csv", "memory.csv", "env.json", "summary.json"}) {
    EXPECT_NE(all.find(dir.file(f) + ": empty file"), std::string::npos) << all;
  }
}

TEST(LoadRun, EmptyStepsCsvStaysAnError) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "");
  expect_data_error([&] { load_run(dir.path()); }, {dir.file("steps.csv"), "empty file"});
}

TEST(LoadRun, AWholeRunHasNoWarnings) {
  auto run = load_run(report_fixture("run_a"));
  EXPECT_TRUE(run.warnings.empty());
  EXPECT_FALSE(run.incomplete);
}

// A step past int64 (found by the steps fuzzer: 1.1e60) is an error, not an undefined cast.
TEST(LoadRun, StepOutsideInt64NamesFileLineAndColumn) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1.5\n1.11111e60,1.5\n");
  expect_data_error([&] { load_run(dir.path()); },
                    {dir.file("steps.csv"), "line 3", "'step'", "not an integer in int64 range"});
}

TEST(LoadRun, NonNumericFieldNamesFileLineAndColumn) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1.5\n1,1.5\n2,fast\n");
  expect_data_error([&] { load_run(dir.path()); },
                    {dir.file("steps.csv"), "line 4", "'step_ms'", "'fast' is not a number"});
}

TEST(LoadRun, QuotedNewlineKeepsLineNumbersRight) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1\n");
  test::write_file(dir.file("ops.csv"),
                   "op,self_ms,input_shapes\naten::mm,1,\"[[2,\n3]]\"\naten::add,x,\"[]\"\n");
  expect_data_error([&] { load_run(dir.path()); }, {dir.file("ops.csv"), "line 4", "'x'"});
}

TEST(LoadRun, InvalidJsonNamesFileAndLine) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1\n");
  test::write_file(dir.file("summary.json"),
                   "{\n  \"status\": \"completed\",\n  \"steps\": {,}\n}\n");
  expect_data_error([&] { load_run(dir.path()); },
                    {dir.file("summary.json"), "line 3", "invalid JSON"});
}

// A number past a double's range makes the JSON parser throw out_of_range, not parse_error.
TEST(LoadRun, NumberPastADoubleIsInvalidJson) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1\n");
  test::write_file(dir.file("summary.json"), "{\"steps\": 7e777}\n");
  expect_data_error([&] { load_run(dir.path()); },
                    {dir.file("summary.json"), "invalid JSON", "number overflow parsing '7e777'"});
}

TEST(LoadRun, BadModulePassNamesTheValue) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1\n");
  test::write_file(dir.file("modules.csv"), "scope,block,pass,total_ms\nattn,0,sideways,1\n");
  expect_data_error([&] { load_run(dir.path()); }, {"modules.csv", "line 2", "sideways"});
}

TEST(LoadRun, BadRooflineBoundNamesTheValue) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1\n");
  test::write_file(dir.file("ops.csv"),
                   "op,self_ms,bytes,bound\naten::mm,1,64,compute\naten::add,1,8,cache\n");
  expect_data_error([&] { load_run(dir.path()); }, {"ops.csv", "line 3", "'bound'", "cache"});
}

TEST(LoadRun, CountedOnlyOpHasNoTimes) {
  ScratchDir dir;
  test::write_file(dir.file("steps.csv"), "step,step_ms\n0,1\n");
  test::write_file(dir.file("ops.csv"),
                   "op,calls,self_ms,view_calls\naten::mm,2,1,3\naten::view,3,,\n");
  const rundir::Run run = load_run(dir.path());
  ASSERT_EQ(run.ops.size(), 2u);
  EXPECT_EQ(run.ops[0].view_calls, 3);
  EXPECT_FALSE(run.ops[1].self_ms.has_value());
  EXPECT_EQ(run.ops[1].calls, 3);
}

TEST(DisambiguateLabels, SharedDirectoryNamesGetTheirParent) {
  rundir::Run a, b, c;
  a.dir = "/tmp/sweep1/b8";
  b.dir = "/tmp/sweep2/b8/";
  c.dir = "/tmp/runs/quick";
  a.label = b.label = "b8";
  c.label = "quick";
  disambiguate_labels({&a, &b, &c});
  EXPECT_EQ(a.label, "sweep1/b8");
  EXPECT_EQ(b.label, "sweep2/b8");
  EXPECT_EQ(c.label, "quick");
}

// A copy of the fixture run_a with summary.json's profile_level (and status) replaced, and the
// named files removed.
std::string run_at_level(ScratchDir& dir,
                         const std::string& level_json,
                         const std::vector<std::string>& remove,
                         const std::string& status_json = "\"completed\"") {
  namespace fs = std::filesystem;
  const std::string run = dir.file("run");
  fs::copy(report_fixture("run_a"), run, fs::copy_options::recursive);
  for (const auto& f : remove) fs::remove(run + "/" + f);
  test::write_file(run + "/summary.json", "{\"schema_version\": 1, \"status\": " + status_json +
                                              ", \"profile_level\": " + level_json + "}\n");
  return run;
}

TEST(ReadSummary, ParsesTheStatusAndProfileLevelOnce) {
  ScratchDir dir("summary_names");
  const std::string run = run_at_level(dir, "\"modules\"", {}, "\"interrupted\"");
  std::vector<InputWarning> warnings;
  const std::optional<Summary> s = read_summary(run + "/summary.json", warnings);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->status, config::RunStatus::kInterrupted);
  EXPECT_EQ(s->profile_level, config::ProfileLevel::kModules);
  // Absent or null: unknown, not an error (summary.json from before profile_level).
  test::write_file(run + "/summary.json", R"({"schema_version": 1, "status": null})");
  const std::optional<Summary> none = read_summary(run + "/summary.json", warnings);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->status.has_value());
  EXPECT_FALSE(none->profile_level.has_value());
  EXPECT_EQ(load_run(run).status_text(), "unknown");
}

TEST(ReadSummary, AnUnknownStatusIsADataErrorNamingTheFileAndTheValue) {
  ScratchDir dir("summary_bad_status");
  const std::string run = run_at_level(dir, "\"ops\"", {}, "\"finished\"");
  const std::string file = run + "/summary.json";
  std::vector<InputWarning> warnings;
  expect_data_error([&] { read_summary(file, warnings); },
                    {file + ": status 'finished' is not one of "
                            "completed|diverged|failed|interrupted"});
  expect_data_error([&] { load_run(run); }, {file, "status 'finished'"});
  test::write_file(file, R"({"schema_version": 1, "status": 3})");  // not a name at all
  expect_data_error([&] { read_summary(file, warnings); }, {file + ": status '3' is not one of"});
}

TEST(ReadSummary, AnUnknownProfileLevelIsADataErrorNamingTheFileAndTheValue) {
  ScratchDir dir("summary_bad_level");
  const std::string run = run_at_level(dir, "\"kernels\"", {});
  std::vector<InputWarning> warnings;
  expect_data_error([&] { read_summary(run + "/summary.json", warnings); },
                    {run + "/summary.json: profile_level 'kernels' is not one of "
                           "off|phases|modules|ops"});
}

TEST(LoadRun, TakesTheProfileLevelFromTheSummary) {
  ScratchDir dir("level_from_summary");
  const std::string run = run_at_level(dir, "\"phases\"", {"modules.csv", "ops.csv"});
  const rundir::Run r = load_run(run);
  EXPECT_EQ(r.profile_level, config::ProfileLevel::kPhases);
  EXPECT_EQ(r.status, config::RunStatus::kCompleted);
  EXPECT_EQ(why_no_rows(r, config::ProfileLevel::kModules),
            "recorded at profile.level=phases; modules.csv needs profile.level=modules");
  EXPECT_EQ(why_no_rows(r, config::ProfileLevel::kOps),
            "recorded at profile.level=phases; ops.csv needs profile.level=ops");
}

TEST(LoadRun, AFileMissingAtItsLevelSaysSoAndAnUnknownLevelSaysNothing) {
  ScratchDir dir("level_missing_file");
  const std::string run = run_at_level(dir, "\"ops\"", {"ops.csv"});
  const rundir::Run r = load_run(run);
  EXPECT_EQ(why_no_rows(r, config::ProfileLevel::kOps),
            "profile.level=ops, but ops.csv holds no rows");
  EXPECT_EQ(why_no_rows(r, config::ProfileLevel::kModules), "") << "modules.csv has rows";
  const rundir::Run fixture = load_run(report_fixture("run_incomplete"));  // no summary.json
  EXPECT_FALSE(fixture.profile_level.has_value());
  EXPECT_EQ(why_no_rows(fixture, config::ProfileLevel::kModules), "");
}

TEST(RunStatusText, NamesTheStatusOrWhyThereIsNone) {
  rundir::Run run;
  EXPECT_EQ(run.status_text(), "incomplete");  // no summary.json
  run.has_summary = true;
  EXPECT_EQ(run.status_text(), "unknown");  // a summary without a status
  run.status = config::RunStatus::kDiverged;
  EXPECT_EQ(run.status_text(), "diverged");
  EXPECT_EQ(config::find_enum<NoStatus>("incomplete"), NoStatus::kIncomplete);
}

}  // namespace
}  // namespace llmprof::rundir
