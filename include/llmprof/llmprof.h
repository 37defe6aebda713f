// llmprof: profile any LibTorch training loop. The umbrella header of the public API:
//
//   #include <llmprof/llmprof.h>
//
//   llmprof::Config cfg = llmprof::load_config("profile.yaml");   // or llmprof::Config{} + fields
//   llmprof::check_device(cfg);                  // cpu, or a CUDA device this build and host have
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
//   // model.pt, checkpoint.json and config.yaml in dir; load_checkpoint reads them back:
//   llmprof::save_checkpoint(dir, model, cfg, llmprof::TaskKind::kLm, step);
//
// The run directory is the same as `llmprof train` writes, so `llmprof report` and `llmprof plot`
// read it. Keys: profile.* (level, schedule, trace), energy.*, output.*, runtime.*, threads.
// Torch-free: include <torch/torch.h> yourself.
#pragma once

#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/device.h"
#include "llmprof/error.h"
#include "llmprof/profile/phase.h"
#include "llmprof/profile/scope.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/session.h"

namespace llmprof {

using checkpoint::load_checkpoint;
using checkpoint::save_checkpoint;
using config::Config;
using config::load_config;
using config::TaskKind;
using device::check_device;
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
