// Charts of the report fixtures through gnuplot: valid PNG/SVG files for the charts with data,
// a skip with its reason for the others, and a clear error without gnuplot.
#include "llmprof/plot/plot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::plot {
namespace {

using test::ScratchDir;

std::string fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/report/fixtures/" + name;
}

#define SKIP_WITHOUT_GNUPLOT()                                                       \
  do {                                                                               \
    if (find_program("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed"; \
  } while (0)

std::map<std::string, ChartResult> by_name(const std::vector<ChartResult>& charts) {
  std::map<std::string, ChartResult> out;
  for (const auto& c : charts) out[c.name] = c;
  return out;
}

bool is_png(const std::string& path) {
  std::string bytes = test::read_file(path);
  return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

TEST(MakePlots, WritesPngChartsForTwoRunsWithModulesAndMemory) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir;
  PlotOptions opts;
  opts.inputs = {fixture("run_a"), fixture("run_b")};
  opts.out_dir = dir.file("plots");
  auto charts = by_name(make_plots(opts).charts);
  for (const char* name :
       {"01_block_timing", "02_attention_breakdown", "03_mlp_breakdown", "04_phases",
        "05_loss_curves", "06_tokens_per_s_vs_batch", "06_mfu_vs_batch",
        "08_flops_per_joule_vs_batch", "09_radar_best_configs", "10_step_time_distribution",
        "11_memory_per_phase"}) {
    ASSERT_EQ(charts.count(name), 1u) << name;
    const ChartResult& c = charts.at(name);
    EXPECT_TRUE(c.skipped.empty()) << name << ": " << c.skipped;
    EXPECT_EQ(c.image, dir.file("plots") + "/" + name + ".png");
    EXPECT_TRUE(is_png(c.image)) << c.image;
    EXPECT_TRUE(fs::exists(dir.file("plots") + "/" + name + ".gp")) << name;
  }
  EXPECT_NE(charts.at("07_heatmap_val_loss").skipped.find("2 swept keys"), std::string::npos);
  // The script is kept beside its image, with the title and a unit-bearing axis label.
  std::string gp = test::read_file(dir.file("plots/04_phases.gp"));
  EXPECT_NE(gp.find("set title \"Step phases per run"), std::string::npos);
  EXPECT_NE(gp.find("set ylabel \"time per step (ms)\""), std::string::npos);
  // Block timing data: run_a forward = attention 1.0 + MLP 1.2 + layer norms 0.2 ms (2 blocks).
  // "other" (block minus its parts) is zero in the fixtures, so that series is left out.
  std::string data = test::read_file(dir.file("plots/01_block_timing.dat"));
  size_t at = data.find("\"run_a forward\" ");
  ASSERT_NE(at, std::string::npos) << data;
  std::istringstream row(data.substr(at + 16));
  double attention = 0, mlp = 0, norms = 0, total = 0;
  row >> attention >> mlp >> norms >> total;
  EXPECT_NEAR(attention, 1.0, 1e-9);
  EXPECT_NEAR(mlp, 1.2, 1e-9);
  EXPECT_NEAR(norms, 0.2, 1e-9);
  EXPECT_NEAR(total, 2.4, 1e-9);
  EXPECT_EQ(data.find("other"), std::string::npos) << data;
}

TEST(MakePlots, WritesSvgHeatmapsAndRadarForASweep) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir;
  PlotOptions opts;
  opts.inputs = {fixture("sweep_2d")};
  opts.out_dir = dir.path();
  opts.format = ImageFormat::kSvg;
  auto charts = by_name(make_plots(opts).charts);
  for (const char* name :
       {"07_heatmap_val_loss", "07_heatmap_tokens_per_s", "09_radar_best_configs",
        "06_tokens_per_s_vs_batch", "08_flops_per_joule_vs_batch", "05_loss_curves"}) {
    const ChartResult& c = charts.at(name);
    ASSERT_TRUE(c.skipped.empty()) << name << ": " << c.skipped;
    std::string svg = test::read_file(c.image);
    EXPECT_NE(svg.find("<svg"), std::string::npos) << c.image;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << c.image;
  }
  // Heatmap cells: (lr index, batch index, val loss); batch 8 / lr 0.003 keeps the completed
  // repeat.
  std::string data = test::read_file(dir.file("07_heatmap_val_loss.dat"));
  EXPECT_NE(data.find("0 0 2.1\n"), std::string::npos) << data;
  EXPECT_NE(data.find("1 1 1.95\n"), std::string::npos) << data;
  EXPECT_NE(charts.at("01_block_timing").skipped.find("no modules.csv"), std::string::npos);
}

TEST(MakePlots, SkipsChartsWhoseDataIsMissing) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir;
  PlotOptions opts;
  opts.inputs = {fixture("run_incomplete")};
  opts.out_dir = dir.path();
  auto charts = by_name(make_plots(opts).charts);
  EXPECT_TRUE(charts.at("04_phases").skipped.empty());
  EXPECT_TRUE(is_png(charts.at("04_phases").image));
  EXPECT_TRUE(charts.at("10_step_time_distribution").skipped.empty());
  EXPECT_NE(charts.at("02_attention_breakdown").skipped.find("no modules.csv"), std::string::npos);
  EXPECT_NE(charts.at("11_memory_per_phase").skipped.find("no memory.csv"), std::string::npos);
  EXPECT_NE(charts.at("06_mfu_vs_batch").skipped.find("2 or more batch sizes"), std::string::npos);
  EXPECT_NE(charts.at("08_flops_per_joule_vs_batch").skipped.find("no energy"), std::string::npos);
  EXPECT_NE(charts.at("09_radar_best_configs").skipped.find("2 or more"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.file("11_memory_per_phase.png")));
}

