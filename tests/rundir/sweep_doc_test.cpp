// The sweep directory's typed documents (plan.json, runs/<id>.point.json, sweep.json): write then
// read, the release's files rewrite byte for byte with no unknown key, unknown keys survive a
// rewrite, a later field that is absent reads with a note, errors name the file and the field,
// docs/sweep_plan.md, docs/point_record.md and docs/sweep.md match the structs.
#include "llmprof/rundir/sweep_doc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

namespace fs = std::filesystem;
using doc_test::expect_data_error;

std::string release_sweep() { return doc_test::release_dir() + "/sweep"; }

// A 2-point Slurm sweep over nproc and optim.lr (keys out of sorted order), one point failed.
SweepContext slurm_context() {
  SweepContext c;
  c.status = config::SweepState::kSubmitted;
  c.launcher = config::Launcher::kSlurm;
  c.base_config = "/s/tiny.yaml";
  c.sweep_dir = "/s/sw";
  c.workdir = "/s";
  c.grid = {{"optim.lr", {"0.001"}, "--grid optim.lr=1e-3"}, {"nproc", {"1", "2"}, "file"}};
  c.overrides = {"threads=2"};
  c.jobs = 0;  // no limit on the array
  c.jobs_requested = 0;
  c.threads_per_point = 4;
  c.peak_flops_per_s = 2.5e10;
  c.peak_source = "measured once";
  c.peak_measured_at = "2026-11-27T10:00:00+0000";
  c.cores = 8;
  c.command_line = {"llmprof", "sweep"};
  c.invocation = "2026-11-27T10:00:00+0000 pid 7";
  return c;
}

SweepDoc two_points() {
  SweepDoc d;
  d.context = slurm_context();
  for (int64_t i = 1; i <= 2; ++i) {
    SweepDocPoint p;
    p.point = {i, 1, {{"optim.lr", "0.001"}, {"nproc", std::to_string(i)}}, "p00" + std::to_string(i)};
    p.outcome.log_path = "/s/sw/runs/p00" + std::to_string(i) + ".log";
    d.points.push_back(p);
  }
  PointOutcome& failed = d.points[1].outcome;
  failed.status = config::PointStatus::kFailed;
  failed.exit_code = 137;
  failed.signal = 9;
  failed.message = "killed by signal 9";
  failed.slurm_job_id = "77";
  d.points[0].outcome.status = config::PointStatus::kCompleted;
  d.points[0].reused = true;
  return d;
}

TEST(SweepDocFile, WriteThenReadGivesTheSameFields) {
  const std::string text = sweep_doc_text(two_points());
  // Written in the writer's order: the context, counts, points; values in the grid's order.
  EXPECT_LT(text.find("\"schema_version\""), text.find("\"status\""));
  EXPECT_LT(text.find("\"resume_policy\""), text.find("\"counts\""));
  EXPECT_NE(text.find("\"counts\": {\n    \"completed\": 1,\n    \"failed\": 1\n  }"),
            std::string::npos) << text;
  EXPECT_LT(text.find("\"optim.lr\": \"0.001\""), text.find("\"nproc\": \"1\""));
  EXPECT_NE(text.find("\"message\": null"), std::string::npos);  // "" is null in sweep.json
  const SweepDoc read = parse_sweep_doc(text, "s/sweep.json");
  EXPECT_EQ(read.schema_version, kSweepSchemaVersion);
  EXPECT_EQ(read.context.status, config::SweepState::kSubmitted);
  EXPECT_EQ(read.context.launcher, config::Launcher::kSlurm);
  EXPECT_EQ(read.context.peak_flops_per_s, 2.5e10);
  ASSERT_EQ(read.points.size(), 2u);
  EXPECT_EQ(read.points[1].point.values[0].first, "optim.lr");
  EXPECT_EQ(read.points[1].point.values[1].second, "2");
  EXPECT_EQ(read.points[1].outcome.status, config::PointStatus::kFailed);
  EXPECT_EQ(read.points[1].outcome.exit_code, std::optional<int>(137));
  EXPECT_EQ(read.points[1].outcome.slurm_job_id, "77");
  EXPECT_TRUE(read.points[0].reused);
  EXPECT_FALSE(read.points[0].outcome.exit_code.has_value());
  EXPECT_TRUE(read.unknown.empty());
  EXPECT_EQ(sweep_doc_text(read), text);
}

TEST(SweepPlanFile, WriteThenReadGivesTheSameFields) {
  SweepPlan d;
  d.context = slurm_context();
  d.context.threads_per_point = 0;  // swept: null
  d.threads_from_env = false;
  d.points = {{1, 2, {{"optim.lr", "0.001"}, {"nproc", "2"}}, "p1"}};
  const std::string text = sweep_plan_text(d);
  EXPECT_NE(text.find("\"threads_per_point\": null"), std::string::npos);
  const SweepPlan read = parse_sweep_plan(text, "s/plan.json");
  EXPECT_EQ(read.context.threads_per_point, 0);
  EXPECT_FALSE(read.threads_from_env);
  ASSERT_EQ(read.points.size(), 1u);
  EXPECT_EQ(read.points[0].repeat, 2);
  EXPECT_EQ(read.points[0].values, d.points[0].values);
  EXPECT_EQ(read.context.grid[1].origin, "file");
  EXPECT_EQ(sweep_plan_text(read), text);
}

