// The report's JSON (`llmprof report --format json`) as one typed document: the report's tables,
// warnings and findings in the form the JSON gives them (cells as raw numbers, text or null; a
// tried --set as its verdict and interval). report fills it from its Document
// (report::report_doc, llmprof/report/document.h); rundir writes and reads it, so users' tools
// read the report through parse_report_doc. Schema kReportSchemaVersion (rundir/files.h); fields
// in docs/report_json.md. Nullopt is JSON null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/rundir/read.h"

namespace llmprof::rundir {

// One cell: a figure (number), a text, or neither (null: an unknown figure).
struct ReportCell {
  std::optional<double> number;
  std::optional<std::string> text;
};

struct ReportColumn {
  std::string key;    // stable, with its unit ("median_ms")
  std::string title;  // as the Markdown heading prints it
};

struct ReportTable {
  std::string id, title;
  std::vector<ReportColumn> columns;
  std::vector<std::map<std::string, ReportCell>> rows;  // column key -> cell
  std::vector<std::string> notes;
  std::optional<std::string> source;  // the file(s) its figures come from; absent when none
};

// A finding's --set as `llmprof report --try` measured it (tried.json), as the report gives it.
struct ReportTried {
  std::string set, text;
  std::string figure;  // ab's figure name: median_step_ms | step_us_per_token | wall_us_per_token
  int64_t steps = 0;
  std::string error, time;
  std::optional<std::string> verdict;  // faster | slower | inconclusive; null: not measured
  std::optional<int64_t> repetitions;  // written with a verdict only
  std::optional<double> ratio_of_medians, ci_low, ci_high;
};

struct ReportFinding {
  std::string rule, run, title;
  std::optional<double> measured, threshold;  // null when not finite
  std::string unit, evidence, suggestion;
  std::vector<std::string> sets;  // key=value of each --set the suggestion names
  bool experiment = false;
  std::vector<ReportTried> tried;
};

struct ReportDoc {
  int schema_version = 0;  // as read; the writer writes kReportSchemaVersion
  std::string title;
  std::vector<std::string> intro;
  std::vector<InputWarning> warnings;  // written with their text(); line 0 is null
  std::vector<std::string> incomplete_runs;
  std::vector<ReportTable> tables;
  std::vector<ReportFinding> findings;
  std::vector<std::string> footer;

  // Read back, not written: fields this version does not know (JSON pointer -> JSON text).
  std::map<std::string, std::string> unknown;
};

// The document's text: keys in a fixed (sorted) order, two-space indent, a final newline.
std::string report_doc_text(const ReportDoc& d);
// Parses a report's JSON; errors name `file`: invalid JSON, a missing schema_version, tables or
// findings, a field of the wrong type, a newer schema_version.
ReportDoc parse_report_doc(const std::string& text, const std::string& file);
// docs/report_json.md: every field, its type and when it is written, from the writer.
std::string report_doc_fields_doc();

}  // namespace llmprof::rundir
