// `llmprof report --format html` as a user runs it: one self-contained page with the charts of
// `llmprof plot` inlined, a note when gnuplot is missing, and the Markdown report's exit 2 for a
// malformed run directory. (Lives in test_plot: the page's charts come from the plot concern.)
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>

#include "llmprof/plot/html_charts.h"
#include "llmprof/plot/plot.h"
#include "report/fixture_paths.h"
#include "report/html_checks.h"
#include "support/test_support.h"

namespace llmprof {
namespace {

using test::count_of;
using test::report_fixture;
using test::run_llmprof;
using test::ScratchDir;

bool has_gnuplot() { return !plot::find_program("gnuplot").empty(); }

TEST(CliReportHtml, WritesOneSelfContainedPageWithTheChartsInlined) {
  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot is not installed: charts cannot be drawn";
  ScratchDir dir;
  // The charts' temporary directory goes under TMPDIR: a private one, to see it removed.
  std::filesystem::create_directories(dir.file("tmp"));
  const char* old_tmp = std::getenv("TMPDIR");
  std::string saved = old_tmp ? old_tmp : "";
  ::setenv("TMPDIR", dir.file("tmp").c_str(), 1);
  auto r = run_llmprof({"report", report_fixture("run_a"), report_fixture("sweep_2d"), "--format",
                        "html", "--out", dir.file("report.html")});
  if (old_tmp)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("tmp"))) << "the chart directory is left";
  std::string page = test::read_file(dir.file("report.html"));
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir.file("report.html.tmp")));
  // What `llmprof plot` draws for the same inputs, one <svg> per drawn chart.
  auto p = run_llmprof({"plot", report_fixture("run_a"), report_fixture("sweep_2d"), "--out",
                        dir.file("plots"), "--format", "svg"});
  ASSERT_EQ(p.exit_code, 0) << p.output;
  size_t drawn = count_of(p.output, "wrote   ");
  EXPECT_GE(drawn, 8u) << p.output;
  EXPECT_EQ(count_of(page, "<svg"), drawn);
  EXPECT_EQ(count_of(page, "<figure class=\"chart\""), drawn);
  test::expect_in_page(page, "id=\"chart-04_phases\"");
  test::expect_in_page(page, "id=\"chart-07_heatmap_val_loss\"");
  EXPECT_EQ(page.find("<?xml"), std::string::npos);
  EXPECT_EQ(count_of(page, "<script"), 1u);
  EXPECT_TRUE(test::external_references(page).empty());
  test::expect_in_page(page, "<details><summary><code>" + report_fixture("run_a") + "/config.yaml");
  test::expect_in_page(page, "<section id=\"t-sweep.pareto\"");
  test::expect_in_page(page, "<section id=\"findings\">");
}

TEST(CliReportHtml, WithoutGnuplotThePageStillRendersAndSaysWhy) {
  auto r = run_llmprof({"report", report_fixture("run_a"), "--format", "html", "--gnuplot",
                        "llmprof-no-such-gnuplot"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  test::expect_in_page(r.output,
                       "warning: charts left out of the page: 'llmprof-no-such-gnuplot' "
                       "was not found on PATH");
  test::expect_in_page(r.output,
                       "<p class=\"note\">Charts left out: &#39;llmprof-no-such-gnuplot&#39;");
  test::expect_in_page(r.output, "<section id=\"t-ops.run_a\"");
  EXPECT_EQ(r.output.find("<svg"), std::string::npos);
}

TEST(CliReportHtml, CompareHoldsTheCompareTablesAndBothRunsFiles) {
  auto r = run_llmprof({"report", "--compare", report_fixture("run_a"), report_fixture("run_b"),
                        "--format", "html", "--gnuplot", "llmprof-no-such-gnuplot"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  test::expect_in_page(r.output, "<section id=\"t-compare.phases\"");
  test::expect_in_page(r.output, "<section id=\"t-compare.ops\"");
  test::expect_in_page(r.output, report_fixture("run_b") + "/env.json</code>");
  test::expect_in_page(r.output, "Significance (compare)");
}

TEST(CliReportHtml, MalformedRunDirExitsTwoAsTheMarkdownReportDoes) {
  ScratchDir dir;
  std::filesystem::copy(report_fixture("run_a"), dir.file("run"),
                        std::filesystem::copy_options::recursive);
  test::write_file(dir.file("run/eval.csv"),
                   "step,split,loss,perplexity,eval_ms\n5,val,3.7,40,10\n10,val\n"
                   "10,train,3.6,37,10\n");
  auto md = run_llmprof({"report", dir.file("run"), "--out", dir.file("report.md")});
  auto html = run_llmprof(
      {"report", dir.file("run"), "--format", "html", "--out", dir.file("report.html")});
  EXPECT_EQ(md.exit_code, 2) << md.output;
  EXPECT_EQ(html.exit_code, 2) << html.output;
  test::expect_in_page(html.output, dir.file("run") + "/eval.csv line 3");
  EXPECT_EQ(html.output, md.output);
  EXPECT_FALSE(std::filesystem::exists(dir.file("report.html")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("report.md")));
  auto missing = run_llmprof({"report", "/nonexistent/llmprof-run", "--format", "html"});
  EXPECT_EQ(missing.exit_code, 2);
  test::expect_in_page(missing.output, "/nonexistent/llmprof-run");
}

TEST(DrawHtmlCharts, ReadsEveryDrawnChartAndListsTheSkipped) {
  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  report::HtmlCharts charts = plot::draw_html_charts({report_fixture("run_incomplete")});
  EXPECT_EQ(charts.left_out, "");
  bool phases = false, modules_skipped = false;
  for (const auto& c : charts.charts) {
    if (c.name == "04_phases") {
      phases = true;
      EXPECT_NE(c.svg.find("<svg"), std::string::npos);
      EXPECT_EQ(c.svg.find("<script"), std::string::npos) << "gnuplot's mouse script";
    }
    if (c.name == "01_block_timing") modules_skipped = !c.skipped.empty() && c.svg.empty();
  }
  EXPECT_TRUE(phases);
  EXPECT_TRUE(modules_skipped);
  report::HtmlCharts none =
      plot::draw_html_charts({report_fixture("run_a")}, "/nonexistent/gnuplot");
  EXPECT_TRUE(none.charts.empty());
  test::expect_in_page(none.left_out, "'/nonexistent/gnuplot' was not found");
}

}  // namespace
}  // namespace llmprof