TEST(PointRecordFile, WriteThenReadGivesTheSameFields) {
  PointRecord d;
  d.id = "p1";
  d.outcome.status = config::PointStatus::kRunning;
  d.outcome.moved_aside = {"/s/runs/p1.attempt1", "/s/runs/p1.attempt1.log"};
  d.outcome.invocation = "now pid 3";
  const std::string text = point_record_text(d);
  EXPECT_NE(text.find("\"message\": \"\""), std::string::npos);  // "" stays "" in a record
  const PointRecord read = parse_point_record(text, "r.point.json");
  EXPECT_EQ(read.outcome.status, config::PointStatus::kRunning);
  EXPECT_EQ(read.outcome.moved_aside, d.outcome.moved_aside);
  EXPECT_EQ(read.outcome.invocation, "now pid 3");
  EXPECT_FALSE(read.outcome.duration_s.has_value());
  EXPECT_EQ(point_record_text(read), text);
}

TEST(SweepDocFile, ReleaseFilesRewriteByteIdenticalWithNoUnknownKey) {
  const std::string plan_path = release_sweep() + "/plan.json";
  const std::string plan_text = test::read_file(plan_path);
  std::vector<std::string> notes;
  const SweepPlan plan = parse_sweep_plan(plan_text, plan_path, &notes);
  EXPECT_EQ(sweep_plan_text(plan), plan_text);
  EXPECT_TRUE(plan.unknown.empty()) << plan.unknown.begin()->first;
  EXPECT_EQ(plan.points.size(), 4u);

  const std::string sweep_path = release_sweep() + "/sweep.json";
  const std::string sweep_text = test::read_file(sweep_path);
  const SweepDoc sweep = parse_sweep_doc(sweep_text, sweep_path, &notes);
  EXPECT_EQ(sweep_doc_text(sweep), sweep_text);
  EXPECT_TRUE(sweep.unknown.empty()) << sweep.unknown.begin()->first;
  EXPECT_EQ(sweep.context.status, config::SweepState::kFinished);

  int records = 0;
  for (const auto& entry : fs::directory_iterator(release_sweep() + "/runs")) {
    const std::string path = entry.path().string();
    if (path.size() < 11 || path.substr(path.size() - 11) != ".point.json") continue;
    const std::string text = test::read_file(path);
    const PointRecord r = parse_point_record(text, path, &notes);
    EXPECT_EQ(point_record_text(r), text) << path;
    EXPECT_TRUE(r.unknown.empty()) << path;
    EXPECT_EQ(r.outcome.status, config::PointStatus::kCompleted) << path;
    ++records;
  }
  EXPECT_EQ(records, 4);
  EXPECT_TRUE(notes.empty()) << notes[0];
}

TEST(SweepDocFile, UnknownKeysAreKeptWhenTheFileIsRewritten) {
  std::string text = sweep_doc_text(two_points());
  text.replace(text.find("\n  \"repeat\""), 0, "\n  \"queue\": [1, 2],");
  text.replace(text.find("\"reused\""), 0, "\"gpu\": \"a100\",\n      ");
  const SweepDoc read = parse_sweep_doc(text, "u/sweep.json");
  ASSERT_EQ(read.unknown.size(), 2u);
  EXPECT_EQ(read.unknown.at("/queue"), "[1,2]");
  EXPECT_EQ(read.unknown.at("/points/0/gpu"), "\"a100\"");
  const std::string rewritten = sweep_doc_text(read);
  EXPECT_NE(rewritten.find("\"gpu\": \"a100\""), std::string::npos);
  EXPECT_EQ(sweep_doc_text(parse_sweep_doc(rewritten, "u")), rewritten);

  PointRecord r;
  r.id = "p1";
  std::string record = point_record_text(r);
  record.replace(record.find("\n  \"id\""), 0, "\n  \"node\": {\"rack\": 3},");
  const PointRecord read_record = parse_point_record(record, "u.point.json");
  EXPECT_EQ(read_record.unknown.at("/node"), "{\"rack\":3}");
  EXPECT_NE(point_record_text(read_record).find("\"rack\": 3"), std::string::npos);
}

