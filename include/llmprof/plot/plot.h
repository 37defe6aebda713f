// `llmprof plot`: charts of run and sweep directories through gnuplot. Each chart is a titled
// image with labelled axes (units in the labels), written beside the gnuplot script and .dat
// files that made it, so it can be restyled by hand (`gnuplot NAME.gp` in the output directory).
// A chart whose data is missing is skipped with a reason.
#pragma once

#include <string>
#include <vector>

#include "llmprof/process/child.h"

namespace llmprof::plot {

enum class ImageFormat { kPng, kSvg };

// Parses "png" | "svg". Throws UsageError naming the value.
ImageFormat parse_image_format(const std::string& name);

// The file extension of a format, without the dot.
const char* image_extension(ImageFormat format);

struct PlotOptions {
  std::vector<std::string> inputs;  // run or sweep directories
  std::string out_dir;              // created if absent
  ImageFormat format = ImageFormat::kPng;
  std::string gnuplot = "gnuplot";  // program name (searched on PATH) or path
  size_t max_runs_per_chart = 12;   // per-run charts draw at most this many runs
};

// One chart: written (image path set) or skipped (reason set).
struct ChartResult {
  std::string name;     // e.g. "04_phases"
  std::string image;    // path of the image; empty when skipped
  std::string skipped;  // why it was skipped; empty when written
  std::string warning;  // what gnuplot said while drawing it; empty when nothing
};

// What make_plots did, for the caller to print (the library never prints).
struct PlotResult {
  std::vector<ChartResult> charts;    // by name
  std::vector<std::string> warnings;  // input left out (rows or files cut short, sweep points
                                      // that do not load) and gnuplot's messages
};

// Reads every input, then writes every chart it has data for. A run cut short (a partial last
// row, an empty file) is drawn from what is whole, with a warning. Throws DataError for a missing
// directory or malformed file (exit 2), Error (exit 1) when gnuplot is missing or fails.
PlotResult make_plots(const PlotOptions& options);

// The full path of program (a name searched on PATH, or a path); empty when not found.
using process::find_program;

}  // namespace llmprof::plot
