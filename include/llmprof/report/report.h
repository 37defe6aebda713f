// `llmprof report`: tables of one or more run or sweep directories, an optional side-by-side
// comparison of two runs, and findings. The umbrella header of the report concern.
#pragma once

#include <string>
#include <vector>

#include "llmprof/report/compare.h"
#include "llmprof/report/document.h"
#include "llmprof/report/findings.h"
#include "llmprof/report/metrics.h"
#include "llmprof/report/run.h"
#include "llmprof/report/sweep.h"

namespace llmprof::report {

struct ReportOptions {
  std::vector<std::string> inputs;   // run or sweep directories
  std::vector<std::string> compare;  // empty, or two run directories A and B
  size_t top_ops = 15;               // rows of the top-ops table
};

// Reads every input and assembles the report. Throws UsageError for no input or a --compare
// that is not two runs, DataError for a missing directory or malformed file (exit 2).
Document build_report(const ReportOptions& options);

}  // namespace llmprof::report
