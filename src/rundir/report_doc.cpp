// The report JSON's one writer and one reader (include/llmprof/rundir/report_doc.h).
// schema_version, tables and findings are the fields every file must have; fields this version
// does not know are kept.
#include "llmprof/rundir/report_doc.h"

#include <fmt/format.h>

#include "doc_tables.h"
#include "json_fields.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::JsonFields;
using detail::member;
using detail::ObjectReader;
using detail::Presence;

Json cell_json(const ReportCell& c) {
  if (c.text) return *c.text;
  return detail::value_json(c.number);
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

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
const JsonFields<InputWarning>& warning_fields() {
  static const JsonFields<InputWarning> f = {
      member("run", &InputWarning::run), member("file", &InputWarning::file),
      // 0 (no line) is null.
      detail::converted<InputWarning>(
          "line", Presence::kOptional,
          [](const InputWarning& w) { return w.line > 0 ? Json(w.line) : Json(); },
          [](InputWarning& w, ObjectReader& o, DocContext&, const std::string& key) {
            w.line = o.integer(key).value_or(0);
          }),
      member("message", &InputWarning::message),
      // Written from the fields above: read only to check it is text.
      detail::converted<InputWarning>(
          "text", Presence::kOptional, [](const InputWarning& w) { return Json(w.text()); },
          [](InputWarning&, ObjectReader& o, DocContext&, const std::string& key) {
            o.text(key);
          })};
  return f;
}

const JsonFields<ReportColumn>& column_fields() {
  static const JsonFields<ReportColumn> f = {member("key", &ReportColumn::key),
                                             member("title", &ReportColumn::title)};
  return f;
}

const JsonFields<ReportTable>& table_fields() {
  static const JsonFields<ReportTable> f = {
      member("id", &ReportTable::id, Presence::kRequired), member("title", &ReportTable::title),
      detail::list("columns", &ReportTable::columns, column_fields()),
      // A row: one key per column.
      detail::converted<ReportTable>(
          "rows", Presence::kRequired,
          [](const ReportTable& t) {
            Json rows = Json::array();
            for (const auto& row : t.rows) {
              Json r = Json::object();
              for (const auto& [key, cell] : row) r[key] = cell_json(cell);
              rows.push_back(std::move(r));
            }
            return rows;
          },
          [](ReportTable& t, ObjectReader& o, DocContext& ctx, const std::string& key) {
            t.rows =
                detail::object_list<std::map<std::string, ReportCell>>(o, ctx, key, read_cells);
          }),
      member("notes", &ReportTable::notes), detail::member_if_set("source", &ReportTable::source)};
  return f;
}

const JsonFields<ReportTried>& report_tried_fields() {
  static const JsonFields<ReportTried> f = {
      member("set", &ReportTried::set),
      member("text", &ReportTried::text),
      member("figure", &ReportTried::figure),
      member("steps", &ReportTried::steps),
      member("error", &ReportTried::error),
      member("time", &ReportTried::time),
      member("verdict", &ReportTried::verdict),
      detail::member_if_set("repetitions", &ReportTried::repetitions),
      member("ratio_of_medians", &ReportTried::ratio_of_medians),
      member("ci_low", &ReportTried::ci_low),
      member("ci_high", &ReportTried::ci_high)};
  return f;
}

const JsonFields<ReportFinding>& finding_fields() {
  static const JsonFields<ReportFinding> f = {
      member("rule", &ReportFinding::rule, Presence::kRequired),
      member("run", &ReportFinding::run),
      member("title", &ReportFinding::title),
      member("measured", &ReportFinding::measured),
      member("threshold", &ReportFinding::threshold),
      member("unit", &ReportFinding::unit),
      member("evidence", &ReportFinding::evidence),
      member("suggestion", &ReportFinding::suggestion),
      member("sets", &ReportFinding::sets),
      member("experiment", &ReportFinding::experiment),
      detail::list("tried", &ReportFinding::tried, report_tried_fields())};
  return f;
}

}  // namespace

namespace detail {
const JsonFields<ReportDoc>& report_doc_fields() {
  static const JsonFields<ReportDoc> f = {
      member("title", &ReportDoc::title),
      member("intro", &ReportDoc::intro),
      list("warnings", &ReportDoc::warnings, warning_fields()),
      member("incomplete_runs", &ReportDoc::incomplete_runs),
      list("tables", &ReportDoc::tables, table_fields(), Presence::kRequired),
      list("findings", &ReportDoc::findings, finding_fields(), Presence::kRequired),
      member("footer", &ReportDoc::footer)};
  return f;
}
}  // namespace detail

std::string report_doc_text(const ReportDoc& d) {
  return detail::write_doc(d, kReportSchemaVersion, detail::report_doc_fields()).dump(2) + "\n";
}

ReportDoc parse_report_doc(const std::string& text, const std::string& file) {
  return detail::read_doc<ReportDoc>(text, file, kReportSchemaVersion, detail::report_doc_fields());
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
