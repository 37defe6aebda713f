// Running gnuplot: write NAME.gp (terminal + house style + chart body), run `gnuplot NAME.gp` in
// the output directory (through llmprof/process/child.h), and report its message on failure.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chart.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/process/child.h"

namespace fs = std::filesystem;

namespace llmprof::plot {

namespace {

// The terminal: pngcairo when this gnuplot has it (gnuplot-nox may not), else libgd png; svg.
std::string terminal(ImageFormat format, int w, int h) {
  if (format == ImageFormat::kSvg) {
    return fmt::format(
        "set terminal svg size {},{} dynamic noenhanced font \"DejaVu Sans,12\" "
        "background rgb \"white\"\n",
        w, h);
  }
  return fmt::format(
      "if (strstrt(GPVAL_TERMINALS, \" pngcairo \") > 0) {{\n"
      "  set terminal pngcairo size {0},{1} noenhanced font \"DejaVu Sans,11\" background rgb "
      "\"white\"\n"
      "}} else {{\n"
      "  set terminal png size {0},{1} noenhanced font \"DejaVuSans,11\" background rgb \"white\"\n"
      "}}\n",
      w, h);
}

// Okabe-Ito colours (distinguishable with colour-blindness), black, then four of Paul Tol's:
// twelve distinct series, as many as a chart draws runs (PlotOptions::max_runs_per_chart).
const char* kStyle =
    "set encoding utf8\n"
    "set linetype 1 lc rgb '#0072B2' lw 2 pt 7 ps 1.1\n"
    "set linetype 2 lc rgb '#E69F00' lw 2 pt 5 ps 1.1\n"
    "set linetype 3 lc rgb '#009E73' lw 2 pt 9 ps 1.2\n"
    "set linetype 4 lc rgb '#D55E00' lw 2 pt 11 ps 1.2\n"
    "set linetype 5 lc rgb '#CC79A7' lw 2 pt 13 ps 1.2\n"
    "set linetype 6 lc rgb '#56B4E9' lw 2 pt 3 ps 1.1\n"
    "set linetype 7 lc rgb '#F0E442' lw 2 pt 1 ps 1.1\n"
    "set linetype 8 lc rgb '#000000' lw 2 pt 2 ps 1.1\n"
    "set linetype 9 lc rgb '#882255' lw 2 pt 4 ps 1.1\n"
    "set linetype 10 lc rgb '#44AA99' lw 2 pt 6 ps 1.1\n"
    "set linetype 11 lc rgb '#999933' lw 2 pt 8 ps 1.1\n"
    "set linetype 12 lc rgb '#777777' lw 2 pt 10 ps 1.1\n"
    "set linetype cycle 12\n"
    "set grid ytics lc rgb '#dddddd' lw 1\n"
    "set key noautotitle\n"
    "set datafile missing 'NaN'\n";

std::string last_lines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    out += (out.empty() ? "" : " | ") + lines[i];
  }
  return out;
}

}  // namespace

namespace detail {

ChartWriter::ChartWriter(std::string dir, ImageFormat format, std::string gnuplot_path)
    : dir_(std::move(dir)), format_(format), gnuplot_(std::move(gnuplot_path)) {}

std::string ChartWriter::data(const std::string& file, const std::string& content) const {
  output::write_file_atomic((fs::path(dir_) / file).string(), content);
  return file;
}

ChartResult ChartWriter::render(const std::string& name,
                                const std::string& body,
                                int width_px,
                                int height_px) const {
  std::string image = name + "." + image_extension(format_);
  std::string script = fmt::format(
      "# llmprof plot: {0}. Redraw with `gnuplot {0}.gp` in this "
      "directory.\n{1}set output {2}\n{3}\n{4}",
      name, terminal(format_, width_px, height_px), gp_quote(image), kStyle, body);
  if (body.empty() || body.back() != '\n') script += "\n";
  script += "unset output\n";
  std::string script_name = name + ".gp";
  output::write_file_atomic((fs::path(dir_) / script_name).string(), script);

  std::string log_path = (fs::path(dir_) / (name + ".log")).string();
  process::ChildSpec gnuplot;
  gnuplot.argv = {gnuplot_, script_name};
  gnuplot.name = "gnuplot";
  gnuplot.output = process::Output::kLog;
  gnuplot.log_path = log_path;
  gnuplot.cwd = dir_;
  gnuplot.die_with_parent = false;
  const process::Exit end = process::exit_of(process::wait_exit(process::spawn(gnuplot).pid));
  std::ifstream in(log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string log = ss.str();
  std::error_code ec;
  if (process::is_failure(end)) {
    throw Error(fmt::format("plot: gnuplot failed on {}/{} ({}): {}", dir_, script_name,
                            end.kind == process::Exit::Kind::kExited
                                ? fmt::format("exit {}", end.code)
                                : std::string("killed"),
                            last_lines(log, 3)));
  }
  if (log.empty()) fs::remove(log_path, ec);
  return ChartResult{name, (fs::path(dir_) / image).string(), "",
                     log.empty() ? "" : script_name + ": " + last_lines(log, 3)};
}

ChartResult skipped(const std::string& name, const std::string& reason) {
  return ChartResult{name, "", reason, ""};
}

std::string gp_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

std::string dat(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return "NaN";
  return fmt::format("{}", *value);
}

}  // namespace detail

ImageFormat parse_image_format(const std::string& name) {
  if (name == "png") return ImageFormat::kPng;
  if (name == "svg") return ImageFormat::kSvg;
  throw UsageError("--format: '" + name + "' (expected png or svg)");
}

const char* image_extension(ImageFormat format) {
  return format == ImageFormat::kSvg ? "svg" : "png";
}

}  // namespace llmprof::plot
