// sweep.csv's one column table: a row written by sweep_csv_text reads back through read_sweep_csv
// (and load_sweep) into the same values, unknowns staying unknown, and the header the writer
// writes is the column table the reader reads.
#include "llmprof/rundir/sweep_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

using test::ScratchDir;

// Every column known, each with a value of its own; text with a comma and a quote.
SweepRow full_row() {
  SweepRow r;
  r.key_values = {"16", "3e-4, \"warm\""};
  r.repeat = 2;
  r.point_id = "p002-train.batch_size=16-r2";
  r.status = config::PointStatus::kDiverged;
  r.exit_code = 137;
  r.median_step_ms = 12.5;
  r.tokens_per_s = 10240.25;
  r.mfu = 0.125;
  r.final_train_loss = 2.5;
  r.final_val_loss = 2.75;
  r.final_val_perplexity = 15.642631884188171;
  r.peak_rss_bytes = 123456789012;
  r.energy_j = 42.5;
  r.energy_estimated = true;
  r.run_dir = "runs/p002";
  r.host = "node,7";
  r.slurm_job_id = "4242";
  r.slurm_task_id = "3";
  r.start_time = "2026-11-27T12:05:01+0000";
  r.end_time = "2026-11-27T12:05:09+0000";
  r.ranks = 4;
  r.exposed_comm_ms = 1.25;
  r.overlap = 0.75;
  r.busbw_gb_per_s = 9.5;
  return r;
}

void expect_same(const SweepRow& a, const SweepRow& b) {
  EXPECT_EQ(a.key_values, b.key_values);
  EXPECT_EQ(a.repeat, b.repeat);
  EXPECT_EQ(a.point_id, b.point_id);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.exit_code, b.exit_code);
  EXPECT_EQ(a.median_step_ms, b.median_step_ms);
  EXPECT_EQ(a.tokens_per_s, b.tokens_per_s);
  EXPECT_EQ(a.mfu, b.mfu);
  EXPECT_EQ(a.final_train_loss, b.final_train_loss);
  EXPECT_EQ(a.final_val_loss, b.final_val_loss);
  EXPECT_EQ(a.final_val_perplexity, b.final_val_perplexity);
  EXPECT_EQ(a.peak_rss_bytes, b.peak_rss_bytes);
  EXPECT_EQ(a.energy_j, b.energy_j);
  EXPECT_EQ(a.energy_estimated, b.energy_estimated);
  EXPECT_EQ(a.run_dir, b.run_dir);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.slurm_job_id, b.slurm_job_id);
  EXPECT_EQ(a.slurm_task_id, b.slurm_task_id);
  EXPECT_EQ(a.start_time, b.start_time);
  EXPECT_EQ(a.end_time, b.end_time);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.exposed_comm_ms, b.exposed_comm_ms);
  EXPECT_EQ(a.overlap, b.overlap);
  EXPECT_EQ(a.busbw_gb_per_s, b.busbw_gb_per_s);
}

TEST(SweepTable, EveryColumnRoundTripsAndUnknownsStayUnknown) {
  ScratchDir dir("sweep_table");
  SweepTable written;
  written.keys = {"train.batch_size", "optim.lr"};
  written.rows.push_back(full_row());
  SweepRow bare;  // only the keys and the repeat: every other cell empty
  bare.key_values = {"8", "1e-3"};
  bare.repeat = 1;
  written.rows.push_back(bare);
  SweepRow measured = full_row();  // energy from a sensor: "0", not empty
  measured.energy_estimated = false;
  written.rows.push_back(measured);
  const std::string text = sweep_csv_text(written);
  test::write_file(path(dir.path(), kSweepCsv), text);

  std::vector<InputWarning> warnings;
  const SweepTable read = read_sweep_csv(path(dir.path(), kSweepCsv), warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(read.keys, written.keys);
  ASSERT_EQ(read.rows.size(), written.rows.size());
  for (size_t i = 0; i < read.rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    expect_same(read.rows[i], written.rows[i]);
  }
  EXPECT_EQ(sweep_csv_text(read), text) << "a file read back rewrites byte-identical";
  const std::vector<std::vector<std::string>> cells = output::parse_csv(text);
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[1][5], "137") << "exit_code is written whole";
  EXPECT_EQ(cells[1][12], "123456789012") << "peak_rss_bytes is written whole";
  EXPECT_EQ(cells[2][6], "") << "an unknown median is empty, never 0";

  // load_sweep takes the same rows, the metrics by their report names.
  const Sweep sweep = load_sweep(dir.path());
  ASSERT_EQ(sweep.points.size(), 3u);
  EXPECT_EQ(sweep.keys, written.keys);
  EXPECT_TRUE(sweep.energy_estimated);
  const std::map<std::string, std::optional<double>> metrics = sweep_metrics(full_row());
  EXPECT_EQ(sweep.points[0].metrics, metrics);
  EXPECT_EQ(*metrics.at("step_ms"), 12.5);
  EXPECT_EQ(*metrics.at("peak_rss_bytes"), 123456789012.0);
  EXPECT_EQ(*metrics.at("ranks"), 4.0);
  EXPECT_EQ(sweep.points[0].exit_code, 137.0);
  EXPECT_EQ(sweep.points[0].status, config::RunStatus::kDiverged);
  EXPECT_FALSE(sweep.points[1].status.has_value());
  for (const auto& [name, value] : sweep.points[1].metrics) EXPECT_FALSE(value) << name;
}

