// The profile concern's names for the shared statistics (llmprof/base/stats.h).
#pragma once

#include "llmprof/base/stats.h"

namespace llmprof::profile {

using llmprof::median;
using llmprof::quantile_sorted;
using llmprof::summarize;
using llmprof::Summary;

}  // namespace llmprof::profile
