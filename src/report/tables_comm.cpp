// The Communication section of a data-parallel run (its top directory's comm_steps.csv and
// collectives.csv): per-rank temporal breakdown, per-bucket all-reduce figures, the straggler
// table. Medians over the steps after the first bucket layout (all steps when there are none).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "llmprof/base/stats.h"
#include "llmprof/rundir/comm_ranks.h"
#include "tables.h"

namespace llmprof::report::detail {

namespace {

const char* kScope =
    "medians over the steps after the first bucket layout, times on rank 0's "
    "clock (clocks.csv)";

// Each rank's comm_steps.csv rows, the steps after the first bucket layout when there are any.
std::map<int64_t, std::vector<const rundir::CommStepRow*>> steps_by_rank(const Run& run) {
  std::map<int64_t, std::vector<const rundir::CommStepRow*>> by_rank;
  for (const auto* r : rundir::steady_steps(run.comm_steps)) by_rank[r->rank].push_back(r);
  return by_rank;
}

}  // namespace

std::optional<Table> comm_breakdown_table(const Run& run) {
  if (run.comm_steps.empty()) return std::nullopt;
  const auto by_rank = steps_by_rank(run);
  Table t;
  t.id = "comm_breakdown." + run.label;
  t.title = "Communication: temporal breakdown per rank (" + run.label + ")";
  t.columns = {{"rank", "rank"},
               {"step_ms", "step ms"},
               {"compute_ms", "compute ms"},
               {"exposed_comm_ms", "exposed comm ms"},
               {"other_ms", "other ms"},
               {"idle_ms", "idle ms"},
               {"comm_ms", "comm ms"},
               {"overlap", "overlap"},
               {"exposed_share", "exposed / step"}};
  for (const auto& [rank, rows] : by_rank) {
    const auto med = [&](double rundir::CommStepRow::*f) {
      std::vector<double> v;
      for (const auto* r : rows) v.push_back(r->*f);
      return median(v);
    };
    double hidden = 0, comm = 0;
    for (const auto* r : rows) {
      hidden += r->hidden_comm_ms;
      comm += r->comm_ms;
    }
    const auto step = med(&rundir::CommStepRow::step_ms);
    const auto exposed = med(&rundir::CommStepRow::exposed_comm_ms);
    t.rows.push_back(
        {count_cell(static_cast<double>(rank)), ms_cell(step),
         ms_cell(med(&rundir::CommStepRow::compute_ms)), ms_cell(exposed),
         ms_cell(med(&rundir::CommStepRow::other_ms)), ms_cell(med(&rundir::CommStepRow::idle_ms)),
         ms_cell(med(&rundir::CommStepRow::comm_ms)),
         percent_cell(comm > 0 ? std::optional<double>(hidden / comm) : std::nullopt),
         percent_cell(step && exposed && *step > 0 ? std::optional<double>(*exposed / *step)
                                                   : std::nullopt)});
  }
  t.notes = {std::string("compute + exposed comm + other + idle = the step (HTA's temporal "
                         "breakdown); overlap = communication hidden behind compute / all "
                         "communication; ") +
             kScope};
  return t;
}

// One row per bucket: its size, latency (shortest duration across ranks), the largest wait of a
// rank, bus bandwidth; against the all-reduce roof when the run's env.json has one.
std::optional<Table> comm_bucket_table(const Run& run) {
  if (run.collectives.empty()) return std::nullopt;
  struct Acc {
    double bytes = 0;
    std::vector<double> latency, wait, busbw;
  };
  std::map<int64_t, Acc> by_bucket;
  std::map<std::pair<int64_t, int64_t>, double> longest_wait;  // (step, bucket) -> ms
  for (const rundir::CollectiveRow* steady :
       rundir::steady_steps(run.collectives, run.comm_steps)) {
    const rundir::CollectiveRow& c = *steady;
    double& w = longest_wait[{c.step, c.bucket}];
    w = std::max(w, c.wait_ms.value_or(0.0));
    if (c.rank != 0) continue;  // the per-collective figures, once
    Acc& a = by_bucket[c.bucket];
    a.bytes = static_cast<double>(c.bytes);
    if (c.latency_ms) a.latency.push_back(*c.latency_ms);
    if (c.busbw_gb_per_s) a.busbw.push_back(*c.busbw_gb_per_s);
  }
  for (const auto& [key, w] : longest_wait) by_bucket[key.second].wait.push_back(w);
  Table t;
  t.id = "comm_buckets." + run.label;
  t.title = "Communication: all-reduce per bucket (" + run.label + ")";
  t.columns = {{"bucket", "bucket"},
               {"bytes", "bytes"},
               {"latency_ms", "latency ms"},
               {"wait_ms", "longest wait ms"},
               {"busbw_gb_per_s", "busbw GB/s"}};
  const std::optional<double> roof = run.peak_busbw_bytes_per_s;  // bytes/s
  if (roof) t.columns.push_back({"busbw_of_roof", "of roof"});
  for (const auto& [bucket, a] : by_bucket) {
    const std::optional<double> busbw = median(a.busbw);
    t.rows.push_back({count_cell(static_cast<double>(bucket)), bytes_cell(a.bytes),
                      ms_cell(median(a.latency)), ms_cell(median(a.wait)), number_cell(busbw)});
    if (roof) {
      t.rows.back().push_back(percent_cell(busbw && *roof > 0
                                               ? std::optional<double>(*busbw * 1e9 / *roof)
                                               : std::nullopt));
    }
  }
  t.notes = {
      std::string("latency = the shortest duration across ranks (without waiting for a "
                  "late rank); wait = latest launch - the rank's launch; busbw = bytes / "
                  "latency x 2(n-1)/n (nccl-tests); longest wait: of the rank that waited most; ") +
          kScope,
      roof ? fmt::format("roof: {} GB/s, the largest all-reduce bus bandwidth `llmprof peak "
                         "--comm` measured over message sizes (profile.peak_busbw_bytes_per_s)",
                         format_number(*roof / 1e9))
           : "no all-reduce roof in this run's inputs: `llmprof peak --comm` measures one (pass "
             "it as --set profile.peak_busbw_bytes_per_s=X)"};
  return t;
}

// Per rank: how often it launched an all-reduce last, its median launch lag behind the earliest
// rank, and its phases (median ms); the straggler (rundir::straggler_rank, as summary.json names
// it) first.
std::optional<Table> comm_straggler_table(const Run& run) {
  if (run.comm_steps.empty()) return std::nullopt;
  std::vector<rundir::CommRankFigures> ranks = rundir::comm_rank_figures(run.comm_steps);
  const std::optional<int64_t> straggler = rundir::straggler_rank(ranks);
  std::stable_partition(ranks.begin(), ranks.end(),
                        [&](const rundir::CommRankFigures& r) { return r.rank == straggler; });
  Table t;
  t.id = "comm_stragglers." + run.label;
  t.title = "Communication: who launches last (" + run.label + ")";
  t.columns = {{"rank", "rank"},
               {"straggler", "straggler"},
               {"last_share", "launched last"},
               {"launch_lag_ms", "launch lag ms"},
               {"data_ms", "data ms"},
               {"forward_ms", "forward ms"},
               {"backward_compute_ms", "backward compute ms"},
               {"optimizer_ms", "optimizer ms"}};
  for (const rundir::CommRankFigures& r : ranks) {
    t.rows.push_back(
        {count_cell(static_cast<double>(r.rank)), text_cell(r.rank == straggler ? "yes" : ""),
         percent_cell(r.launched_last_share), ms_cell(r.launch_lag_ms), ms_cell(r.data_ms),
         ms_cell(r.forward_ms), ms_cell(r.backward_compute_ms), ms_cell(r.optimizer_ms)});
  }
  t.notes = {std::string("launch lag: the rank's launch minus the earliest rank's, per bucket "
                         "(mean over the step's buckets); the straggler is the rank with the "
                         "largest median launch lag (summary.json distributed.comm.straggler); "
                         "backward compute: up to the last bucket handed to the all-reduce; ") +
             kScope};
  return t;
}

std::optional<Table> rank_figures_table(const Run& run) {
  if (run.rank_figures.empty()) return std::nullopt;
  Table t;
  t.id = "ranks." + run.label;
  t.title = fmt::format("Data-parallel: each of the {} ranks ({})", run.world_size, run.label);
  t.columns = {{"rank", "rank"},
               {"step_ms", "step ms"},
               {"data_ms", "data ms"},
               {"forward_ms", "forward ms"},
               {"backward_ms", "backward ms"},
               {"optimizer_ms", "optimizer ms"},
               {"tokens_per_s", "tokens/s"},
               {"mfu", "MFU"},
               {"final_train_step_loss", "last step loss"}};
  for (const rundir::RankFigures& r : run.rank_figures) {
    t.rows.push_back({count_cell(static_cast<double>(r.rank)), ms_cell(r.step_ms),
                      ms_cell(r.data_ms), ms_cell(r.forward_ms), ms_cell(r.backward_ms),
                      ms_cell(r.optimizer_ms), number_cell(r.tokens_per_s, 5), percent_cell(r.mfu),
                      number_cell(r.final_train_step_loss)});
  }
  t.notes = {fmt::format(
      "Each rank's own medians after warm-up (its rank<k>/summary.json), the straggler first. The "
      "run's summary and phase tables are global: per step, the slowest rank's step and phases; "
      "tokens/s and MFU are all {} ranks' tokens and FLOPs over that step (MFU against the sum of "
      "the ranks' peaks); train loss is the mean of the ranks'.",
      run.world_size)};
  return t;
}

}  // namespace llmprof::report::detail
