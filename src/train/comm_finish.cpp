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
  const dist::CommAnalysis a = dist::analyse_comm(in);
  rundir::write_clocks(rundir::path(top_dir, rundir::kClocks), a.clocks);
  rundir::write_collectives(rundir::path(top_dir, rundir::kCollectives), a.collectives);
  rundir::write_comm_steps(rundir::path(top_dir, rundir::kCommSteps), a.steps);
  return a.summary;
}

nlohmann::json comm_summary_json(const dist::CommSummary& s) {
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  nlohmann::json straggler;  // null: one rank, or no collective
  if (s.straggler) {
    const dist::Straggler& g = *s.straggler;
    straggler = {
        {"rank", g.rank},
        {"last_launches", g.last_count},
        {"collectives", g.collectives},
        {"lag_ms", g.lag_ms},
        {"phase", g.phase ? nlohmann::json(std::string(rundir::span_phase_name(*g.phase)))
                          : nlohmann::json()},
        {"phase_excess_ms", g.phase ? nlohmann::json(g.phase_excess_ms) : nlohmann::json()}};
  }
  return {{"steps", s.steps},
          {"step_ms_median", opt(s.step_ms_median)},
          {"exposed_comm_ms_median", opt(s.exposed_comm_ms_median)},
          {"exposed_share", opt(s.exposed_share)},
          {"comm_ms_median", opt(s.comm_ms_median)},
          {"overlap", opt(s.overlap)},
          {"latency_ms_median", opt(s.latency_ms_median)},
          {"wait_ms_median", opt(s.wait_ms_median)},
          {"algbw_gb_per_s_median", opt(s.algbw_gb_per_s_median)},
          {"busbw_gb_per_s_median", opt(s.busbw_gb_per_s_median)},
          {"straggler", straggler},
          {"clock_residual_us_max", opt(s.clock_residual_us_max)},
          {"clock_drift_ns_per_s_max", opt(s.clock_drift_ns_per_s_max)},
          {"note",
           "steps after the first bucket layout, every rank; times on rank 0's clock "
           "(clocks.csv); tables: collectives.csv, comm_steps.csv"}};
}

}  // namespace llmprof::train