TEST(MakePlots, DrawsARunCutShortFromItsWholeRowsAndReturnsTheWarnings) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir;
  fs::copy(fixture("run_a"), dir.file("cut"), fs::copy_options::recursive);
  std::string steps = test::read_file(dir.file("cut/steps.csv"));
  test::write_file(dir.file("cut/steps.csv"), steps.substr(0, steps.size() - 40));
  test::write_file(dir.file("cut/modules.csv"), "");
  PlotOptions opts;
  opts.inputs = {dir.file("cut")};
  opts.out_dir = dir.file("plots");
  PlotResult result = make_plots(opts);
  ASSERT_EQ(result.warnings.size(), 2u);
  EXPECT_NE(result.warnings[0].find("cut: " + dir.file("cut/steps.csv") + " line 12"),
            std::string::npos)
      << result.warnings[0];
  EXPECT_NE(result.warnings[1].find(dir.file("cut/modules.csv") + ": empty file"),
            std::string::npos)
      << result.warnings[1];
  auto charts = by_name(result.charts);
  for (const char* name :
       {"04_phases", "05_loss_curves", "10_step_time_distribution", "11_memory_per_phase"}) {
    EXPECT_TRUE(is_png(charts.at(name).image)) << name << ": " << charts.at(name).skipped;
  }
  EXPECT_NE(charts.at("01_block_timing").skipped.find("no modules.csv"), std::string::npos);
}

// The first line of a .dat file that starts with prefix, split into fields after it.
std::vector<double> dat_row(const std::string& path, const std::string& prefix) {
  std::istringstream in(test::read_file(path));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream fields(line.substr(prefix.size()));
    std::vector<double> out;
    for (double v; fields >> v;) out.push_back(v);
    return out;
  }
  ADD_FAILURE() << "no row '" << prefix << "' in " << path << ":\n" << test::read_file(path);
  return {};
}

TEST(MakePlots, MemoryChartGivesRssAndAllocatedMemoryAPanelAndAnAxisEach) {
  // Peak RSS (1 GiB) would flatten allocated memory (100-150 MiB) on one linear axis.
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir;
  PlotOptions opts;
  opts.inputs = {fixture("run_a")};
  opts.out_dir = dir.path();
  auto charts = by_name(make_plots(opts).charts);
  ASSERT_TRUE(is_png(charts.at("11_memory_per_phase").image));
  std::string gp = test::read_file(dir.file("11_memory_per_phase.gp"));
  EXPECT_NE(gp.find("set multiplot layout 1,2"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set ylabel \"allocated by LibTorch (MiB)\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("set ylabel \"process RSS (GiB)\""), std::string::npos) << gp;
  // Allocated panel: peak and end allocated, MiB; RSS panel: peak RSS, GiB (max over steps).
  auto fwd = dat_row(dir.file("11_memory_per_phase_allocated.dat"), "\"forward\" ");
  ASSERT_GE(fwd.size(), 2u);
  EXPECT_NEAR(fwd[0], 100, 1e-9);
  EXPECT_NEAR(fwd[1], 80, 1e-9);
  auto rss = dat_row(dir.file("11_memory_per_phase_rss.dat"), "\"backward\" ");
  ASSERT_GE(rss.size(), 1u);
  EXPECT_NEAR(rss[0], 1.0, 1e-9);
  EXPECT_EQ(test::read_file(dir.file("11_memory_per_phase_allocated.dat")).find("RSS"),
            std::string::npos);
}

