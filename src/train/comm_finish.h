// The end of a data-parallel run on rank 0: the communication analysis of every rank's records
// (dist/comm_analysis.h), its tables at the top of the run directory and its summary figures.
// Private to src/train; torch-free.
#pragma once

#include <string>
#include <vector>

#include "llmprof/dist/comm_analysis.h"

namespace llmprof::train {

// Reads <top>/rank<k>/comm.csv and phases.csv for every rank of `clocks`, analyses them on rank
// 0's clock, writes <top>/clocks.csv, collectives.csv and comm_steps.csv and returns the summary
// (summary.json's distributed.comm, its note set).
// Throws DataError (a rank's file missing or malformed) or IoError.
dist::CommSummary analyse_run_comm(const std::string& top_dir,
                                   const std::vector<dist::RankClock>& clocks);

}  // namespace llmprof::train
