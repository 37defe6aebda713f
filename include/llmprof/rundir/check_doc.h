// `llmprof check --format json` as one typed document: the verdict of a candidate against a
// baseline, gate by gate. check judges (llmprof/check/check.h) and converts its CheckResult; rundir
// writes and reads the text. Enums are check's stable names (check sits above rundir). Schema
// kCheckSchemaVersion (rundir/files.h); fields in docs/check_json.md. Nullopt is JSON null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::rundir {

// A timing gate's interval of the median paired ratio and the confidence it achieves.
struct CheckInterval {
  double low = 0, high = 0;
  double confidence = 0;  // achieved, e.g. 0.96875 at 6 pairs
};

// One gate at one point.
struct CheckGate {
  std::string figure;     // step_ms, loss@20, ...
  std::string bound;      // max | min | within
  std::string gate;       // as written: "step_ms=+5%"
  std::string kind;       // timing | memory | loss | exact
  std::string direction;  // lower | higher
  std::string point;      // a sweep point's id; "" (null) for runs
  std::optional<double> baseline, candidate, limit, ratio;
  std::optional<CheckInterval> interval;  // repetitions' timing gates only
  std::string outcome;                    // pass | fail | inconclusive | reported
  std::string reason;
};

struct CheckDoc {
  int schema_version = 0;           // as read; the writer writes kCheckSchemaVersion
  std::string mode;                 // repetitions | directories
  std::string baseline, candidate;  // directories, or the two commands
  std::optional<int64_t> rounds;    // repetitions only
  std::string verdict;              // pass | regression | inconclusive
  int exit_code = 0;                // 0, 3 or 4: what `llmprof check` exits with
  std::string command;
  std::vector<CheckGate> gates;

  // Read back, not written: fields this version does not know.
  std::map<std::string, std::string> unknown;
};

// The document's text: keys in a fixed (sorted) order, two-space indent, a final newline.
std::string check_doc_text(const CheckDoc& d);
// Parses a check JSON text; errors name `file`: invalid JSON, a missing schema_version, mode,
// verdict, exit_code or gates, a gate without figure, bound, gate or outcome, a field of the
// wrong type, a newer schema_version.
CheckDoc parse_check_doc(const std::string& text, const std::string& file);
// docs/check_json.md: every field, its type and when it is written, from the writer.
std::string check_doc_fields_doc();

}  // namespace llmprof::rundir
