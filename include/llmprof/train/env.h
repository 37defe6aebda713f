// env.json: the context block of a run (google/benchmark's json_reporter): host, CPU, threads,
// LibTorch, the BLAS really loaded, llmprof version and git sha, runtime choices, start time.
#pragma once

#include <nlohmann/json.hpp>

#include "llmprof/train/calibrate.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/trainer.h"

namespace llmprof::train {

inline constexpr int kEnvSchemaVersion = 1;

nlohmann::json collect_env(const config::Config& cfg,
                           const RuntimeInfo& runtime,
                           const PeakFlops& peak,
                           const PeakBytes& bandwidth,
                           const TrainOptions& opts);

}  // namespace llmprof::train
