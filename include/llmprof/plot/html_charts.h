// The charts of `llmprof report --format html`: the chart set `llmprof plot` makes for the same
// inputs, drawn as SVG into a temporary directory, read back for inlining and the directory
// removed. Plot may use report (not the reverse), so this glue lives here.
#pragma once

#include <string>
#include <vector>

#include "llmprof/report/html.h"

namespace llmprof::plot {

// Draws every chart of the inputs (run or sweep directories) as SVG with gnuplot (a name on PATH
// or a path). Never throws for gnuplot: when it is missing or fails, or the inputs cannot be
// drawn, the result has no charts and left_out says why, so the page still renders.
report::HtmlCharts draw_html_charts(const std::vector<std::string>& inputs,
                                    const std::string& gnuplot = "gnuplot");

}  // namespace llmprof::plot