// sweep.json written before the launcher, the shared peak and where points ran: each absent later
// field reads as empty with a note naming it; absent first-version fields are errors.
TEST(SweepDocFile, AFileWithoutTheLaterFieldsReadsWithANoteForEach) {
  nlohmann::json j = nlohmann::json::parse(sweep_doc_text(two_points()));
  for (const char* key : {"launcher", "workdir", "invocation", "peak_flops_per_s", "status_note"}) {
    j.erase(key);
  }
  j["points"][0].erase("host");
  std::vector<std::string> notes;
  const SweepDoc read = parse_sweep_doc(j.dump(), "old/sweep.json", &notes);
  EXPECT_EQ(read.context.launcher, config::Launcher::kLocal);
  EXPECT_EQ(read.context.peak_flops_per_s, 0);
  ASSERT_EQ(notes.size(), 6u);
  EXPECT_NE(notes[5].find("old/sweep.json: no points.0.host"), std::string::npos) << notes[5];
  // plan.json had the launcher from its first version.
  nlohmann::json plan = nlohmann::json::parse(sweep_plan_text(SweepPlan{}));
  plan.erase("launcher");
  expect_data_error([&] { parse_sweep_plan(plan.dump(), "p/plan.json"); },
                    "p/plan.json: launcher is missing");
}

TEST(SweepDocFile, BadFilesAreErrorsNamingTheFileAndTheField) {
  nlohmann::json j = nlohmann::json::parse(sweep_doc_text(two_points()));
  j["schema_version"] = 2;
  expect_data_error([&] { parse_sweep_doc(j.dump(), "a/sweep.json"); },
                    "a/sweep.json: schema_version 2 is newer than this llmprof reads (1)");
  j["schema_version"] = 1;
  j["points"][1]["exit_code"] = "137";
  expect_data_error([&] { parse_sweep_doc(j.dump(), "b/sweep.json"); },
                    "b/sweep.json: points.1.exit_code is \"137\", not an integer");
  j["points"][1]["exit_code"] = 1e12;
  expect_data_error([&] { parse_sweep_doc(j.dump(), "c/sweep.json"); },
                    "c/sweep.json: points.1.exit_code is 1000000000000.0, not an integer of int");
  j["points"][1]["exit_code"] = 1;
  j["points"][0]["values"]["nproc"] = 1;
  expect_data_error([&] { parse_sweep_doc(j.dump(), "d/sweep.json"); },
                    "d/sweep.json: points.0.values is");
  j["points"][0]["values"]["nproc"] = "1";
  j["launcher"] = "pbs";
  expect_data_error([&] { parse_sweep_doc(j.dump(), "e/sweep.json"); }, "pbs");
  expect_data_error([] { parse_sweep_doc("[1]", "f/sweep.json"); }, "f/sweep.json: not a JSON");
  expect_data_error([] { parse_sweep_doc("{\"schema_version\": 1", "g/sweep.json"); },
                    "g/sweep.json");

  PointRecord r;
  nlohmann::json record = nlohmann::json::parse(point_record_text(r));
  record["status"] = "lost";
  expect_data_error([&] { parse_point_record(record.dump(), "r/x.point.json"); }, "lost");
  record.erase("status");
  expect_data_error([&] { parse_point_record(record.dump(), "r/x.point.json"); },
                    "r/x.point.json: status is missing");
  nlohmann::json plan = nlohmann::json::parse(sweep_plan_text(SweepPlan{}));
  plan["points"] = {{{"id", "p1"}, {"index", 1}, {"repeat", 1}, {"values", {{"lr"}}}}};
  expect_data_error([&] { parse_sweep_plan(plan.dump(), "p/plan.json"); },
                    "p/plan.json: points.0.values is");
  plan["points"] = {{{"id", "p1"}, {"index", 1}, {"values", nlohmann::json::array()}}};
  expect_data_error([&] { parse_sweep_plan(plan.dump(), "p/plan.json"); },
                    "p/plan.json: points.0.repeat is missing");
}

// report and check read sweep.json's status alone: a file holding nothing else reads.
TEST(SweepDocFile, TheStatusAloneReadsFromAnyVersion) {
  test::ScratchDir dir("sweep-doc");
  const std::string path = dir.file("sweep.json");
  test::write_file(path, "{\"status\": \"submit_failed\", \"status_note\": \"no partition\"}");
  const SweepDocStatus s = read_sweep_doc_status(path);
  EXPECT_EQ(s.status, config::SweepState::kSubmitFailed);
  EXPECT_EQ(s.note, "no partition");
  test::write_file(path, "{\"keys\": []}");
  EXPECT_FALSE(read_sweep_doc_status(path).status.has_value());
  test::write_file(path, "{\"status\": 3}");
  expect_data_error([&] { read_sweep_doc_status(path); }, path + ": status is 3, not a string");
}

TEST(SweepDocFile, TheCommittedFieldListsMatchTheStructs) {
  doc_test::expect_committed_doc("sweep_plan.md", sweep_plan_fields_doc());
  doc_test::expect_committed_doc("point_record.md", point_record_fields_doc());
  doc_test::expect_committed_doc("sweep.md", sweep_doc_fields_doc());
  EXPECT_NE(sweep_doc_fields_doc().find("`points[].slurm_task_id`"), std::string::npos);
  EXPECT_NE(sweep_plan_fields_doc().find("`grid[].origin`"), std::string::npos);
  EXPECT_NE(point_record_fields_doc().find("`moved_aside`"), std::string::npos);
}

}  // namespace
}  // namespace llmprof::rundir
