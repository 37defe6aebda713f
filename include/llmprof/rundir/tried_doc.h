// tried.json (`llmprof report --try RUN` writes it into the run directory) as one typed document:
// each suggested --set with the A/B figures of its repetitions and their comparison. report
// measures them through ab (report::TriedSet, llmprof/report/tried.h) and converts; rundir writes
// and reads the file. The figure and verdict are ab's names (ab sits above rundir: report turns
// them into ab's enums and refuses a name it does not know). Schema kTriedSchemaVersion
// (rundir/files.h); fields in docs/tried.md. Nullopt is JSON null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::rundir {

// The comparison of the two arms (ab::Comparison as written).
struct TriedComparison {
  std::string verdict;  // faster | slower | inconclusive
  int64_t pairs = 0;
  double baseline_median = 0, candidate_median = 0;
  double ratio_of_medians = 0;  // candidate / baseline
  double median_paired_ratio = 0;
  double confidence = 0;                  // the interval's achieved, e.g. 0.96875 at 6 pairs
  std::optional<double> ci_low, ci_high;  // null: too few pairs for an interval
};

// One --set tried against the run's own config.
struct TriedEntry {
  std::string set;                 // key=value
  std::vector<std::string> rules;  // the findings that suggested it
  std::string figure;              // median_step_ms | step_us_per_token | wall_us_per_token
  int64_t steps = 0;               // schedule.max_steps of each repetition
  std::vector<double> baseline, candidate;  // each round's figure, per arm
  std::string error, time, command;
  std::optional<TriedComparison> comparison;  // null (verdict null): not measured
  // Later fields: the rank processes each arm trained, and how they were started (none | nproc,
  // or the run's launcher a trial cannot start). Nullopt / "": a file from before them, whose
  // every trial trained one process.
  std::optional<int64_t> world_size;
  std::string launcher;

  // Read back, not written: this entry's fields this version does not know (JSON pointer within
  // the entry -> JSON text), kept with the entry when others are replaced.
  std::map<std::string, std::string> unknown;
};

struct TriedDoc {
  int schema_version = 0;  // as read; the writer writes kTriedSchemaVersion
  std::vector<TriedEntry> tried;

  // Read back, not written: top-level fields this version does not know.
  std::map<std::string, std::string> unknown;
};

// The document's text: keys in a fixed (sorted) order, two-space indent, a final newline.
std::string tried_doc_text(const TriedDoc& d);
// Writes path (temp + rename). Throws IoError.
void write_tried_doc(const std::string& path, const TriedDoc& d);
// Parses a tried.json text; errors name `file`: invalid JSON, a missing schema_version or tried,
// an entry without set, rules, figure, steps, baseline, candidate or verdict (or, with a verdict,
// one of the comparison's figures), a field of the wrong type, a newer schema_version.
TriedDoc parse_tried_doc(const std::string& text, const std::string& file);
// docs/tried.md: every field, its type and when it is written, from the writer.
std::string tried_doc_fields_doc();

}  // namespace llmprof::rundir
