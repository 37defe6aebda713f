// llmprof check's JSON verdict, one writer and one reader (include/llmprof/rundir/check_doc.h).
#include "llmprof/rundir/check_doc.h"

#include <fmt/format.h>

#include "doc_lists.h"
#include "json_doc.h"
#include "llmprof/rundir/files.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::ObjectReader;
using detail::opt;

Json gate_json(const CheckGate& g) {
  Json j{{"figure", g.figure},
         {"bound", g.bound},
         {"gate", g.gate},
         {"kind", g.kind},
         {"direction", g.direction},
         {"point", detail::text_or_null(g.point)},
         {"baseline", opt(g.baseline)},
         {"candidate", opt(g.candidate)},
         {"limit", opt(g.limit)},
         {"ratio", opt(g.ratio)},
         {"outcome", g.outcome},
         {"reason", g.reason},
         {"interval", nullptr}};
  if (const auto& i = g.interval) {
    j["interval"] = {{"low", i->low}, {"high", i->high}, {"confidence", i->confidence}};
  }
  return j;
}

CheckGate read_gate(ObjectReader& o) {
  for (const char* key : {"figure", "bound", "gate", "outcome"}) o.require(key);
  CheckGate g;
  g.figure = o.text("figure").value_or("");
  g.bound = o.text("bound").value_or("");
  g.gate = o.text("gate").value_or("");
  g.kind = o.text("kind").value_or("");
  g.direction = o.text("direction").value_or("");
  g.point = o.text("point").value_or("");
  g.baseline = o.number("baseline");
  g.candidate = o.number("candidate");
  g.limit = o.number("limit");
  g.ratio = o.number("ratio");
  g.outcome = o.text("outcome").value_or("");
  g.reason = o.text("reason").value_or("");
  g.interval = detail::read_section<CheckInterval>(o, "interval", [](ObjectReader& i) {
    return CheckInterval{i.number("low").value_or(0), i.number("high").value_or(0),
                         i.number("confidence").value_or(0)};
  });
  return g;
}

}  // namespace

std::string check_doc_text(const CheckDoc& d) {
  Json gates = Json::array();
  for (const CheckGate& g : d.gates) gates.push_back(gate_json(g));
  Json j{{"schema_version", kCheckSchemaVersion},
         {"mode", d.mode},
         {"baseline", d.baseline},
         {"candidate", d.candidate},
         {"rounds", opt(d.rounds)},
         {"verdict", d.verdict},
         {"exit_code", d.exit_code},
         {"command", d.command},
         {"gates", std::move(gates)}};
  detail::put_unknown(j, d.unknown);
  return j.dump(2) + "\n";
}

CheckDoc parse_check_doc(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  CheckDoc d;
  detail::DocContext ctx{file, &d.unknown, nullptr};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kCheckSchemaVersion);
  for (const char* key : {"mode", "verdict", "exit_code", "gates"}) doc.require(key);
  d.mode = doc.text("mode").value_or("");
  d.baseline = doc.text("baseline").value_or("");
  d.candidate = doc.text("candidate").value_or("");
  d.rounds = doc.integer("rounds");
  d.verdict = doc.text("verdict").value_or("");
  d.exit_code = static_cast<int>(doc.integer("exit_code").value_or(0));
  d.command = doc.text("command").value_or("");
  d.gates = detail::object_list<CheckGate>(doc, ctx, "gates", read_gate);
  doc.keep_unknown();
  return d;
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
