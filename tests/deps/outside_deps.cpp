// Compiled as a file of profile would be (Deps.IncludeOutsideDepsFailsToCompile): rundir is not
// among profile's DEPS (rundir sits above profile and writes its records), so its header is on no
// path this file sees and the compile stops there. The other headers are those of
// inside_deps.cpp, which compile.
#include "llmprof/base/clock.h"
#include "llmprof/config/config.h"
#include "llmprof/error.h"
#include "llmprof/profile/phase.h"
#include "llmprof/rundir/files.h"
#include "llmprof/version.h"

namespace llmprof::profile {

int64_t deps_probe_outside() { return now_ns(); }

}  // namespace llmprof::profile
