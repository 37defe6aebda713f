// summary.json's section tables kept apart from the document's own (summary_doc.cpp): the
// profiler's sections, energy, distributed, and the run's context. Each is a field table
// (json_fields.h): every key written once, driving both the writer and the reader.
// Private to src/rundir.
#pragma once

#include "json_fields.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::rundir::detail {

const JsonFields<OverheadFigures>& overhead_fields();  // profiler_overhead
const JsonFields<ModulesFigures>& modules_fields();
const JsonFields<GpuFigures>& gpu_fields();
const JsonFields<telemetry::EnergyFigures>& summary_energy_fields();
const JsonFields<DistributedFigures>& distributed_fields();
// data, model, resumed_from, init_from, cuda_graphs, plan: written into the document itself.
const JsonFields<RunContext>& context_fields();

}  // namespace llmprof::rundir::detail
