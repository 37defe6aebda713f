// llmprof: profile any LibTorch training loop. The umbrella header of the public API:
//
//   #include <llmprof/llmprof.h>
//
//   llmprof::Config cfg = llmprof::load_config("profile.yaml");   // or llmprof::Config{} + fields
//   llmprof::apply_runtime(cfg);                 // threads, OpenMP OpenBLAS check, malloc set-up
//   llmprof::Session session(cfg, options);      // opens runs/<name>/
//   for (...) {
//     llmprof::Step step = session.step();
//     { auto p = step.phase(llmprof::Phase::kForward); LLMPROF_NAMED_SCOPE("encoder", -1); ... }
//     ...
//     step.end();
//     step.set_loss(loss.item<double>());
//   }
//   session.finish();
//
// The run directory is the same as `llmprof train` writes, so `llmprof report` and `llmprof plot`
// read it. Keys: profile.* (level, schedule, trace), energy.*, output.*, runtime.*, threads.
// Torch-free: include <torch/torch.h> yourself.
#pragma once

#include "llmprof/config/config.h"
#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/profile/phase.h"
#include "llmprof/profile/scope.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/session.h"

namespace llmprof {

using config::Config;
using config::load_config;
using config::TaskKind;
using profile::Phase;
using train::apply_runtime;
using train::EvalRecord;
using train::PhaseScope;
using train::RunStatus;
using train::RunSummary;
using train::RuntimeInfo;
using train::Session;
using train::SessionOptions;
using train::Step;

}  // namespace llmprof
