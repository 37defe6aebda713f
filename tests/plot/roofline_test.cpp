// Chart 12, the roofline: label placement (place_labels, by hand-computed positions) and the chart
// of a run whose ops sit close together and are none of them compute- or overhead-bound: no
// gnuplot warning about an empty series, and the labels of ops at the same spot apart.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "label_layout.h"
#include "llmprof/plot/plot.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::plot {
namespace {

using detail::Box;
using detail::Marker;
using detail::TextMetrics;

const TextMetrics kFont{7, 14};
const Box kArea{0, 0, 400, 300};

TEST(PlaceLabels, FirstLabelGoesRightAboveItsMarker) {
  // Marker at (100, 100), radius 5; "mm" is 2 x 7 = 14 px wide, 14 tall; the gap is 3 px:
  // centre y = 100 - (5 + 3 + 14 / 2) = 85.
  auto places = detail::place_labels({{100, 100, 5, "mm"}}, kArea, {}, kFont);
  ASSERT_EQ(places.size(), 1u);
  EXPECT_DOUBLE_EQ(places[0].x_px, 100);
  EXPECT_DOUBLE_EQ(places[0].y_px, 85);
  EXPECT_FALSE(places[0].far);
}

TEST(PlaceLabels, LabelsOfMarkersAtOneSpotGoToFreeSidesNotOnTopOfEachOther) {
  // mm and addmm at one spot (as on a roofline, two matmuls of the same intensity and speed):
  // mm takes the spot above (y 78..92); addmm (35 px wide) above would overlap it, so it goes
  // below: y = 100 + 15 = 115.
  std::vector<Marker> markers = {{100, 100, 5, "mm"}, {100, 100, 5, "addmm"}};
  auto places = detail::place_labels(markers, kArea, {}, kFont);
  EXPECT_DOUBLE_EQ(places[1].x_px, 100);
  EXPECT_DOUBLE_EQ(places[1].y_px, 115);
  EXPECT_FALSE(places[0].box.overlaps(places[1].box));
}

TEST(PlaceLabels, CrowdedLabelsOverlapNoLabelMarkerOrObstacle) {
  // Six labelled markers 4 px apart and an obstacle (a legend) right of them.
  std::vector<Marker> markers;
  for (int i = 0; i < 6; ++i) {
    markers.push_back({150.0 + 4 * i, 150, 4, "native_layer_norm" + std::to_string(i)});
  }
  markers.push_back({170, 160, 6, ""});  // unlabelled, still to keep clear
  const Box legend{200, 120, 330, 180};
  auto places = detail::place_labels(markers, kArea, {legend}, kFont);
  for (size_t i = 0; i < 6; ++i) {
    const Box& b = places[i].box;
    EXPECT_FALSE(b.overlaps(legend)) << i;
    EXPECT_GE(b.left, kArea.left);
    EXPECT_LE(b.right, kArea.right);
    for (const Marker& m : markers) {
      const Box mb{m.x_px - m.radius_px, m.y_px - m.radius_px, m.x_px + m.radius_px,
                   m.y_px + m.radius_px};
      EXPECT_FALSE(b.overlaps(mb)) << "label " << i << " covers a marker";
    }
    for (size_t j = 0; j < i; ++j) EXPECT_FALSE(b.overlaps(places[j].box)) << i << " on " << j;
  }
  EXPECT_TRUE(places[6].box.right == 0 && places[6].box.left == 0);  // no label, no place
}

// A run with ops.csv (roofline columns as llmprof train writes them) and both roofs in env.json:
// mm and addmm at nearly one spot, _softmax and native_layer_norm at another; memory- and
// unknown-bound ops only, no compute- or overhead-bound one.
std::string write_roofline_run(const test::ScratchDir& dir) {
  const std::string run = dir.file("run");
  const std::string fixtures = std::string(LLMPROF_SOURCE_DIR) + "/tests/report/fixtures/run_a";
  fs::create_directories(run);
  for (const char* f : {"summary.json", "steps.csv", "config.yaml"}) {
    fs::copy_file(fixtures + "/" + f, run + "/" + f);
  }
  auto env = nlohmann::json::parse(test::read_file(fixtures + "/env.json"));
  env["peak_flops"] = {{"flops_per_s", 1.2e11}, {"source", "measured"}};
  env["peak_bandwidth"] = {{"bytes_per_s", 1e10}, {"source", "measured"}};
  test::write_file(run + "/env.json", env.dump());
  test::write_file(
      run + "/ops.csv",
      "op,calls,self_ms,total_ms,self_share,flops,bytes,arithmetic_intensity,"
      "achieved_gflops_per_s,achieved_gb_per_s,bound,roofline_ms,lost_ms,alloc_bytes,"
      "input_shapes,view_calls,gpu_ms,steps\n"
      "aten::mm,35,275,275,0.3,2453667840,58490880,41.9,8.9,0.21,memory,20,255,0,,0,,5\n"
      "aten::addmm,16,147,249,0.1,1207959552,28329984,42.6,8.4,0.11,memory,10,239,0,,0,,5\n"
      "aten::native_layer_norm,9,57,57,0.05,4423680,7142400,0.619,0.077,0.12,memory,0.7,56,0,,0,"
      ",5\n"
      "aten::_softmax,4,23,23,0.02,3932160,6291456,0.625,0.08,0.26,,0.6,23,0,,0,,5\n");
  return run;
}

TEST(RooflineChart, NoEmptySeriesWarningAndLabelsOfOpsAtOneSpotApart) {
  if (find_program("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed";
  test::ScratchDir dir;
  PlotOptions opts;
  opts.inputs = {write_roofline_run(dir)};
  opts.out_dir = dir.file("plots");
  std::map<std::string, ChartResult> charts;
  for (const auto& c : make_plots(opts).charts) charts[c.name] = c;
  ASSERT_EQ(charts.count("12_roofline"), 1u);
  const ChartResult& c = charts.at("12_roofline");
  ASSERT_TRUE(c.skipped.empty()) << c.skipped;
  EXPECT_EQ(c.warning, "");  // was: "Skipping data file with no valid points", twice
  const std::string gp = test::read_file(dir.file("plots/12_roofline.gp"));
  EXPECT_EQ(gp.find("compute-bound"), std::string::npos) << gp;   // no op of these bounds:
  EXPECT_EQ(gp.find("overhead-bound"), std::string::npos) << gp;  // no series, no key entry
  EXPECT_NE(gp.find("memory-bound"), std::string::npos) << gp;
  EXPECT_NE(gp.find("bound unknown"), std::string::npos) << gp;
  // Each op's label at its own screen position: the 1000 x 650 canvas, 7 px a character, 14 px
  // a line; labels of ops at one spot must not overlap.
  std::map<std::string, std::pair<double, double>> at;
  const std::regex label(R"re(set label "([^"]+)" at screen ([0-9.]+), ([0-9.]+) center)re");
  for (auto it = std::sregex_iterator(gp.begin(), gp.end(), label); it != std::sregex_iterator();
       ++it) {
    at[(*it)[1]] = {std::stod((*it)[2]) * 1000, std::stod((*it)[3]) * 650};
  }
  ASSERT_EQ(at.size(), 4u) << gp;
  auto apart = [&](const std::string& a, const std::string& b) {
    const double dx = std::abs(at[a].first - at[b].first);
    const double dy = std::abs(at[a].second - at[b].second);
    return dy >= 14 || dx >= 7.0 * static_cast<double>(a.size() + b.size()) / 2;
  };
  EXPECT_TRUE(apart("mm", "addmm")) << gp;
  EXPECT_TRUE(apart("_softmax", "native_layer_norm")) << gp;
}

}  // namespace
}  // namespace llmprof::plot