TEST(SweepTable, WrittenHeaderIsTheKeysThenTheReadersColumns) {
  SweepTable t;
  t.keys = {"train.batch_size"};
  const std::vector<std::vector<std::string>> cells = output::parse_csv(sweep_csv_text(t));
  ASSERT_EQ(cells.size(), 1u);
  std::vector<std::string> expected = t.keys;
  expected.insert(expected.end(), sweep_columns().begin(), sweep_columns().end());
  EXPECT_EQ(cells[0], expected);
  // Each metric is one of the table's columns: its own name, or the name the writer writes for
  // it (median_step_ms, final_*).
  ASSERT_EQ(sweep_metrics(SweepRow()).size(), sweep_metric_names().size());
  for (const std::string& m : sweep_metric_names()) {
    const bool own =
        std::find(sweep_columns().begin(), sweep_columns().end(), m) != sweep_columns().end();
    const bool renamed =
        std::find(sweep_columns().begin(), sweep_columns().end(),
                  (m == "step_ms" ? "median_step_ms" : "final_" + m)) != sweep_columns().end();
    EXPECT_TRUE(own || renamed) << m;
  }
}

// The contract's short names (step_ms, train_loss, val_loss, val_perplexity) win over the names
// llmprof sweep writes when a file has both; a file from before a column leaves it unknown.
TEST(SweepTable, ShortNamesWinAndOlderFilesLeaveLaterColumnsUnknown) {
  ScratchDir dir("sweep_table_names");
  test::write_file(path(dir.path(), kSweepCsv),
                   "k,repeat,point_id,status,median_step_ms,step_ms,final_val_loss,energy_j\n"
                   "1,1,p1,ok,9,12.5,2.5,\n");
  std::vector<InputWarning> warnings;
  const SweepTable t = read_sweep_csv(path(dir.path(), kSweepCsv), warnings);
  ASSERT_EQ(t.rows.size(), 1u);
  const SweepRow& r = t.rows[0];
  EXPECT_EQ(r.status, config::PointStatus::kCompleted);
  EXPECT_EQ(r.median_step_ms, 12.5);
  EXPECT_EQ(r.final_val_loss, 2.5);
  EXPECT_FALSE(r.energy_estimated.has_value());
  EXPECT_FALSE(r.ranks.has_value());
  EXPECT_EQ(r.host, "");
}

// A point --plan predicted not to fit is written "skipped"; the reader takes a run's statuses
// only, so reading it back is the DataError it was before the table.
// A --plan sweep's point predicted not to fit is written "skipped" and read back as a point the
// sweep did not run: no RunStatus, its figures unknown (the report can read such a sweep).
TEST(SweepTable, ASkippedPointIsWrittenByNameAndReadsAsNotRun) {
  ScratchDir dir("sweep_table_skipped");
  SweepTable t;
  t.keys = {"k"};
  SweepRow r;
  r.key_values = {"1"};
  r.repeat = 1;
  r.point_id = "p1";
  r.status = config::PointStatus::kSkipped;
  t.rows.push_back(r);
  const std::string text = sweep_csv_text(t);
  EXPECT_EQ(output::parse_csv(text)[1][3], "skipped");
  test::write_file(path(dir.path(), kSweepCsv), text);
  std::vector<InputWarning> warnings;
  const SweepTable back = read_sweep_csv(path(dir.path(), kSweepCsv), warnings);
  ASSERT_EQ(back.rows.size(), 1u);
  EXPECT_EQ(back.rows[0].status, config::PointStatus::kSkipped);
  const Sweep sweep = load_sweep(dir.path());
  ASSERT_EQ(sweep.points.size(), 1u);
  EXPECT_TRUE(sweep.points[0].skipped);
  EXPECT_FALSE(sweep.points[0].status.has_value());
  // Any other name outside the run statuses stays an error naming the value.
  test::write_file(path(dir.path(), kSweepCsv), "k,repeat,point_id,status\n1,1,p1,pending\n");
  EXPECT_THROW(read_sweep_csv(path(dir.path(), kSweepCsv), warnings), DataError);
}

}  // namespace
}  // namespace llmprof::rundir
