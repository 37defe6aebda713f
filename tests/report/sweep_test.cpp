// A 2-D sweep fixture (train.batch_size x optim.lr, one configuration with a diverged repeat):
// aggregation, pivots, best points and the Pareto front.
#include <gtest/gtest.h>

#include <cmath>

#include "llmprof/error.h"
#include "llmprof/report/report.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

using test::report_fixture;

const Table& find_table(const Document& doc, const std::string& id) {
  for (const auto& t : doc.tables) {
    if (t.id == id) return t;
  }
  throw std::runtime_error("no table " + id);
}

TEST(LoadSweep, KeysAreTheColumnsBeforeRepeat) {
  Sweep s = rundir::load_sweep(report_fixture("sweep_2d"));
  EXPECT_EQ(s.keys, (std::vector<std::string>{"train.batch_size", "optim.lr"}));
  ASSERT_EQ(s.points.size(), 5u);
  EXPECT_EQ(s.points[3].status, config::RunStatus::kDiverged);
  EXPECT_FALSE(s.points[3].metrics.at("val_loss").has_value());
  EXPECT_NE(s.points[0].run_dir.find("runs/p0"), std::string::npos);
  EXPECT_TRUE(rundir::is_sweep_dir(report_fixture("sweep_2d")));
  EXPECT_FALSE(rundir::is_sweep_dir(report_fixture("run_a")));
}

TEST(LoadSweep, ReadsTheNamesLlmprofSweepWrites) {
  test::ScratchDir dir;
  test::write_file(dir.file("sweep.csv"),
                   "train.batch_size,repeat,point_id,status,exit_code,median_step_ms,tokens_per_s,"
                   "mfu,final_train_loss,final_val_loss,final_val_perplexity,peak_rss_bytes,"
                   "energy_j,run_dir\n"
                   "8,1,p001,completed,0,12.5,4096,0.2,2.5,2.6,13.46,1000,,runs/p001\n");
  Sweep s = rundir::load_sweep(dir.path());
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_EQ(*s.points[0].metrics.at("step_ms"), 12.5);
  EXPECT_EQ(*s.points[0].metrics.at("train_loss"), 2.5);
  EXPECT_EQ(*s.points[0].metrics.at("val_loss"), 2.6);
  EXPECT_EQ(*s.points[0].metrics.at("val_perplexity"), 13.46);
  EXPECT_FALSE(s.points[0].metrics.at("energy_j").has_value());
  EXPECT_TRUE(s.points[0].run_dir.empty());  // runs/p001 does not exist
}

// A sweep whose sbatch refused it ran nothing: the report says so with sbatch's message instead
// of calling it still running.
TEST(LoadSweep, RefusedBySbatchSaysNoPointWasQueued) {
  test::ScratchDir dir;
  test::write_file(dir.file("sweep.json"),
                   "{\"status\": \"submit_failed\", \"status_note\": \"sbatch: error: invalid "
                   "partition specified: nope\"}\n");
  test::write_file(dir.file("sweep.csv"), "train.batch_size,repeat,point_id,status,val_loss\n");
  Sweep s = rundir::load_sweep(dir.path());
  ASSERT_EQ(s.warnings.size(), 1u);
  const std::string text = s.warnings[0].text();
  EXPECT_NE(text.find("none of its points was queued: sbatch: error: invalid partition"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("still running"), std::string::npos) << text;
}

// A sweep read while it runs (or after a kill): the last row cut short and sweep.json's status
// "running" are warnings the report shows, not errors; the whole rows are read.
TEST(LoadSweep, ATornLastRowAndAnUnfinishedStatusAreWarningsNotErrors) {
  test::ScratchDir dir;
  test::write_file(dir.file("sweep.json"), "{\"status\": \"running\"}\n");
  test::write_file(dir.file("sweep.csv"),
                   "train.batch_size,repeat,point_id,status,val_loss\n"
                   "8,1,p001,completed,2.6\n16,1,p0");
  Sweep s = rundir::load_sweep(dir.path());
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_EQ(s.status, config::SweepState::kRunning);
  ASSERT_EQ(s.warnings.size(), 2u);
  EXPECT_NE(s.warnings[0].text().find("status 'running'"), std::string::npos)
      << s.warnings[0].text();
  EXPECT_NE(s.warnings[1].text().find("sweep.csv line 3"), std::string::npos)
      << s.warnings[1].text();
  ReportOptions opts;
  opts.inputs = {dir.path()};
  const Document doc = build_report(opts);
  EXPECT_EQ(doc.incomplete_runs, std::vector<std::string>{s.label});
  EXPECT_EQ(doc.warnings.size(), 2u);
  test::write_file(dir.file("sweep.json"), "{\"status\": \"finished\"}\n");
  test::write_file(dir.file("sweep.csv"),
                   "train.batch_size,repeat,point_id,status,val_loss\n8,1,p001,completed,2.6\n");
  EXPECT_TRUE(rundir::load_sweep(dir.path()).warnings.empty()) << "a whole, finished sweep";
}

// sweep.csv's status is parsed once, at the reader: names of the table, "ok" (the contract's
// older name for completed) and an empty cell; anything else names the file, line and value.
TEST(LoadSweep, PointStatusesAreParsedOnceAndAnUnknownOneIsADataError) {
  test::ScratchDir dir;
  test::write_file(dir.file("sweep.csv"),
                   "train.batch_size,repeat,point_id,status,val_loss\n"
                   "8,1,p001,ok,2.6\n16,1,p002,,2.5\n32,1,p003,failed,\n");
  const Sweep s = rundir::load_sweep(dir.path());
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[0].status, config::RunStatus::kCompleted);
  EXPECT_FALSE(s.points[1].status.has_value());
  EXPECT_EQ(s.points[2].status, config::RunStatus::kFailed);
  EXPECT_FALSE(s.status.has_value()) << "no sweep.json";

  test::write_file(dir.file("sweep.csv"),
                   "train.batch_size,repeat,point_id,status,val_loss\n"
                   "8,1,p001,completed,2.6\n16,1,p002,timeout,\n");
  try {
    rundir::load_sweep(dir.path());
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("sweep.csv") +
                                         " line 3: status 'timeout' is "
                                         "not one of completed|diverged|failed|interrupted"),
              std::string::npos)
        << e.what();
  }
  test::write_file(dir.file("sweep.csv"),
                   "train.batch_size,repeat,point_id,status,val_loss\n8,1,p001,completed,2.6\n");
  test::write_file(dir.file("sweep.json"), "{\"status\": \"done\"}\n");
  try {
    rundir::load_sweep(dir.path());
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("sweep.json") +
                                         ": status 'done' is not one of "
                                         "running|submitted|submit_failed|finished|interrupted"),
              std::string::npos)
        << e.what();
  }
}

