// The report JSON's one writer and one reader (include/llmprof/rundir/report_doc.h).
// schema_version, tables and findings are the fields every file must have; fields this version
// does not know are kept.
#include "llmprof/rundir/report_doc.h"

#include <fmt/format.h>

#include "doc_lists.h"
#include "json_doc.h"
#include "read_util.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::object_list;
using detail::ObjectReader;
using detail::opt;
using detail::value_list;

Json cell_json(const ReportCell& c) {
  if (c.text) return *c.text;
  return opt(c.number);
}

Json table_json(const ReportTable& t) {
  Json columns = Json::array(), rows = Json::array();
  for (const ReportColumn& c : t.columns) columns.push_back({{"key", c.key}, {"title", c.title}});
  for (const auto& row : t.rows) {
    Json r = Json::object();
    for (const auto& [key, cell] : row) r[key] = cell_json(cell);
    rows.push_back(std::move(r));
  }
  Json j = {{"id", t.id},
            {"title", t.title},
            {"columns", std::move(columns)},
            {"rows", std::move(rows)},
            {"notes", t.notes}};
  if (t.source) j["source"] = *t.source;
  return j;
}

Json tried_json(const ReportTried& t) {
  Json j = {{"set", t.set},
            {"text", t.text},
            {"figure", t.figure},
            {"steps", t.steps},
            {"error", t.error},
            {"time", t.time},
            {"verdict", opt(t.verdict)},
            {"ratio_of_medians", opt(t.ratio_of_medians)},
            {"ci_low", opt(t.ci_low)},
            {"ci_high", opt(t.ci_high)}};
  if (t.repetitions) j["repetitions"] = *t.repetitions;
  return j;
}

Json finding_json(const ReportFinding& f) {
  Json tried = Json::array();
  for (const ReportTried& t : f.tried) tried.push_back(tried_json(t));
  return {{"rule", f.rule},
          {"run", f.run},
          {"title", f.title},
          {"measured", opt(f.measured)},
          {"threshold", opt(f.threshold)},
          {"unit", f.unit},
          {"evidence", f.evidence},
          {"suggestion", f.suggestion},
          {"sets", f.sets},
          {"experiment", f.experiment},
          {"tried", std::move(tried)}};
}

Json warning_json(const InputWarning& w) {
  return {{"run", w.run},
          {"file", w.file},
          {"line", w.line > 0 ? Json(w.line) : Json()},
          {"message", w.message},
          {"text", w.text()}};
}

InputWarning read_warning(ObjectReader& o) {
  InputWarning w;
  w.run = o.text("run").value_or("");
  w.file = o.text("file").value_or("");
  w.line = o.integer("line").value_or(0);
  w.message = o.text("message").value_or("");
  o.text("text");  // written from the fields above
  return w;
}

// A row: every key is a column's cell, a string, a number or null.
std::map<std::string, ReportCell> read_cells(ObjectReader& o) {
  std::map<std::string, ReportCell> row;
  for (const auto& item : o.raw_object().items()) {
    const Json& v = *o.raw(item.key());
    ReportCell& cell = row[item.key()];
    if (v.is_string()) {
      cell.text = v.get<std::string>();
    } else if (v.is_number()) {
      cell.number = v.get<double>();
    } else if (!v.is_null()) {  // the key is a column's, from the file: shown escaped
      throw DataError(fmt::format("{}: {} is {}, not a string, a number or null", o.file(),
                                  printable(o.field(item.key())), printable_json(v, 60)));
    }
  }
  return row;
}

ReportTable read_report_table(ObjectReader& o, detail::DocContext& ctx) {
  ReportTable t;
  o.require("id");
  t.id = o.text("id").value_or("");
  t.title = o.text("title").value_or("");
  t.columns = object_list<ReportColumn>(o, ctx, "columns", [](ObjectReader& c) {
    return ReportColumn{c.text("key").value_or(""), c.text("title").value_or("")};
  });
  o.require("rows");
  t.rows = object_list<std::map<std::string, ReportCell>>(o, ctx, "rows", read_cells);
  t.notes = value_list<std::string>(o, "notes");
  t.source = o.text("source");
  return t;
}

