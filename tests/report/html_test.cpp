// The HTML page of the report: escaping, sortable cells, no external reference, every section,
// charts beside their tables, and the SVG inlining that keeps the page self-contained.
#include "llmprof/report/html.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "llmprof/report/report.h"
#include "report/fixture_paths.h"
#include "report/html_checks.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

using test::count_of;
using test::external_references;
using test::report_fixture;

Document report_of(const std::vector<std::string>& names) {
  ReportOptions opts;
  for (const auto& n : names) opts.inputs.push_back(report_fixture(n));
  return build_report(opts);
}

// A small chart as gnuplot's svg terminal writes one: prolog, shared point ids, a use, a clip.
const char* kGnuplotSvg =
    "<?xml version=\"1.0\" encoding=\"utf-8\"  standalone=\"no\"?>\n"
    "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
    "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
    "<svg \n viewBox=\"0 0 400 300\"\n xmlns=\"http://www.w3.org/2000/svg\"\n"
    " xmlns:xlink=\"http://www.w3.org/1999/xlink\"\n>\n<title>Gnuplot</title>\n"
    "<!-- a comment -->\n<defs>\n\t<path id='gpPt7' d='M0,-1.33 L-1.33,0.67 z'/>\n"
    "\t<use xlink:href='#gpPt7' id='gpPt8' fill='currentColor'/>\n</defs>\n"
    "<g clip-path=\"url(#gpclip1)\"><use xlink:href='#gpPt8' x='10' y='20'/>"
    "<text>a &lt; b</text></g>\n</svg>\n";

TEST(HtmlEscape, ReplacesTheFiveMarkupCharacters) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape("plain 1.5 ms"), "plain 1.5 ms");
}

