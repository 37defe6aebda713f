// The report as data: titled tables of cells (a number keeps its raw value beside its printed
// text) and notes, rendered as Markdown, long-format CSV or JSON. Collecting the figures and
// writing them never meet (Kineto's ActivityLogger split).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llmprof/report/run.h"
#include "llmprof/rundir/report_doc.h"
#include "llmprof/report/tried.h"

namespace llmprof::report {

// One table cell: text, or a number (nullopt = unknown: "n/a" in Markdown, empty in CSV, null in
// JSON) with the text it prints as.
struct Cell {
  bool numeric = false;
  std::optional<double> value;
  std::string text;
};

// A column: a stable machine key with its unit ("median_ms") and a human title.
struct Column {
  std::string key;
  std::string title;
};

struct Table {
  std::string id;     // stable name, e.g. "summary", "phases.quickstart"
  std::string title;  // Markdown heading
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> notes;  // printed under the table
  std::string source;  // the file(s) its figures come from, e.g. "runs/a/ops.csv"; may be empty
};

// One suggestion of the findings rules, with its evidence.
struct Finding {
  std::string rule;        // stable id, e.g. "data_wait"
  std::string run;         // run label
  std::string title;       // one line: what was found
  double measured = 0;     // the figure the rule tested
  double threshold = 0;    // the rule's threshold, same unit
  std::string unit;        // of measured and threshold, e.g. "fraction of step"
  std::string evidence;    // the numbers behind it, in words
  std::string suggestion;  // what to change, with --set key=value where possible
  std::vector<std::string> sets;  // key=value of each `--set` the suggestion names, in order
  bool experiment = false;  // a set changes train.precision: worded as an experiment until tried
  std::vector<TriedSet> tried;  // what `llmprof report --try` measured of its sets (tried.json)
};

// The words before a finding's suggestion: "Experiment (not yet tried)" for an experiment none of
// whose sets was measured, "Not advised (tried: slower)" when every set tried was slower, else
// "Suggested".
std::string suggestion_label(const Finding& f);

struct Document {
  std::string title;
  std::vector<std::string> intro;  // lines under the title (inputs, how figures are taken)
  std::vector<InputWarning> warnings;        // input left out because it was cut short
  std::vector<std::string> incomplete_runs;  // labels of runs reported from partial files
  std::vector<Table> tables;
  std::vector<Finding> findings;
  bool findings_ran = false;        // print "no findings" rather than nothing
  std::vector<std::string> footer;  // methods: significance test, warm-up, definitions
};

// The document as its JSON gives it (`--format json`, docs/report_json.md): cells as raw numbers
// (null when unknown or not finite), text or null; each tried --set as its verdict and interval.
// rundir::report_doc_text writes it, rundir::parse_report_doc reads it back.
rundir::ReportDoc report_doc(const Document& doc);

enum class Format { kMarkdown, kCsv, kJson, kHtml };

// Parses "md" | "markdown" | "csv" | "json" | "html". Throws UsageError naming the value.
Format parse_format(const std::string& name);

// The document in a format. CSV is long: table,row,column,value (one line per cell). HTML here
// has no charts and no input files: render_html (llmprof/report/html.h) takes those.
std::string render(const Document& doc, Format format);

// Cell helpers: the printed forms used across tables.
Cell text_cell(std::string text);
Cell number_cell(std::optional<double> value, int significant = 4);  // 4 significant digits
Cell count_cell(std::optional<double> count);  // "20"; a fractional count as a number
Cell ms_cell(std::optional<double> ms);
Cell percent_cell(std::optional<double> fraction);  // 0.123 -> "12.3%"
Cell bytes_cell(std::optional<double> bytes);       // B, KiB, MiB or GiB
Cell ratio_cell(std::optional<double> ratio);       // "1.23x"

// A number in about `significant` digits without exponent for ordinary magnitudes.
std::string format_number(double value, int significant = 4);

}  // namespace llmprof::report
