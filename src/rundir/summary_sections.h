// summary.json's sections kept apart from the document's writer and reader (energy, profiler,
// distributed, the run's context).
// Private to src/rundir.
#pragma once

#include <optional>

#include "json_doc.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::rundir::detail {

Json energy_json(const telemetry::EnergyFigures& e);
telemetry::EnergyFigures read_energy(ObjectReader& o);
// The section at its key of the document; nullopt when absent or null.
std::optional<OverheadFigures> read_overhead(ObjectReader& doc);
std::optional<ModulesFigures> read_modules(ObjectReader& doc);
std::optional<GpuFigures> read_gpu(ObjectReader& doc);
Json distributed_json(const DistributedFigures& d);
DistributedFigures read_distributed(ObjectReader& o);
// The context sections (data, model, resumed_from, init_from, cuda_graphs, plan) at their keys.
void put_context(Json& doc, const RunContext& c);
RunContext read_context(ObjectReader& doc);
Json comm_json(const CommFigures& c);
CommFigures read_comm(ObjectReader& o);

}  // namespace llmprof::rundir::detail