TEST(RenderHtml, EscapesEveryStringOfTheDocument) {
  const std::string evil = "<script>alert(1)</script>&\"'";
  Document doc;
  doc.title = "t" + evil;
  doc.intro = {"intro" + evil};
  doc.warnings.push_back({"run" + evil, "file" + evil, 3, "msg" + evil});
  doc.incomplete_runs = {"inc" + evil};
  Table t;
  t.id = "id" + evil;
  t.title = "title" + evil;
  t.source = "src" + evil;
  t.columns = {{"key" + evil, "col" + evil}};
  t.rows = {{text_cell("cell" + evil)}};
  t.notes = {"note" + evil};
  doc.tables.push_back(t);
  doc.findings.push_back({"rule" + evil, "run" + evil, "title" + evil, 1, 2, "unit" + evil,
                          "evidence" + evil, "suggestion" + evil});
  doc.findings_ran = true;
  doc.footer = {"footer" + evil};
  HtmlExtras extras;
  extras.files.push_back({"path" + evil, "text" + evil, "note" + evil});
  extras.charts.charts.push_back({"name" + evil, "", "skipped" + evil, ""});
  extras.charts.left_out = "left" + evil;
  std::string page = render_html(doc, extras);
  EXPECT_EQ(count_of(page, "<script"), 1u) << "only the page's own sorting script";
  EXPECT_EQ(page.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(page.find("&\"'"), std::string::npos);
  // Each string shows up escaped: title (twice: <title> and <h1>), intro, warning, incomplete,
  // table id, title, source, column key (twice) and title, cell, note, finding (rule twice),
  // footer, file path and text and note, skipped chart name and reason, left_out.
  EXPECT_GE(count_of(page, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"), 24u);
}

TEST(RenderHtml, NumericCellsCarryTheirRawValueAndTextKeepsUnits) {
  Document doc;
  Table t;
  t.id = "x";
  t.title = "X";
  t.columns = {{"name", "name"}, {"median_ms", "median ms"}, {"peak_bytes", "peak"}};
  t.rows = {{text_cell("a"), ms_cell(1234.5678), bytes_cell(3.0 * 1024 * 1024)},
            {text_cell("b"), ms_cell(std::nullopt), bytes_cell(512)}};
  doc.tables.push_back(t);
  std::string page = render_html(doc, {});
  test::expect_in_page(page, "<table class=\"sortable\"");
  test::expect_in_page(page, "data-key=\"name\" data-type=\"text\"");
  test::expect_in_page(page, "data-key=\"median_ms\" data-type=\"num\" class=\"num\"");
  test::expect_in_page(page, "<td class=\"num\" data-value=\"1234.5678\">1235</td>");
  test::expect_in_page(page, "<td class=\"num\" data-value=\"3145728\">3.0 MiB</td>");
  test::expect_in_page(page, "<td class=\"num na\">n/a</td>");
  test::expect_in_page(page, "<td>b</td>");
  test::expect_in_page(page, "addEventListener('click'");
}

TEST(RenderHtml, FixtureReportHasEverySectionWithItsSource) {
  Document doc = report_of({"run_a", "run_incomplete", "sweep_2d"});
  ASSERT_FALSE(doc.tables.empty());
  std::string page = render_html(doc, {});
  for (const auto& t : doc.tables) {
    test::expect_in_page(page, "<section id=\"t-" + t.id + "\"");
    test::expect_in_page(page, "<h2>" + html_escape(t.title) + "</h2>");
    test::expect_in_page(page, "<a href=\"#t-" + t.id + "\">");
  }
  for (const char* id :
       {"t-summary", "t-phases.run_a", "t-modules.run_a", "t-ops.run_a", "t-memory.run_a",
        "t-activations.run_a", "t-sweep.pivot.val_loss", "t-sweep.pareto", "findings"}) {
    test::expect_in_page(page, std::string("id=\"") + id + "\"");
  }
  test::expect_in_page(page, "from: " + report_fixture("run_a") + "/ops.csv</p>");
  test::expect_in_page(page, "from: " + report_fixture("sweep_2d") + "/sweep.csv</p>");
  test::expect_in_page(page, "<footer>");
  test::expect_in_page(page, "<code>--set data.num_workers=1</code>");  // a finding's suggestion
  EXPECT_TRUE(external_references(page).empty()) << external_references(page)[0];
}

TEST(RenderHtml, ChartsGoBesideTheirTableOthersUnderCharts) {
  Document doc = report_of({"run_a"});
  HtmlExtras extras;
  extras.charts.charts = {{"04_phases", kGnuplotSvg, "", ""},
                          {"05_loss_curves", "", "no steps.csv with loss", ""},
                          {"99_new_chart", kGnuplotSvg, "", "a gnuplot warning"}};
  std::string page = render_html(doc, extras);
  size_t phases = page.find("<section id=\"t-phases.run_a\"");
  size_t next = page.find("<section", phases + 1);
  size_t chart = page.find("<figure class=\"chart\" id=\"chart-04_phases\"");
  ASSERT_NE(chart, std::string::npos);
  EXPECT_GT(chart, phases);
  EXPECT_LT(chart, next);
  size_t charts = page.find("<section id=\"charts\"");
  ASSERT_NE(charts, std::string::npos);
  EXPECT_GT(page.find("id=\"chart-99_new_chart\""), charts);
  test::expect_in_page(page, "<li><code>05_loss_curves</code>: no steps.csv with loss</li>");
  test::expect_in_page(page, "gnuplot said: a gnuplot warning");
  // Two charts, the prolog gone, their ids kept apart.
  EXPECT_EQ(count_of(page, "<svg"), 2u);
  EXPECT_EQ(page.find("<?xml"), std::string::npos);
  EXPECT_EQ(page.find("DOCTYPE svg"), std::string::npos);
  test::expect_in_page(page, "id='c0-gpPt7'");
  test::expect_in_page(page, "id='c2-gpPt7'");
  test::expect_in_page(page, "<title>04_phases</title>");
  EXPECT_TRUE(external_references(page).empty()) << external_references(page)[0];
}

TEST(RenderHtml, ChartsLeftOutSayWhyAndAReferencingChartIsRefused) {
  Document doc = report_of({"run_a"});
  HtmlExtras extras;
  extras.charts.left_out = "'gnuplot' was not found on PATH";
  std::string page = render_html(doc, extras);
  test::expect_in_page(page, "Charts left out: &#39;gnuplot&#39; was not found on PATH");
  EXPECT_EQ(page.find("<svg"), std::string::npos);

  HtmlExtras bad;
  std::string with_script = kGnuplotSvg;
  with_script.insert(with_script.find("<defs>"),
                     "<script xlink:href=\"http://www.gnuplot.info/gnuplot_svg.js\"/>");
  bad.charts.charts = {{"04_phases", with_script, "", ""}};
  std::string refused = render_html(doc, bad);
  test::expect_in_page(refused, "chart left out: it holds a &lt;script&gt; element");
  EXPECT_EQ(refused.find("<svg"), std::string::npos);
  EXPECT_TRUE(external_references(refused).empty());
}

TEST(InlineSvg, StripsPrologAndCommentsAndPrefixesIdsAndReferences) {
  InlineSvg s = inline_svg(kGnuplotSvg, "c3-");
  ASSERT_TRUE(s.refused.empty()) << s.refused;
  EXPECT_EQ(s.svg.rfind("<svg", 0), 0u) << s.svg.substr(0, 40);
  EXPECT_EQ(s.svg.substr(s.svg.size() - 6), "</svg>");
  EXPECT_EQ(s.svg.find("a comment"), std::string::npos);
  test::expect_in_page(s.svg, "id='c3-gpPt7'");
  test::expect_in_page(s.svg, "<use xlink:href='#c3-gpPt7' id='c3-gpPt8'");
  test::expect_in_page(s.svg, "xlink:href='#c3-gpPt8' x='10'");
  test::expect_in_page(s.svg, "clip-path=\"url(#c3-gpclip1)\"");
  test::expect_in_page(s.svg, "<text>a &lt; b</text>");
  test::expect_in_page(s.svg,
                       "xmlns:xlink=\"http://www.w3.org/1999/xlink\"");  // a name, not fetched
}

TEST(InlineSvg, RefusesWhatWouldRunOrFetch) {
  auto refused = [](const std::string& inner) {
    return inline_svg("<svg viewBox=\"0 0 1 1\">" + inner + "</svg>", "p-").refused;
  };
  EXPECT_NE(refused("<script>alert(1)</script>"), "");
  EXPECT_NE(refused("<image xlink:href=\"https://example.com/a.png\"/>"), "");
  EXPECT_NE(refused("<image href='//example.com/a.png'/>"), "");
  EXPECT_NE(refused("<g onload=\"x()\"/>"), "");
  EXPECT_NE(refused("<a xlink:href=\"javascript:x()\"><text>t</text></a>"), "");
  EXPECT_NE(refused("<rect fill=\"url(http://example.com/p.svg#x)\"/>"), "");
  EXPECT_NE(refused("<foreignObject><div/></foreignObject>"), "");
  EXPECT_NE(inline_svg("<p>no svg</p>", "p-").refused, "");
  EXPECT_EQ(refused("<image xlink:href='data:image/png;base64,iVBORw0KGgo='/>"), "");
  EXPECT_EQ(refused("<text>on=click src=http://x</text>"), "");  // text, not attributes
}

TEST(ChartTableId, MapsChartsToTheTableTheyIllustrate) {
  Document doc = report_of({"run_a", "sweep_2d"});
  const std::pair<const char*, const char*> kExpected[] = {
      {"01_block_timing", "modules.run_a"},
      {"03_mlp_breakdown", "modules.run_a"},
      {"04_phases", "phases.run_a"},
      {"10_step_time_distribution", "phases.run_a"},
      {"05_loss_curves", "summary"},
      {"06_mfu_vs_batch", "sweep.points"},
      {"07_heatmap_val_loss", "sweep.pivot.val_loss"},
      {"07_heatmap_tokens_per_s", "sweep.pivot.tokens_per_s"},
      {"09_radar_best_configs", "sweep.pareto"},
      {"11_memory_per_phase", "memory.run_a"},
      {"12_roofline", "ops.run_a"}};
  for (const auto& [chart, table] : kExpected)
    EXPECT_EQ(chart_table_id(chart, doc), table) << chart;
  EXPECT_EQ(chart_table_id("13_something_new", doc), "");
  Document incomplete = report_of({"run_incomplete"});
  EXPECT_EQ(chart_table_id("01_block_timing", incomplete), "");  // no modules table
}

TEST(ReadInputFiles, ConfigAndEnvOfRunsAndSweepJsonOfSweeps) {
  ReportOptions opts;
  opts.inputs = {report_fixture("run_a"), report_fixture("run_incomplete"),
                 report_fixture("sweep_2d")};
  opts.compare = {report_fixture("run_a"), report_fixture("run_b")};
  std::vector<HtmlFile> files = read_input_files(opts);
  ASSERT_EQ(files.size(), 7u);  // run_a twice is shown once
  EXPECT_EQ(files[0].path, report_fixture("run_a") + "/config.yaml");
  EXPECT_EQ(files[0].text, test::read_file(report_fixture("run_a") + "/config.yaml"));
  EXPECT_EQ(files[0].note, "");
  EXPECT_EQ(files[1].path, report_fixture("run_a") + "/env.json");
  EXPECT_EQ(files[3].path, report_fixture("run_incomplete") + "/env.json");
  EXPECT_EQ(files[3].note, "not present");
  EXPECT_EQ(files[4].path, report_fixture("sweep_2d") + "/sweep.json");
  EXPECT_EQ(files[6].path, report_fixture("run_b") + "/env.json");
  std::string page = render_html(report_of({"run_a"}), HtmlExtras{{}, files});
  test::expect_in_page(page, "<details><summary><code>" + report_fixture("run_a") + "/config.yaml");
  test::expect_in_page(page, "(not present)");
}

TEST(TableSource, NamesTheFilesOfEachTableAlsoInJson) {
  ReportOptions opts;
  opts.inputs = {report_fixture("run_a")};
  Document doc = build_report(opts);
  opts.inputs.clear();
  opts.compare = {report_fixture("run_a"), report_fixture("run_b")};
  Document compared = build_report(opts);
  std::map<std::string, std::string> source;
  for (const auto* d : {&doc, &compared}) {
    for (const auto& t : d->tables) source[t.id] = t.source;
  }
  std::string a = report_fixture("run_a");
  EXPECT_EQ(source["phases.run_a"], a + "/steps.csv");
  EXPECT_EQ(source["ops.run_a"], a + "/ops.csv");
  EXPECT_EQ(source["memory.run_a"], a + "/memory.csv, " + a + "/summary.json, " + a + "/env.json");
  EXPECT_EQ(source["compare.modules"], "modules.csv in " + a + ", " + report_fixture("run_b"));
  EXPECT_EQ(source["compare.outcome"],
            "summary.json, eval.csv in " + a + ", " + report_fixture("run_b"));
  EXPECT_EQ(source["summary"],
            "summary.json, steps.csv, eval.csv in " + a + ", " + report_fixture("run_b"));
  auto j = nlohmann::json::parse(render(doc, Format::kJson));
  bool found = false;
  for (const auto& t : j["tables"]) {
    if (t["id"] == "ops.run_a") {
      EXPECT_EQ(t["source"], a + "/ops.csv");
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(parse_format("html"), Format::kHtml);
}

// A table's "from:" names only the files that are there: run_incomplete has steps.csv but no
// summary.json or eval.csv (as the top directory of a multi-rank run has no eval.csv).
TEST(TableSource, NamesOnlyTheFilesThatArePresent) {
  const std::string i = report_fixture("run_incomplete"), a = report_fixture("run_a");
  const Document one = report_of({"run_incomplete"});
  std::map<std::string, std::string> source;
  for (const auto& t : one.tables) source[t.id] = t.source;
  EXPECT_EQ(source["summary"], i + "/steps.csv");
  const std::string page = render_html(one, HtmlExtras{});
  test::expect_in_page(page, "from: ");
  EXPECT_EQ(page.find(i + "/eval.csv"), std::string::npos);
  EXPECT_EQ(page.find(i + "/summary.json"), std::string::npos);
  // Two directories, one without two of the files: each present path, in full.
  const Document two = report_of({"run_a", "run_incomplete"});
  for (const auto& t : two.tables) source[t.id] = t.source;
  EXPECT_EQ(source["summary"],
            a + "/summary.json, " + a + "/steps.csv, " + a + "/eval.csv, " + i + "/steps.csv");
}

}  // namespace
}  // namespace llmprof::report
