// make_plots: load the inputs (exit 2 on bad data), find gnuplot (exit 1 when missing), create the
// output directory, then draw every chart family.
#include "llmprof/plot/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "chart.h"
#include "llmprof/error.h"

namespace fs = std::filesystem;

namespace llmprof::plot {

PlotResult make_plots(const PlotOptions& options) {
  detail::PlotInputs in = detail::load_inputs(options);
  std::string gnuplot = find_program(options.gnuplot);
  if (gnuplot.empty()) {
    throw Error(
        fmt::format("plot: '{}' not found on PATH; install gnuplot (Debian: apt-get "
                    "install gnuplot-nox) or pass its path",
                    options.gnuplot));
  }
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (ec || !fs::is_directory(options.out_dir)) {
    throw IoError(fmt::format("plot: cannot create '{}': {}", options.out_dir, ec.message()));
  }
  detail::ChartWriter w(options.out_dir, options.format, gnuplot);
  std::vector<ChartResult> out;
  for (auto& c : detail::module_charts(in, w)) out.push_back(std::move(c));
  for (auto& c : detail::run_charts(in, w)) out.push_back(std::move(c));
  for (auto& c : detail::sweep_charts(in, w)) out.push_back(std::move(c));
  out.push_back(detail::radar_chart(in, w));
  for (auto& c : detail::roofline_charts(in, w)) out.push_back(std::move(c));
  for (auto& c : detail::comm_charts(in, w)) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(),
                   [](const ChartResult& a, const ChartResult& b) { return a.name < b.name; });
  PlotResult result{std::move(out), std::move(in.warnings)};
  for (const auto& c : result.charts) {
    if (!c.warning.empty()) result.warnings.push_back(c.name + ": gnuplot said: " + c.warning);
  }
  return result;
}

}  // namespace llmprof::plot
