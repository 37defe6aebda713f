// Compiled as a file of profile would be (Deps.IncludeInsideDepsCompiles): base, profile's own
// headers and those of its DEPS (config) are on its include path.
#include "llmprof/base/clock.h"
#include "llmprof/config/config.h"
#include "llmprof/error.h"
#include "llmprof/profile/phase.h"
#include "llmprof/version.h"

namespace llmprof::profile {

int64_t deps_probe_inside() { return now_ns(); }

}  // namespace llmprof::profile
