// Private to the tracer: the calibration of its own costs (TracerCalibration in
// llmprof/profile/tracer.h), measured when the first window starts.
#pragma once

#include <memory>

#include "llmprof/profile/tracer.h"

namespace llmprof::profile::detail {

class MemoryReporter;
struct ThreadBuffer;

// Times the tracer's callbacks, scopes and memory reports on cheap ops of this thread, whose
// buffer `main` (claimed, reserved) it pre-faults and leaves empty; `memory` is left with empty
// scope tables. Between steps: it registers callbacks and allocates.
TracerCalibration calibrate_tracer(ThreadBuffer& main,
                                   const std::shared_ptr<MemoryReporter>& memory,
                                   const TracerOptions& options);

}  // namespace llmprof::profile::detail
