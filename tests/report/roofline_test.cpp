// The roofline in the report: ops and modules ranked by time above the roofline, the finding for
// the op that loses most, and the precision finding, on a copy of fixture run_a given roofline
// columns, a memory bandwidth and a CPU with native bf16.
#include <gtest/gtest.h>

#include <filesystem>

#include "llmprof/report/report.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

namespace fs = std::filesystem;

// run_a (median step 10 ms, fp32, batch 4) with ops.csv and modules.csv in the roofline format.
// Roofs: 100 GFLOP/s, 20 GB/s (ridge 5 FLOP/B).
std::string roofline_run(const test::ScratchDir& dir, bool bf16_cpu) {
  const std::string run = dir.file("roof");
  fs::copy(test::report_fixture("run_a"), run, fs::copy_options::recursive);
  test::write_file(run + "/env.json", std::string(R"({"schema_version": 1, "host": {"cores": 4,
    "memory_bytes": 17179869184, "avx512_bf16": )") + (bf16_cpu ? "true" : "false") + R"(},
    "peak_flops": {"flops_per_s": 1e11, "source": "measured", "bf16_flops_per_s": 3e11},
    "peak_bandwidth": {"bytes_per_s": 2e10, "source": "measured"}})");
  test::write_file(run + "/ops.csv",
      "op,calls,self_ms,total_ms,self_share,flops,bytes,arithmetic_intensity,achieved_gflops_per_s,"
      "achieved_gb_per_s,bound,roofline_ms,lost_ms,alloc_bytes,input_shapes,view_calls,steps\n"
      "aten::mm,10,4,4,0.5,3e8,1e7,30,75,2.5,compute,3,1,0,\"[64, 64]\",2,3\n"
      "aten::add,200,2.5,2.5,0.3,2e5,2.4e6,0.083,0.08,0.96,overhead,0.12,2.38,0,[64],0,3\n"
      "aten::copy_,20,1,1,0.1,,1.6e7,,,16,memory,0.8,0.2,0,,0,3\n"
      "aten::cat,5,0.5,0.5,0.06,,,,,,,,,0,,0,3\n"
      "aten::view,40,,,,,,,,,,,,0,,0,3\n");
  test::write_file(run + "/modules.csv",
      "scope,block,pass,calls,total_ms,mean_ms,self_ms,share_of_pass,flops,mfu,bytes,"
      "arithmetic_intensity,achieved_gflops_per_s,achieved_gb_per_s,bound,roofline_ms,lost_ms,steps\n"
      "mlp.up,0,forward,1,2,2,2,0.2,,,1e7,30,75,5,compute,1.5,0.5,3\n"
      "mlp.up,1,forward,1,2,2,2,0.2,,,1e7,30,75,5,compute,1.5,0.5,3\n"
      "block,0,forward,1,4,4,1.2,0.4,,,1.2e6,0.1,0.1,1,overhead,0.06,1.14,3\n");
  return run;
}

const Table& find_table(const Document& doc, const std::string& id) {
  for (const auto& t : doc.tables) {
    if (t.id == id) return t;
  }
  throw std::runtime_error("no table " + id);
}

