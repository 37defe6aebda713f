// What the HTML page shows besides the Document: the inputs' config and environment files, and
// which table each chart of `llmprof plot` illustrates.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "llmprof/report/html.h"
#include "llmprof/report/report.h"
#include "llmprof/rundir/files.h"

namespace llmprof::report {

namespace {

HtmlFile read_shown_file(const std::string& path) {
  HtmlFile f;
  f.path = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    f.note = "not present";
    return f;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  f.text = ss.str();
  if (f.text.size() > kHtmlFileMaxBytes) {
    f.note = fmt::format("truncated: first {} of {} bytes shown", kHtmlFileMaxBytes, f.text.size());
    f.text.resize(kHtmlFileMaxBytes);
  }
  return f;
}

// Chart subjects (a part of the chart's name) and the table ids they illustrate, most specific
// first; a prefix ending in '.' matches any run's table ("phases." -> "phases.run_a").
struct ChartPlace {
  std::string_view subject;
  std::vector<std::string_view> tables;
};

const std::vector<ChartPlace>& chart_places() {
  static const std::vector<ChartPlace> kPlaces = {
      {"block_timing", {"modules.", "compare.modules"}},
      {"attention_breakdown", {"modules.", "compare.modules"}},
      {"mlp_breakdown", {"modules.", "compare.modules"}},
      {"step_time_distribution", {"phases.", "compare.phases"}},
      {"phases", {"phases.", "compare.phases"}},
      {"loss_curves", {"summary", "compare.outcome"}},
      {"heatmap_val_loss", {"sweep.pivot.val_loss"}},
      {"heatmap_tokens_per_s", {"sweep.pivot.tokens_per_s"}},
      {"vs_batch", {"sweep.points", "summary"}},
      {"radar", {"sweep.pareto", "sweep.best", "summary"}},
      {"memory", {"memory.", "activations."}},
      {"roofline", {"ops.", "compare.ops"}},
      {"comm_timeline", {"comm_breakdown."}},
      {"comm_overlap", {"comm_buckets."}},
  };
  return kPlaces;
}

bool table_matches(const std::string& id, std::string_view pattern) {
  if (!pattern.empty() && pattern.back() == '.') return id.rfind(pattern, 0) == 0;
  return id == pattern;
}

}  // namespace

std::vector<HtmlFile> read_input_files(const ReportOptions& options) {
  std::vector<std::string> dirs = options.inputs;
  dirs.insert(dirs.end(), options.compare.begin(), options.compare.end());
  std::vector<HtmlFile> files;
  std::vector<std::string> seen;
  for (const auto& dir : dirs) {
    if (std::find(seen.begin(), seen.end(), dir) != seen.end()) continue;
    seen.push_back(dir);
    if (rundir::is_sweep_dir(dir)) {
      files.push_back(read_shown_file(rundir::path(dir, rundir::kSweepJson)));
    } else {
      files.push_back(read_shown_file(rundir::path(dir, rundir::kConfig)));
      files.push_back(read_shown_file(rundir::path(dir, rundir::kEnv)));
    }
  }
  return files;
}

std::string chart_table_id(const std::string& chart_name, const Document& doc) {
  for (const auto& place : chart_places()) {
    if (chart_name.find(place.subject) == std::string::npos) continue;
    for (const auto& pattern : place.tables) {
      for (const auto& t : doc.tables) {
        if (table_matches(t.id, pattern)) return t.id;
      }
    }
    return {};
  }
  return {};
}

}  // namespace llmprof::report
