// A run trained from a tune directory's tuned.yaml links back to its search. Private to
// src/report.
#pragma once

#include <string>

namespace llmprof::report {

// "<label>: trained from tuned.yaml of `llmprof tune`: DIR/tune.json (DIR/tune.md): <its
// conclusion>" when the run's env.json command line gave --config DIR/tuned.yaml and DIR holds
// tune.json; "" otherwise (no env.json, another config, a search no longer there).
std::string tuned_from_line(const std::string& run_dir, const std::string& label);

}  // namespace llmprof::report
