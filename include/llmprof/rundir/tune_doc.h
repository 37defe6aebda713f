// tune.json (`llmprof tune` writes it into its tune directory) as one typed document: the
// search's inputs, the knobs with their predicted effect and its source, and every candidate with
// its --sets, planned memory, outcome, repetitions, comparison against the starting config, loss
// difference and time spent. It is rewritten (temp + rename) after every repetition, so a search
// stopped by Ctrl-C or a kill resumes from it without measuring anything twice. tune (which sits
// above rundir) fills it; names of figures and verdicts are ab's. Schema kTuneSchemaVersion
// (rundir/files.h); fields in docs/tune.md. Nullopt is JSON null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::rundir {

// What a search was asked: a tune directory resumes only a search of the same inputs.
struct TuneInputs {
  std::string config_path;
  std::string config_text;         // the config file's text, as read when the search started
  std::vector<std::string> sets;   // --set, common to every candidate and kept in tuned.yaml
  std::vector<std::string> space;  // --space KEY=V1,V2 as given; empty: generated
  std::string objective;           // tokens_per_s | step_ms | energy_per_token
  std::string figure;              // ab's figure the objective is measured by
  int64_t steps = 0;               // schedule.max_steps of each repetition (loss@steps)
  bool keep_numerics = false;
  double loss_tolerance = 0;  // relative, at loss@steps
  std::string device;         // the planner's device
  int64_t nproc = 1;          // rank processes per repetition
  bool operator==(const TuneInputs& o) const;
};

// One knob of the space: a key (or a pair, batch with accumulation) and its values.
struct TuneKnob {
  std::string key;
  std::vector<std::string> values;        // each value's --sets joined by a space
  std::string numerics;                   // kept | changed
  std::optional<double> predicted_ratio;  // predicted time of the best value / the start's
  std::string prediction_source;          // plan: ... | prior: ... | none: ...
};

// One finished repetition of a candidate's A/B against the starting config.
struct TuneRepetition {
  std::string arm;  // baseline | candidate
  int64_t round = 0;
  double figure = 0;           // the inputs' figure (a time or energy per token: lower is better)
  std::optional<double> loss;  // the repetition's last train-step loss (loss@steps)
  double seconds = 0;          // wall time of the repetition, start-up included
  std::string log;             // its log file
  // The rank processes its run directory showed (rank0/, rank1/, ...); null: not recorded.
  std::optional<int64_t> ranks;
};

struct TuneCandidate {
  int64_t id = 0;                 // 1, 2, ... in the order of predicted effect
  std::vector<std::string> sets;  // key=value on top of the inputs' sets
  std::string numerics;           // kept | changed
  std::optional<double> predicted_ratio;
  std::string prediction_source;
  // The planner's verdict: null when it cannot plan this config (plan_note says why).
  std::optional<int64_t> planned_peak_bytes;
  std::optional<bool> planned_fits;
  std::string plan_note;
  // pending | measured | dropped | winner | does_not_fit | out_of_memory | failed | unmeasured
  std::string outcome;
  std::string reason;                       // why dropped, failed, unmeasured or not the winner
  std::vector<TuneRepetition> repetitions;  // in the order they ran
  // The A/B over complete rounds (ab::Comparison): candidate figure / baseline figure.
  int64_t rounds = 0;
  std::optional<double> baseline_median, candidate_median, ratio, ci_low, ci_high;
  std::string verdict;                    // faster | slower | inconclusive; "" not measured
  std::optional<double> loss_difference;  // median over rounds of loss_c / loss_b - 1
  std::optional<bool> loss_within_tolerance;
  double seconds = 0;  // the repetitions' wall time, both arms
};

struct TuneDoc {
  int schema_version = 0;  // as read; the writer writes kTuneSchemaVersion
  TuneInputs inputs;
  double budget_s = 0;
  std::vector<TuneKnob> knobs;
  std::vector<TuneCandidate> candidates;
  // running | finished | budget_spent | interrupted | plan_only
  std::string status;
  std::optional<int64_t> winner;  // a candidate's id; null: the starting config stays
  std::string conclusion;         // one line: the answer and why
  std::string planner_check;      // the planner's verdicts against the outcomes
  double seconds_spent = 0;       // every repetition's wall time, sessions together
  std::vector<std::string> notes;

  // Read back, not written: top-level fields this version does not know.
  std::map<std::string, std::string> unknown;
};

// The document's text: keys in a fixed (sorted) order, two-space indent, a final newline.
std::string tune_doc_text(const TuneDoc& d);
// Writes path (temp + rename). Throws IoError.
void write_tune_doc(const std::string& path, const TuneDoc& d);
// Parses a tune.json text; errors name `file`: invalid JSON, a missing schema_version, inputs or
// candidates, a field of the wrong type, a newer schema_version.
TuneDoc parse_tune_doc(const std::string& text, const std::string& file);
// Reads path. Throws IoError when unreadable, DataError as parse_tune_doc.
TuneDoc read_tune_doc(const std::string& path);
// docs/tune.md: every field, its type and when it is written, from the writer.
std::string tune_doc_fields_doc();

}  // namespace llmprof::rundir
