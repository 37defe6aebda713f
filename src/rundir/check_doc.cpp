// llmprof check's JSON verdict, one writer and one reader (include/llmprof/rundir/check_doc.h).
#include "llmprof/rundir/check_doc.h"

#include <fmt/format.h>

#include "doc_tables.h"
#include "json_fields.h"
#include "llmprof/rundir/files.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::Presence;

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
const detail::JsonFields<CheckInterval>& interval_fields() {
  static const detail::JsonFields<CheckInterval> f = {
      detail::member("low", &CheckInterval::low), detail::member("high", &CheckInterval::high),
      detail::member("confidence", &CheckInterval::confidence)};
  return f;
}

const detail::JsonFields<CheckGate>& gate_fields() {
  static const detail::JsonFields<CheckGate> f = {
      detail::member("figure", &CheckGate::figure, Presence::kRequired),
      detail::member("bound", &CheckGate::bound, Presence::kRequired),
      detail::member("gate", &CheckGate::gate, Presence::kRequired),
      detail::member("kind", &CheckGate::kind),
      detail::member("direction", &CheckGate::direction),
      detail::null_if_empty("point", &CheckGate::point),
      detail::member("baseline", &CheckGate::baseline),
      detail::member("candidate", &CheckGate::candidate),
      detail::member("limit", &CheckGate::limit),
      detail::member("ratio", &CheckGate::ratio),
      detail::member("outcome", &CheckGate::outcome, Presence::kRequired),
      detail::member("reason", &CheckGate::reason),
      detail::section("interval", &CheckGate::interval, interval_fields())};
  return f;
}

}  // namespace

namespace detail {
const JsonFields<CheckDoc>& check_doc_fields() {
  static const JsonFields<CheckDoc> f = {
      member("mode", &CheckDoc::mode, Presence::kRequired),
      member("baseline", &CheckDoc::baseline),
      member("candidate", &CheckDoc::candidate),
      member("rounds", &CheckDoc::rounds),
      member("verdict", &CheckDoc::verdict, Presence::kRequired),
      member("exit_code", &CheckDoc::exit_code, Presence::kRequired),
      member("command", &CheckDoc::command),
      list("gates", &CheckDoc::gates, gate_fields(), Presence::kRequired)};
  return f;
}
}  // namespace detail

std::string check_doc_text(const CheckDoc& d) {
  return detail::write_doc(d, kCheckSchemaVersion, detail::check_doc_fields()).dump(2) + "\n";
}

CheckDoc parse_check_doc(const std::string& text, const std::string& file) {
  return detail::read_doc<CheckDoc>(text, file, kCheckSchemaVersion, detail::check_doc_fields());
}

std::string check_doc_fields_doc() {
  CheckDoc d;
  d.rounds = 1;
  CheckGate g;
  g.point = "text";
  g.baseline = g.candidate = g.limit = g.ratio = 1.5;
  g.interval = CheckInterval{1.5, 1.5, 1.5};
  d.gates.push_back(g);
  const std::string heading = fmt::format(
      "# llmprof check JSON fields (schema_version {})\n\n"
      "What `llmprof check --format json` prints (or writes with `--out`). Generated from "
      "`rundir::CheckDoc` (include/llmprof/rundir/check_doc.h) through its writer; "
      "`tests/rundir/check_doc_test.cpp` checks that this file matches. Keys are written in this "
      "(sorted) order. `rounds` is null between two directories; a gate's `point` is null for "
      "runs; `interval` is written for the timing gates of `--ab` (null below 6 pairs), its "
      "`confidence` the one the order-statistic interval achieves. Read: `schema_version`, "
      "`mode`, `verdict`, `exit_code`, `gates` and each gate's `figure`, `bound`, `gate` and "
      "`outcome` are required.\n\n",
      kCheckSchemaVersion);
  const Json none = Json::parse(check_doc_text(CheckDoc{}));
  return detail::field_table_page(heading, Json::parse(check_doc_text(d)), none);
}

}  // namespace llmprof::rundir
