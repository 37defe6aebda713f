// Report reads runs and sweeps through rundir, the one reader of the run directory
// (llmprof/rundir/read.h); these names are that reader's types, as the report uses them.
#pragma once

#include "llmprof/rundir/read.h"

namespace llmprof::report {

using rundir::ActivationRow;
using rundir::EnergySummary;
using rundir::EvalRow;
using rundir::InputWarning;
using rundir::MemoryRow;
using rundir::ModuleRow;
using rundir::OpRow;
using rundir::PlanRow;
using rundir::RooflineColumns;
using rundir::Run;
using rundir::Sweep;
using rundir::SweepPoint;
using rundir::sweep_metric_names;

}  // namespace llmprof::report
