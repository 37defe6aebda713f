// summary.json's sections kept apart from the document's writer and reader (energy, profiler).
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

}  // namespace llmprof::rundir::detail
