// The end of a data-parallel run on rank 0: the communication analysis of every rank's records
// (dist/comm_analysis.h), its tables at the top of the run directory and its summary figures.
// Private to src/dist; torch-free.
#pragma once

#include <string>
#include <vector>

#include "llmprof/dist/comm_analysis.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::dist {

// Reads <top>/rank<k>/comm.csv and phases.csv for every rank of `clocks`, analyses them on rank
// 0's clock, writes <top>/clocks.csv, collectives.csv and comm_steps.csv and returns the summary
// (summary.json's distributed.comm, its note set).
// Throws DataError (a rank's file missing or malformed) or IoError.
dist::CommSummary analyse_run_comm(const std::string& top_dir,
                                   const std::vector<dist::RankClock>& clocks);

// The top directory's steps.csv and eval.csv (the same columns as a rank's, each row the whole
// job's: rundir::merge_rank_steps; the evals are rank 0's, whose sums were all-reduced over every
// rank's rows) and the merged summary: rank 0's with the global timing, throughput, FLOPs, MFU
// and last-step loss, `distributed` (its comm analysis filled) with the scope of those figures and
// every rank's own, the straggler's first. samples_per_step: all ranks' samples in one step.
// Returns the merged summary as written. Throws DataError (a rank's file unreadable) or IoError.
rundir::Summary merge_top_dir(const std::string& top_dir,
                              int world_size,
                              double samples_per_step,
                              rundir::DistributedFigures distributed);

}  // namespace llmprof::dist