TEST(MakePlots, MemoryChartOfSeveralRunsShowsPeakRssBesidePeakAllocated) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir;
  PlotOptions opts;
  opts.inputs = {fixture("run_a"), fixture("run_b")};
  opts.out_dir = dir.path();
  auto charts = by_name(make_plots(opts).charts);
  ASSERT_TRUE(is_png(charts.at("11_memory_per_phase").image));
  auto alloc = dat_row(dir.file("11_memory_per_phase_allocated.dat"), "\"backward\" ");
  ASSERT_GE(alloc.size(), 2u);
  EXPECT_NEAR(alloc[0], 150, 1e-9);  // run_a, MiB
  EXPECT_NEAR(alloc[1], 420, 1e-9);  // run_b
  auto rss = dat_row(dir.file("11_memory_per_phase_rss.dat"), "\"backward\" ");
  ASSERT_GE(rss.size(), 2u);
  EXPECT_NEAR(rss[0], 1.0, 1e-9);  // GiB
  EXPECT_NEAR(rss[1], 12.0, 1e-9);
}

TEST(MakePlots, MissingGnuplotIsARuntimeErrorNamingIt) {
  ScratchDir dir;
  PlotOptions opts;
  opts.inputs = {fixture("run_a")};
  opts.out_dir = dir.path();
  opts.gnuplot = "llmprof-no-such-gnuplot";
  try {
    make_plots(opts);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 1);
    EXPECT_NE(std::string(e.what()).find("llmprof-no-such-gnuplot"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos);
  }
}

TEST(MakePlots, MissingDirectoryIsADataError) {
  PlotOptions opts;
  opts.inputs = {"/nonexistent/run"};
  opts.out_dir = "/tmp";
  EXPECT_THROW(make_plots(opts), DataError);
}

TEST(ParseImageFormat, AcceptsPngAndSvgOnly) {
  EXPECT_EQ(parse_image_format("png"), ImageFormat::kPng);
  EXPECT_EQ(parse_image_format("svg"), ImageFormat::kSvg);
  EXPECT_THROW(parse_image_format("jpg"), UsageError);
}

// The skip reasons name the profile level summary.json recorded, instead of inferring it from
// which files exist.
TEST(MakePlots, SkipReasonsTakeTheProfileLevelFromTheSummary) {
  SKIP_WITHOUT_GNUPLOT();
  ScratchDir dir;
  fs::copy(fixture("run_a"), dir.file("run"), fs::copy_options::recursive);
  fs::remove(dir.file("run/modules.csv"));
  fs::remove(dir.file("run/ops.csv"));
  test::write_file(dir.file("run/summary.json"),
                   R"({"schema_version": 1, "status": "completed", "profile_level": "phases"})");
  PlotOptions opts;
  opts.inputs = {dir.file("run")};
  opts.out_dir = dir.file("plots");
  opts.format = ImageFormat::kSvg;
  auto charts = by_name(make_plots(opts).charts);
  EXPECT_EQ(charts.at("01_block_timing").skipped,
            "no modules.csv in the runs: recorded at profile.level=phases; modules.csv needs "
            "profile.level=modules");
  EXPECT_EQ(charts.at("12_roofline").skipped,
            "no ops.csv in the runs: recorded at profile.level=phases; ops.csv needs "
            "profile.level=ops");
  EXPECT_TRUE(charts.at("04_phases").skipped.empty()) << charts.at("04_phases").skipped;

  // At level ops with ops.csv gone: the file is missing, not the level.
  test::write_file(dir.file("run/summary.json"),
                   R"({"schema_version": 1, "status": "completed", "profile_level": "ops"})");
  charts = by_name(make_plots(opts).charts);
  EXPECT_EQ(charts.at("12_roofline").skipped,
            "no ops.csv in the runs: profile.level=ops, but ops.csv holds no rows");
}

}  // namespace
}  // namespace llmprof::plot
