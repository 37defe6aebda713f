// The sweep's process helpers, public since the A/B engine shares them: llmprof/sweep/process.h.
#pragma once

#include "llmprof/sweep/process.h"
