// The roofline tables of the report: a module's unmodelled time is shown and never counted as
// lost, ops are judged against their self time, and the ops of eval passes run inside the
// recorded window stay out of the ops tables and the roofline finding.
#include <gtest/gtest.h>

#include <filesystem>

#include "llmprof/report/report.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

namespace fs = std::filesystem;

// run_a (median step 10 ms) with roofs 100 GFLOP/s and 20 GB/s, an eval pass's aten::gelu in
// ops.csv (3 ms lost per pass) and attn.scores spending 0.94 of its 2.82 ms in unmodelled ops.
std::string run_with_eval(const test::ScratchDir& dir) {
  const std::string run = dir.file("run");
  fs::copy(test::report_fixture("run_a"), run, fs::copy_options::recursive);
  test::write_file(run + "/env.json", R"({"schema_version": 1, "host": {"cores": 4},
    "peak_flops": {"flops_per_s": 1e11, "source": "measured"},
    "peak_bandwidth": {"bytes_per_s": 2e10, "source": "measured"}})");
  test::write_file(run + "/ops.csv",
      "op,calls,self_ms,total_ms,self_share,flops,bytes,arithmetic_intensity,"
      "achieved_gflops_per_s,achieved_gb_per_s,bound,roofline_ms,unmodelled_ms,lost_ms,"
      "alloc_bytes,input_shapes,view_calls,steps,during,evals\n"
      "aten::mul_,2,0.5,1.8,0.5,,1e6,,,2,memory,0.05,0,0.45,0,,0,5,step,\n"
      "aten::clone,1,0.1,1.2,0.1,,0,,,,overhead,0,0,0.1,0,,0,5,step,\n"
      "aten::gelu,160,4,4,1,,1e7,,,2.5,overhead,0.5,0,3.5,0,,0,5,eval,1\n");
  test::write_file(run + "/modules.csv",
      "scope,block,pass,calls,total_ms,mean_ms,self_ms,share_of_pass,flops,mfu,bytes,"
      "arithmetic_intensity,achieved_gflops_per_s,achieved_gb_per_s,bound,roofline_ms,"
      "unmodelled_ms,lost_ms,gpu_ms,steps\n"
      "attn.scores,0,forward,1,2.82,2.82,2.82,0.2,,,2e7,,,10.6,memory,1.0,0.94,0.88,,5\n");
  return run;
}

const Table& find_table(const Document& doc, const std::string& id) {
  for (const auto& t : doc.tables) {
    if (t.id == id) return t;
  }
  throw std::runtime_error("no table " + id);
}

size_t column(const Table& t, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].key == key) return i;
  }
  throw std::runtime_error("no column " + key + " in " + t.id);
}

TEST(RooflineUnmodelled, ModulesShowUnmodelledTimeApartFromLostTime) {
  test::ScratchDir dir("roofline_unmodelled");
  ReportOptions o;
  o.inputs = {run_with_eval(dir)};
  const Document doc = build_report(o);
  const Table& mods = find_table(doc, "roofline.modules.run");
  ASSERT_EQ(mods.rows.size(), 1u);
  EXPECT_NEAR(*mods.rows[0][column(mods, "unmodelled_ms")].value, 0.94, 1e-12);
  EXPECT_NEAR(*mods.rows[0][column(mods, "lost_ms")].value, 0.88, 1e-12)
      << "2.82 self - 0.94 unmodelled - 1.00 at the roof";
  // 2e7 bytes in the 1.88 ms modelled: 10.6 GB/s, under the 20 GB/s roof: memory, not overhead.
  EXPECT_EQ(mods.rows[0][column(mods, "bound")].text, "memory");
  EXPECT_NE(mods.notes.back().find("never counted as lost"), std::string::npos) << mods.notes.back();
}

TEST(RooflineUnmodelled, OpsAreJudgedOnSelfTimeAndEvalOpsStayOut) {
  test::ScratchDir dir("roofline_eval_ops");
  ReportOptions o;
  o.inputs = {run_with_eval(dir)};
  const Document doc = build_report(o);
  const Table& roof = find_table(doc, "roofline.ops.run");
  ASSERT_EQ(roof.rows.size(), 2u) << "the eval pass's gelu is not a step's op";
  EXPECT_EQ(roof.rows[0][1].text, "aten::mul_");
  EXPECT_NEAR(*roof.rows[0][column(roof, "self_ms")].value, 0.5, 1e-12);
  const Table& top = find_table(doc, "ops.run");
  EXPECT_EQ(top.rows.size(), 2u);
  bool noted = false;
  for (const auto& n : top.notes) noted |= n.find("eval passes") != std::string::npos;
  EXPECT_TRUE(noted);
  for (const auto& f : doc.findings) {
    EXPECT_EQ(f.title.find("aten::gelu"), std::string::npos) << f.title;
  }
}

}  // namespace
}  // namespace llmprof::report
