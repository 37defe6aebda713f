// An eval pass inside the recorded window (profile.level=ops) on the tiny model: its ops get
// rows of their own in ops.csv and leave the per-step figures as a run without eval has them;
// each op's lost time stays within its self time.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "llmprof/config/schema.h"
#include "llmprof/output/csv.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace llmprof::train {
namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> read_rows(const std::string& path) {
  const auto rows = output::parse_csv(test::read_file(path));
  std::vector<Row> t;
  for (size_t i = 1; i < rows.size(); ++i) {
    Row m;
    for (size_t j = 0; j < rows[0].size(); ++j) m[rows[0][j]] = rows[i][j];
    t.push_back(m);
  }
  return t;
}

// Steps 4-6 recorded (wait 2, warm-up 1, active 3); eval every `eval_interval` steps.
std::string run_ops(const std::string& out, const std::string& name, int64_t eval_interval) {
  config::Config c = config::load_config(std::string(LLMPROF_SOURCE_DIR) + "/configs/tiny_test.yaml");
  c.output.dir = out;
  c.output.name = name;
  c.profile.level = config::ProfileLevel::kOps;
  c.profile.schedule_wait = 2;
  c.profile.schedule_warmup = 1;
  c.profile.schedule_active = 3;
  // A known memory roof: at profile.level=ops an unset one is measured (STREAM over 3 GiB of
  // arrays, seconds of memory traffic) and this test does not look at it.
  c.profile.peak_bytes_per_s = 1e10;
  c.schedule.max_steps = 7;
  c.train.eval_interval = eval_interval;
  TrainOptions o;
  o.quiet = true;
  const TrainResult r = run_training(c, o);
  EXPECT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  return r.run_dir;
}

TEST(DeepProfileEval, AnEvalPassInsideTheWindowGetsRowsOfItsOwn) {
  test::ScratchDir dir;
  const std::string with_eval = run_ops(dir.path(), "eval", 5);  // after step 5: recorded
  const std::string without = run_ops(dir.path(), "none", 0);
  std::map<std::string, std::string> calls_without;
  for (Row& r : read_rows(without + "/ops.csv")) {
    EXPECT_EQ(r["during"], "step") << r["op"];
    calls_without[r["op"]] = r["calls"];
  }
  std::map<std::string, std::string> calls_with, eval_calls;
  for (Row& r : read_rows(with_eval + "/ops.csv")) {
    if (r["during"] == "eval") {
      EXPECT_EQ(r["evals"], "1") << r["op"];
      eval_calls[r["op"]] = r["calls"];
      continue;
    }
    calls_with[r["op"]] = r["calls"];
    if (r["lost_ms"].empty()) continue;
    EXPECT_GE(std::stod(r["lost_ms"]), 0) << r["op"];
    EXPECT_LE(std::stod(r["lost_ms"]), std::stod(r["self_ms"]) + 1e-9) << r["op"];
  }
  // 2 layers: 2 gelu calls per step with or without eval; the eval pass (2 splits x 2 batches
  // x 2 layers) runs 8.
  EXPECT_EQ(calls_with["aten::gelu"], "2");
  EXPECT_EQ(calls_with["aten::gelu"], calls_without["aten::gelu"]);
  EXPECT_EQ(eval_calls["aten::gelu"], "8");
}

}  // namespace
}  // namespace llmprof::train