const Finding* find_finding(const Document& doc, const std::string& rule) {
  for (const auto& f : doc.findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

TEST(RooflineReport, RanksOpsAndModulesByTimeAboveTheRoofline) {
  test::ScratchDir dir("roofline_report");
  ReportOptions o;
  o.inputs = {roofline_run(dir, false)};
  const Document doc = build_report(o);
  const Table& ops = find_table(doc, "roofline.ops.roof");
  ASSERT_EQ(ops.rows.size(), 3u) << "cat has no model, view no time: left out";
  EXPECT_EQ(ops.rows[0][1].text, "aten::add");
  EXPECT_EQ(ops.rows[0][7].text, "overhead");
  EXPECT_NEAR(*ops.rows[0][6].value, 2.38 / 3.58, 1e-9) << "share of all lost time";
  EXPECT_EQ(ops.rows[1][1].text, "aten::mm");
  EXPECT_EQ(ops.rows[2][1].text, "aten::copy_");
  EXPECT_NE(ops.source.find("/ops.csv"), std::string::npos) << ops.source;
  EXPECT_NE(ops.source.find("/env.json"), std::string::npos) << ops.source;
  EXPECT_NE(ops.notes.back().find("ridge at 5"), std::string::npos) << ops.notes.back();
  const Table& mods = find_table(doc, "roofline.modules.roof");
  ASSERT_EQ(mods.rows.size(), 2u);
  EXPECT_EQ(mods.rows[0][1].text, "block");  // 1.14 ms lost
  EXPECT_EQ(mods.rows[0][8].text, "overhead");
  EXPECT_EQ(mods.rows[1][1].text, "mlp.up");  // 2 x 0.5 ms, summed over blocks
  EXPECT_NEAR(*mods.rows[1][6].value, 1.0, 1e-12);
  EXPECT_EQ(mods.rows[1][8].text, "compute");  // 30 FLOP/B, above the ridge
  // The top-ops table shows the roofline columns beside the times; a counted-only op has none.
  const Table& top = find_table(doc, "ops.roof");
  EXPECT_EQ(top.columns[8].key, "bound");
  EXPECT_EQ(top.rows.back()[1].text, "aten::view");
  EXPECT_FALSE(top.rows.back()[3].value.has_value());

  const Finding* f = find_finding(doc, "roofline");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->measured, 2.38 / 10, 1e-9);  // of the 10 ms median step
  EXPECT_NE(f->title.find("aten::add"), std::string::npos);
  EXPECT_NE(f->suggestion.find("--set train.batch_size=8"), std::string::npos) << f->suggestion;
  EXPECT_EQ(find_finding(doc, "precision"), nullptr) << "no native bf16 on this CPU";
}

TEST(RooflineReport, Bf16FindingOnAnFp32RunOfABf16Cpu) {
  test::ScratchDir dir("roofline_bf16");
  ReportOptions o;
  o.inputs = {roofline_run(dir, true)};
  const Document doc = build_report(o);
  const Finding* f = find_finding(doc, "precision");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->measured, 3.0);
  EXPECT_NE(f->suggestion.find("`--set train.precision=bf16`"), std::string::npos) << f->suggestion;
}

// A CUDA run whose op losing most is LayerNorm's backward, memory-bound: the fused add + norm is
// suggested, unless the run has it already.
TEST(RooflineReport, MemoryBoundNormOnCudaSuggestsTheFusedNorm) {
  for (bool fused : {false, true}) {
    test::ScratchDir dir(fused ? "roofline_norm_fused" : "roofline_norm");
    const std::string run = roofline_run(dir, false);
    test::write_file(run + "/config.yaml", std::string("model:\n  n_layer: 2\n  fused_norm: ") +
                                               (fused ? "true" : "false") +
                                               "\ntrain:\n  batch_size: 4\ndevice: cuda\n");
    test::write_file(
        run + "/ops.csv",
        "op,calls,self_ms,total_ms,self_share,flops,bytes,arithmetic_intensity,"
        "achieved_gflops_per_s,achieved_gb_per_s,bound,roofline_ms,lost_ms,alloc_bytes,"
        "input_shapes,view_calls,steps\n"
        "aten::native_layer_norm_backward,10,4,4,0.5,1e5,8e7,0.00125,0.025,20,memory,0.4,3.6,0,"
        "\"[64, 64]\",0,3\n");
    ReportOptions o;
    o.inputs = {run};
    const Document doc = build_report(o);
    const Finding* f = find_finding(doc, "roofline");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->suggestion.find("`--set model.fused_norm=true`") != std::string::npos, !fused)
        << f->suggestion;
    EXPECT_NE(f->suggestion.find("fuse it with the elementwise ops"), std::string::npos);
  }
}

TEST(RooflineReport, NoBandwidthNoRooflineTables) {
  ReportOptions o;
  o.inputs = {test::report_fixture("run_a")};  // written before the roofline: no such columns
  const Document doc = build_report(o);
  for (const auto& t : doc.tables) EXPECT_EQ(t.id.rfind("roofline.", 0), std::string::npos) << t.id;
  EXPECT_EQ(find_finding(doc, "roofline"), nullptr);
}

}  // namespace
}  // namespace llmprof::report
