#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/plot/html_charts.h"
#include "llmprof/report/html.h"
#include "llmprof/report/report.h"

namespace llmprof::cli {

namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> compare;
  std::string format = "md";
  std::string out_path;
  std::string gnuplot = "gnuplot";
};

// The html page: the document with the charts `llmprof plot` draws for the same directories and
// each input's config and environment files. Charts left out are said on stderr too.
std::string html_page(const report::Document& doc,
                      const report::ReportOptions& opts,
                      const std::string& gnuplot) {
  std::vector<std::string> dirs = opts.inputs;
  for (const auto& d : opts.compare) {
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  }
  report::HtmlExtras extras;
  extras.charts = plot::draw_html_charts(dirs, gnuplot);
  if (!extras.charts.left_out.empty()) {
    fmt::print(stderr, "warning: charts left out of the page: {}\n", extras.charts.left_out);
  }
  extras.files = report::read_input_files(opts);
  return report::render_html(doc, extras);
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  auto* sub = app.add_subcommand(
      "report",
      "Tables, comparisons and findings (with --set suggestions) from run and sweep dirs");
  sub->add_option("dirs", args->inputs, "Run or sweep directories");
  sub->add_option("--compare", args->compare,
                  "Compare two runs A B side by side: B/A ratios, significance vs per-step noise")
      ->expected(2);
  sub->add_option("--format,-f", args->format,
                  "Output format: md (default), csv (long: "
                  "table,row,column,value), json or html (one self-contained page with charts)");
  sub->add_option("--out,-o", args->out_path, "Write to FILE (atomically) instead of stdout");
  sub->add_option("--gnuplot", args->gnuplot,
                  "html: gnuplot program drawing the charts (name on PATH or path)");
  sub->footer(
      "Examples:\n"
      "  llmprof report runs/quickstart-20261122-123357\n"
      "  llmprof report runs/a runs/b --format json --out report.json\n"
      "  llmprof report --compare runs/baseline runs/candidate\n"
      "  llmprof report sweeps/batch-lr\n"
      "  llmprof report runs/a --format html --out report.html\n"
      "html is one file that loads nothing else: tables (click a column title to sort), charts\n"
      "inlined as SVG (drawn by gnuplot; without it the page says why they were left out),\n"
      "findings and each run's config.yaml and env.json. Like the other formats it goes to\n"
      "stdout without --out.\n"
      "A run cut short (a partial last row, an empty file) is reported from what is whole, with\n"
      "a warning naming the file and line. Exit codes: 0 ok, 2 missing directory or malformed\n"
      "file (named with its line).");
  sub->callback([args, &exit_code]() {
    report::Format format = report::parse_format(args->format);
    report::ReportOptions opts;
    opts.inputs = args->inputs;
    opts.compare = args->compare;
    report::Document doc = report::build_report(opts);
    // Parts cut short were left out: say so on stderr too, where --out or a pipe still shows it.
    for (const auto& w : doc.warnings) fmt::print(stderr, "warning: {}: {}\n", w.run, w.text());
    std::string text = format == report::Format::kHtml ? html_page(doc, opts, args->gnuplot)
                                                       : report::render(doc, format);
    if (args->out_path.empty()) {
      fmt::print("{}", text);
    } else {
      output::write_file_atomic(args->out_path, text);
      fmt::print(stderr, "report written to {}\n", args->out_path);
    }
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