ReportTried read_report_tried(ObjectReader& o) {
  ReportTried t;
  t.set = o.text("set").value_or("");
  t.text = o.text("text").value_or("");
  t.figure = o.text("figure").value_or("");
  t.steps = o.integer("steps").value_or(0);
  t.error = o.text("error").value_or("");
  t.time = o.text("time").value_or("");
  t.verdict = o.text("verdict");
  t.repetitions = o.integer("repetitions");
  t.ratio_of_medians = o.number("ratio_of_medians");
  t.ci_low = o.number("ci_low");
  t.ci_high = o.number("ci_high");
  return t;
}

ReportFinding read_finding(ObjectReader& o, detail::DocContext& ctx) {
  ReportFinding f;
  o.require("rule");
  f.rule = o.text("rule").value_or("");
  f.run = o.text("run").value_or("");
  f.title = o.text("title").value_or("");
  f.measured = o.number("measured");
  f.threshold = o.number("threshold");
  f.unit = o.text("unit").value_or("");
  f.evidence = o.text("evidence").value_or("");
  f.suggestion = o.text("suggestion").value_or("");
  f.sets = value_list<std::string>(o, "sets");
  f.experiment = o.boolean("experiment").value_or(false);
  f.tried = object_list<ReportTried>(o, ctx, "tried", read_report_tried);
  return f;
}

}  // namespace

std::string report_doc_text(const ReportDoc& d) {
  Json warnings = Json::array(), tables = Json::array(), findings = Json::array();
  for (const InputWarning& w : d.warnings) warnings.push_back(warning_json(w));
  for (const ReportTable& t : d.tables) tables.push_back(table_json(t));
  for (const ReportFinding& f : d.findings) findings.push_back(finding_json(f));
  Json j = {{"schema_version", kReportSchemaVersion},
            {"title", d.title},
            {"intro", d.intro},
            {"warnings", std::move(warnings)},
            {"incomplete_runs", d.incomplete_runs},
            {"tables", std::move(tables)},
            {"findings", std::move(findings)},
            {"footer", d.footer}};
  detail::put_unknown(j, d.unknown);
  return j.dump(2) + "\n";
}

ReportDoc parse_report_doc(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  ReportDoc d;
  detail::DocContext ctx{file, &d.unknown, nullptr};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kReportSchemaVersion);
  d.title = doc.text("title").value_or("");
  d.intro = value_list<std::string>(doc, "intro");
  d.warnings = object_list<InputWarning>(doc, ctx, "warnings", read_warning);
  d.incomplete_runs = value_list<std::string>(doc, "incomplete_runs");
  doc.require("tables");
  d.tables = object_list<ReportTable>(
      doc, ctx, "tables", [&ctx](ObjectReader& o) { return read_report_table(o, ctx); });
  doc.require("findings");
  d.findings = object_list<ReportFinding>(
      doc, ctx, "findings", [&ctx](ObjectReader& o) { return read_finding(o, ctx); });
  d.footer = value_list<std::string>(doc, "footer");
  doc.keep_unknown();
  return d;
}

std::string report_doc_fields_doc() {
  ReportDoc d;
  d.warnings.push_back(InputWarning{"run", "file", 3, "message"});
  ReportTable t;
  t.columns.push_back(ReportColumn{});
  t.rows.push_back({{"<column key>", ReportCell{1.5, std::nullopt}}});
  t.source = "runs/a/ops.csv";
  d.tables.push_back(t);
  ReportFinding f;
  f.measured = f.threshold = 1.5;
  ReportTried tried;
  tried.verdict = "faster";
  tried.repetitions = 3;
  tried.ratio_of_medians = tried.ci_low = tried.ci_high = 1.5;
  f.tried.push_back(tried);
  d.findings.push_back(f);
  const std::string heading = fmt::format(
      "# The report's JSON fields (schema_version {})\n\n"
      "`llmprof report --format json`. Generated from `rundir::ReportDoc` "
      "(include/llmprof/rundir/report_doc.h) through its writer; "
      "`tests/rundir/report_doc_test.cpp` checks that this file matches. Keys are written in this "
      "(sorted) order. A row holds one key per column (`columns[].key`): a number, a string, or "
      "null for an unknown figure. `tables[].source` is written when the table's figures come "
      "from named files; `findings[].tried[].repetitions` with a verdict. Read: "
      "`schema_version`, `tables` (each with `id` and `rows`) and `findings` (each with `rule`) "
      "are required.\n\n",
      kReportSchemaVersion);
  const Json none = Json::parse(report_doc_text(ReportDoc{}));
  return detail::field_table_page(heading, Json::parse(report_doc_text(d)), none);
}

}  // namespace llmprof::rundir
