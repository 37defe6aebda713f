// Private to check: one gate between two readings, shared by both modes.
#pragma once

#include "llmprof/check/check.h"

namespace llmprof::check {

// Pass or fail against the gate's bound; reported for a timing figure; inconclusive when either
// reading is missing (the reason names which and why).
GateResult judge_pair(const Gate& g, const Reading& baseline, const Reading& candidate);

// A figure's value as the text and Markdown outputs show it: bytes in KiB/MiB/GiB with the exact
// count ("173.9 MiB (182321152 bytes)"), whole numbers in full ("124439808", not "1.2444e+08"),
// others to 6 significant digits; then the unit, if any.
std::string value_text(double v, const std::string& unit);

}  // namespace llmprof::check
