// Private to check: one gate between two readings, shared by both modes.
#pragma once

#include "llmprof/check/check.h"

namespace llmprof::check {

// Pass or fail against the gate's bound; reported for a timing figure; inconclusive when either
// reading is missing (the reason names which and why).
GateResult judge_pair(const Gate& g, const Reading& baseline, const Reading& candidate);

}  // namespace llmprof::check
