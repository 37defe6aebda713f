// draw_html_charts: make_plots in svg into a private temporary directory (mkdtemp), each image
// read back whole, the directory removed whatever happens.
#include "llmprof/plot/html_charts.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llmprof/error.h"
#include "llmprof/plot/plot.h"

namespace fs = std::filesystem;

namespace llmprof::plot {

namespace {

// A fresh directory under the system temp dir, removed with its content by the destructor.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "llmprof-html-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw IoError(
          fmt::format("report: cannot create a temporary directory for the charts "
                      "({}): {}",
                      pattern, std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

report::HtmlCharts draw_html_charts(const std::vector<std::string>& inputs,
                                    const std::string& gnuplot) {
  report::HtmlCharts out;
  if (inputs.empty()) return out;
  if (find_program(gnuplot).empty()) {
    out.left_out = fmt::format(
        "'{}' was not found on PATH; install gnuplot (Debian: apt-get install gnuplot-nox) "
        "and run the report again",
        gnuplot);
    return out;
  }
  try {
    TempDir dir;
    PlotOptions opts;
    opts.inputs = inputs;
    opts.out_dir = dir.path();
    opts.format = ImageFormat::kSvg;
    opts.gnuplot = gnuplot;
    PlotResult result = make_plots(opts);
    for (const auto& c : result.charts) {
      report::HtmlChart chart{c.name, "", c.skipped, c.warning};
      if (!c.image.empty()) {
        chart.svg = read_whole(c.image);
        if (chart.svg.empty()) chart.skipped = "gnuplot wrote an empty " + c.image;
      }
      out.charts.push_back(std::move(chart));
    }
  } catch (const Error& e) {
    // The report's tables were read before this, so the page is still worth writing.
    out.charts.clear();
    out.left_out = e.what();
  }
  return out;
}

}  // namespace llmprof::plot
