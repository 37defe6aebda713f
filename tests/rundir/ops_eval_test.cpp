// ops.csv keeps the eval passes' ops apart (during eval, per pass, evals = the passes), and the
// roofline's unmodelled time reads back in both ops.csv and modules.csv.
#include <gtest/gtest.h>

#include "llmprof/error.h"
#include "llmprof/profile/analysis.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/tables.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

using test::ScratchDir;

TEST(OpsCsv, EvalRowsReadBackApartFromTheStepsOps) {
  ScratchDir dir("rundir_ops_eval");
  { StepsWriter w(path(dir.path(), kSteps)); }
  profile::Analysis a;
  a.n_steps = 5;
  a.n_evals = 1;
  profile::OpRow gelu;
  gelu.op = "aten::gelu";
  gelu.calls = 4;
  gelu.self_ms = 0.2;
  gelu.total_ms = 0.2;
  gelu.roofline.roofline_ms = 0.05;
  gelu.roofline.unmodelled_ms = 0.01;
  gelu.roofline.lost_ms = 0.14;
  a.ops.push_back(gelu);
  profile::OpRow eval_gelu = gelu;
  eval_gelu.calls = 160;
  eval_gelu.self_ms = 6;
  eval_gelu.roofline = {};
  a.eval_ops.push_back(eval_gelu);
  profile::ModuleRow scores;
  scores.scope = "attn.scores";
  scores.pass = "forward";
  scores.self_ms = 2.82;
  scores.roofline.roofline_ms = 1.0;
  scores.roofline.unmodelled_ms = 0.94;
  scores.roofline.lost_ms = 0.88;
  a.modules.push_back(scores);
  write_ops(path(dir.path(), kOps), a);
  write_modules(path(dir.path(), kModules), a);

  const rundir::Run run = load_run(dir.path());
  ASSERT_EQ(run.ops.size(), 1u);
  EXPECT_FALSE(run.ops[0].eval);
  EXPECT_EQ(run.ops[0].calls, 4);
  EXPECT_FALSE(run.ops[0].evals.has_value());
  EXPECT_EQ(run.ops[0].roofline.unmodelled_ms, 0.01);
  EXPECT_EQ(run.ops[0].roofline.lost_ms, 0.14);
  ASSERT_EQ(run.eval_ops.size(), 1u);
  EXPECT_TRUE(run.eval_ops[0].eval);
  EXPECT_EQ(run.eval_ops[0].calls, 160);
  EXPECT_EQ(run.eval_ops[0].evals, 1);
  EXPECT_FALSE(run.eval_ops[0].roofline.lost_ms.has_value());
  ASSERT_EQ(run.modules.size(), 1u);
  EXPECT_EQ(run.modules[0].roofline.unmodelled_ms, 0.94);
  EXPECT_EQ(run.modules[0].roofline.lost_ms, 0.88);
}

TEST(OpsCsv, AnUnknownDuringNamesFileLineAndColumn) {
  ScratchDir dir("rundir_ops_during");
  { StepsWriter w(path(dir.path(), kSteps)); }
  test::write_file(dir.file("ops.csv"), "op,calls,self_ms,during\naten::mm,1,2,train\n");
  try {
    (void)load_run(dir.path());
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(dir.file("ops.csv") + " line 2"), std::string::npos) << what;
    EXPECT_NE(what.find("'during'"), std::string::npos) << what;
    EXPECT_NE(what.find("step|eval"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace llmprof::rundir
