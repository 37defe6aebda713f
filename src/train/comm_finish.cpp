// The communication analysis at the end of a data-parallel run (comm_finish.h).
#include "comm_finish.h"

#include <fmt/format.h>

#include "llmprof/rundir/files.h"

namespace llmprof::train {

dist::CommSummary analyse_run_comm(const std::string& top_dir,
                                   const std::vector<dist::RankClock>& clocks) {
  dist::CommInput in;
  in.clocks = clocks;
  for (size_t r = 0; r < clocks.size(); ++r) {
    const std::string dir = fmt::format("{}/{}{}", top_dir, rundir::kRankDirPrefix, r);
    for (auto& row : rundir::read_comm(rundir::path(dir, rundir::kComm))) {
      in.comm.push_back(std::move(row));
    }
    for (auto& row : rundir::read_phase_spans(rundir::path(dir, rundir::kPhaseSpans))) {
      in.spans.push_back(row);
    }
  }
  dist::CommAnalysis a = dist::analyse_comm(in);
  rundir::write_clocks(rundir::path(top_dir, rundir::kClocks), a.clocks);
  rundir::write_collectives(rundir::path(top_dir, rundir::kCollectives), a.collectives);
  rundir::write_comm_steps(rundir::path(top_dir, rundir::kCommSteps), a.steps);
  a.summary.note =
      "steps after the first bucket layout, every rank; times on rank 0's clock (clocks.csv); "
      "tables: collectives.csv, comm_steps.csv";
  return a.summary;
}

}  // namespace llmprof::train