TEST(LoadSweep, MalformedRowNamesFileAndLine) {
  test::ScratchDir dir;
  test::write_file(dir.file("sweep.csv"),
                   "train.batch_size,repeat,point_id,status,val_loss\n"
                   "8,1,p001,completed,2.6\n16,1,p002,completed,low\n");
  try {
    rundir::load_sweep(dir.path());
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep.csv line 3"), std::string::npos) << e.what();
  }
}

// Found with the sweep fuzz target: a repeat of 8.9e57 was cast to int64 (undefined behaviour,
// reported by UBSan); now an integer column past int64's range is a DataError naming the cell.
TEST(LoadSweep, RepeatPastInt64IsADataError) {
  test::ScratchDir dir;
  test::write_file(dir.file("sweep.csv"),
                   "train.batch_size,repeat,point_id,status,val_loss\n"
                   "8,1,p001,completed,2.6\n16,8888888888888888888888888,p002,completed,2.5\n");
  try {
    rundir::load_sweep(dir.path());
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep.csv line 3: column 'repeat': "
                                         "'8888888888888888888888888' is not an integer in int64 "
                                         "range"),
              std::string::npos)
        << e.what();
  }
}

TEST(AggregateSweep, MediansOverCompletedRepeatsOnly) {
  auto configs = aggregate_sweep(rundir::load_sweep(report_fixture("sweep_2d")));
  ASSERT_EQ(configs.size(), 4u);
  const SweepConfig& c = configs[3];  // batch 8, lr 0.003: p3 diverged, p4 completed
  EXPECT_EQ(c.label, "batch_size=8, lr=0.003");
  EXPECT_EQ(c.points.size(), 2u);
  EXPECT_EQ(c.completed, 1);
  EXPECT_EQ(c.status, "1 diverged, 1 completed");
  EXPECT_EQ(*c.metrics.at("energy_j"), 160);  // p3's 40 J left out
  EXPECT_EQ(*c.metrics.at("val_loss"), 1.95);
}

TEST(ParetoFront, KeepsUndominatedConfigsSortedByThroughput) {
  auto configs = aggregate_sweep(rundir::load_sweep(report_fixture("sweep_2d")));
  // (4, 1e-3) loses to (4, 3e-3): worse loss, same tokens/s and energy.
  EXPECT_EQ(pareto_front(configs, true), (std::vector<size_t>{1, 3, 2}));
  EXPECT_EQ(pareto_front(configs, false), (std::vector<size_t>{1, 3, 2}));
}

TEST(SweepReport, PivotsBestAndParetoTables) {
  ReportOptions opts;
  opts.inputs = {report_fixture("sweep_2d")};
  Document doc = build_report(opts);
  const Table& pivot = find_table(doc, "sweep.pivot.val_loss");
  ASSERT_EQ(pivot.rows.size(), 2u);
  ASSERT_EQ(pivot.columns.size(), 3u);
  EXPECT_EQ(pivot.columns[1].title, "0.001");
  EXPECT_EQ(pivot.rows[0][0].text, "4");
  EXPECT_EQ(*pivot.rows[0][1].value, 2.1);
  EXPECT_EQ(*pivot.rows[0][2].value, 1.9);
  EXPECT_EQ(*pivot.rows[1][1].value, 2.0);
  EXPECT_EQ(*pivot.rows[1][2].value, 1.95);
  const Table& tps = find_table(doc, "sweep.pivot.tokens_per_s");
  EXPECT_EQ(*tps.rows[1][1].value, 64000);

  const Table& best = find_table(doc, "sweep.best");
  EXPECT_EQ(best.rows[0][0].text, "step ms");
  EXPECT_EQ(best.rows[0][3].text, "batch_size=4, lr=0.001");  // first of the 10 ms tie
  bool saw_loss = false;
  for (const auto& r : best.rows) {
    if (r[0].text == "val loss") {
      saw_loss = true;
      EXPECT_EQ(r[3].text, "batch_size=4, lr=0.003");
      EXPECT_EQ(r[4].text, "p1");
    }
  }
  EXPECT_TRUE(saw_loss);

  const Table& front = find_table(doc, "sweep.pareto");
  ASSERT_EQ(front.rows.size(), 3u);
  EXPECT_EQ(front.rows[0][0].text, "batch_size=4, lr=0.003");
  EXPECT_EQ(front.rows[2][0].text, "batch_size=8, lr=0.001");
  EXPECT_NE(front.title.find("energy"), std::string::npos);
}

}  // namespace
}  // namespace llmprof::report
