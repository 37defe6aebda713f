// env.json: the context block of a run (google/benchmark's json_reporter): host, CPU, threads,
// LibTorch, the BLAS really loaded, llmprof version and git sha, runtime choices, start time.
// Returns the figures; rundir writes them (include/llmprof/rundir/env.h).
#pragma once

#include "llmprof/device/peak.h"
#include "llmprof/rundir/env.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/trainer.h"

namespace llmprof::train {

// env.json's figures but energy (the Session adds its monitor's availability).
rundir::Env collect_env(const config::Config& cfg,
                        const RuntimeInfo& runtime,
                        const device::PeakFlops& peak,
                        const device::PeakBytes& bandwidth,
                        const TrainOptions& opts);

}  // namespace llmprof::train
