// Communication charts of a data-parallel run (its top directory: comm_steps.csv, collectives.csv
// and each rank's rank<k>/phases.csv): 13 the timeline of one step, every rank's phase spans
// (compute lane) and all-reduces (communication lane) on rank 0's clock; 14 each bucket's
// all-reduce split into the part hidden behind the rank's compute and the part exposed. Runs
// without these files (one process) get neither chart.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>

#include "chart.h"
#include "llmprof/rundir/comm_ranks.h"
#include "llmprof/rundir/files.h"

namespace fs = std::filesystem;

namespace llmprof::plot::detail {

namespace {

// ns to ms by division (exact for whole microseconds, unlike a product with 1e-6).
double ms_of(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// The step drawn: of the kept steps, the one whose rank-0 step time is the (lower) median.
std::optional<int64_t> median_step(const rundir::Run& run) {
  std::vector<std::pair<double, int64_t>> rank0;  // (step_ms, step), of the steady steps
  for (const auto* r : rundir::steady_steps(run.comm_steps)) {
    if (r->rank == 0) rank0.emplace_back(r->step_ms, r->step);
  }
  if (rank0.empty()) return std::nullopt;
  std::sort(rank0.begin(), rank0.end());
  return rank0[(rank0.size() - 1) / 2].second;
}

// One bar of the timeline: a lane (y) and an interval in ms from the step's earliest start.
struct Bar {
  int64_t rank = 0;
  double y = 0, start_ms = 0, end_ms = 0;
};

// The compute lane's series by step phase (profile::Phase), then backward's wait for its
// all-reduces (from the last bucket handed over to the span's end, as the analysis counts it: not
// compute), then the communication lane.
constexpr std::array<const char*, 6> kSeries = {
    "data",      "forward", "backward", "optimizer", "backward: waiting for the all-reduces",
    "all-reduce"};
constexpr std::array<const char*, 6> kColours = {"#9e9e9e", "#4c72b0", "#55a868",
                                                 "#dd8452", "#c8e6c9", "#c44e52"};
constexpr size_t kWait = 4;

// Lanes, top to bottom: rank 0 compute, rank 0 all-reduce, rank 1 compute, ...
double compute_lane(int64_t rank, int64_t ranks) { return 2.0 * (ranks - 1 - rank) + 1.25; }
double comm_lane(int64_t rank, int64_t ranks) { return 2.0 * (ranks - 1 - rank) + 0.5; }

// The bars of one step: each rank's phase spans shifted onto rank 0's clock (its first span
// starts at its comm_steps.csv start_aligned_ns), a backward split where its last bucket was
// handed over (rank<k>/comm.csv ready_ns; unsplit without that file), and the all-reduces of
// collectives.csv; times from the step's earliest start on any rank. missing: a rank's
// phases.csv that is absent.
// When the step's buckets were handed over to the all-reduce on a rank (its clock), from
// rank<k>/comm.csv; empty without the file.
std::vector<int64_t> ready_times(const std::string& rank_dir, int64_t step) {
  const std::string file = rundir::path(rank_dir, rundir::kComm);
  std::vector<int64_t> out;
  if (!fs::exists(file)) return out;
  for (const auto& c : rundir::read_comm(file)) {
    if (c.step == step) out.push_back(c.ready_ns);
  }
  return out;
}

struct Timeline {
  int64_t ranks = 0;
  std::array<std::vector<Bar>, kSeries.size()> bars;
  std::string missing;
};

Timeline timeline_of(const rundir::Run& run, int64_t step) {
  Timeline tl;
  std::map<int64_t, const rundir::CommStepRow*> rows;  // rank -> its row of the step
  for (const auto& r : run.comm_steps) {
    if (r.step == step) rows[r.rank] = &r;
  }
  tl.ranks = rows.rbegin()->first + 1;
  int64_t t0 = rows.begin()->second->start_aligned_ns;
  for (const auto& [rank, r] : rows) t0 = std::min(t0, r->start_aligned_ns);
  for (const auto& [rank, r] : rows) {
    const std::string rank_dir =
        rundir::path(run.dir, fmt::format("{}{}", rundir::kRankDirPrefix, rank));
    const std::string file = rundir::path(rank_dir, rundir::kPhaseSpans);
    if (!fs::exists(file)) {
      tl.missing = file;
      return tl;
    }
    std::vector<rundir::PhaseSpanRow> spans;
    for (const auto& s : rundir::read_phase_spans(file)) {
      if (s.step == step) spans.push_back(s);
    }
    if (spans.empty()) continue;
    int64_t lo = spans.front().start_ns;
    for (const auto& s : spans) lo = std::min(lo, s.start_ns);
    const int64_t shift = r->start_aligned_ns - lo - t0;
    const std::vector<int64_t> ready = ready_times(rank_dir, step);
    const double y = compute_lane(rank, tl.ranks);
    for (const auto& s : spans) {
      int64_t end = s.end_ns;
      if (s.phase == profile::Phase::kBackward) {
        int64_t last = -1;
        for (int64_t t : ready) {
          if (t >= s.start_ns && t <= s.end_ns) last = std::max(last, t);
        }
        if (last >= 0 && last < s.end_ns) {
          tl.bars[kWait].push_back({rank, y, ms_of(last + shift), ms_of(s.end_ns + shift)});
          end = last;
        }
      }
      tl.bars[static_cast<size_t>(s.phase)].push_back(
          {rank, y, ms_of(s.start_ns + shift), ms_of(end + shift)});
    }
  }
  for (const auto& c : run.collectives) {
    if (c.step != step || !c.end_aligned_ns) continue;
    tl.bars.back().push_back({c.rank, comm_lane(c.rank, tl.ranks), ms_of(c.launch_aligned_ns - t0),
                              ms_of(*c.end_aligned_ns - t0)});
  }
  return tl;
}

ChartResult timeline_chart(const rundir::Run& run, const std::string& name, const ChartWriter& w) {
  const std::optional<int64_t> step = median_step(run);
  if (!step) return skipped(name, "comm_steps.csv has no row of rank 0");
  const Timeline tl = timeline_of(run, *step);
  if (!tl.missing.empty()) return skipped(name, "no " + tl.missing);
  const int64_t ranks = tl.ranks;
  const auto& bars = tl.bars;
  // One block per series (gnuplot's `index`), each row a bar.
  std::string data;
  std::string plots;
  for (size_t s = 0; s < kSeries.size(); ++s) {
    data += fmt::format("# series {}: {}\n# rank lane_y start_ms end_ms\n", s, kSeries[s]);
    for (const Bar& b : bars[s]) {
      data += fmt::format("{} {} {} {}\n", b.rank, dat(b.y), dat(b.start_ms), dat(b.end_ms));
    }
    if (bars[s].empty()) data += "# (none)\n";
    data += "\n\n";
  }
  const std::string file = w.data(name + ".dat", data);
  for (size_t s = 0; s < kSeries.size(); ++s) {
    if (bars[s].empty()) continue;
    plots += fmt::format(
        "{}{} index {} using (($3+$4)/2):2:3:4:($2-0.3):($2+0.3) with boxxyerrorbars "
        "fs {} lc rgb '{}' title {}",
        plots.empty() ? "" : ", \\\n     ", gp_quote(file), s,
        s + 1 == kSeries.size() ? "transparent solid 0.6 border rgb '#7a1f22'"
                                : "solid 0.85 border rgb '#333333'",
        kColours[s], gp_quote(kSeries[s]));
  }
  std::string ytics;
  for (int64_t r = 0; r < ranks; ++r) {
    ytics += fmt::format("{}\"rank {} compute\" {}, \"rank {} all-reduce\" {}",
                         ytics.empty() ? "" : ", ", r, dat(compute_lane(r, ranks)), r,
                         dat(comm_lane(r, ranks)));
  }
  std::string body = fmt::format(
      "set title {}\n",
      gp_quote(fmt::format("One step on every rank, rank 0's clock: {} step {} (median step "
                           "time of rank 0)",
                           run.label, *step)));
  body += "set xlabel \"time since the step's earliest start on any rank (ms)\"\n";
  body += fmt::format("set ytics nomirror scale 0 ({})\n", ytics);
  body += fmt::format("set yrange [0:{}]\n", 2 * ranks);
  body += "set grid xtics lc rgb '#dddddd'\nset key below center horizontal\n";
  body += "plot " + plots + "\n";
  return w.render(name, body, 1100, 260 + 110 * static_cast<int>(ranks));
}

// Bucket label: its index and size.
std::string bucket_label(int64_t bucket, int64_t bytes) {
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  return mib >= 1 ? fmt::format("{} ({:.3g} MiB)", bucket, mib)
                  : fmt::format("{} ({:.3g} KiB)", bucket, static_cast<double>(bytes) / 1024.0);
}

ChartResult overlap_chart(const rundir::Run& run, const std::string& name, const ChartWriter& w) {
  // The steady steps (rundir's rule, decided by comm_steps.csv); the title says when some are left.
  const bool later = rundir::after_first_layout(run.comm_steps);
  struct Acc {
    int64_t bytes = 0, n = 0;
    double hidden = 0, exposed = 0;
  };
  std::map<int64_t, Acc> by_bucket;
  for (const rundir::CollectiveRow* steady :
       rundir::steady_steps(run.collectives, run.comm_steps)) {
    const rundir::CollectiveRow& c = *steady;
    if (!c.hidden_ms || !c.exposed_ms) continue;
    Acc& a = by_bucket[c.bucket];
    a.bytes = c.bytes;
    a.hidden += *c.hidden_ms;
    a.exposed += *c.exposed_ms;
    ++a.n;
  }
  if (by_bucket.empty()) {
    return skipped(name, "collectives.csv has no hidden_ms/exposed_ms (a run from before them)");
  }
  BarTable t;
  t.series = {"hidden behind compute", "exposed"};
  int64_t samples = 0;
  for (const auto& [bucket, a] : by_bucket) {
    t.rows.push_back(bucket_label(bucket, a.bytes));
    const double n = static_cast<double>(a.n);
    t.values.push_back({a.hidden / n, a.exposed / n});
    samples = std::max(samples, a.n);
  }
  const std::string title =
      fmt::format("All-reduce per bucket, hidden vs exposed: {} (mean of {} step x rank rows{})",
                  run.label, samples, later ? " after the first bucket layout" : "");
  return bar_chart(w, name, title, "bucket (index, size; 0 is ready first)",
                   "all-reduce time per step and rank (ms)", t, true);
}

}  // namespace

std::vector<ChartResult> comm_charts(const PlotInputs& in, const ChartWriter& w) {
  std::vector<const rundir::Run*> with;
  for (const auto& run : in.runs) {
    if (!run.comm_steps.empty() && !run.collectives.empty()) with.push_back(&run);
  }
  std::vector<ChartResult> out;
  for (size_t i = 0; i < with.size(); ++i) {
    const std::string suffix = with.size() == 1 ? "" : fmt::format("_{}", i + 1);
    out.push_back(timeline_chart(*with[i], "13_comm_timeline" + suffix, w));
    out.push_back(overlap_chart(*with[i], "14_comm_overlap" + suffix, w));
  }
  return out;
}

}  // namespace llmprof::plot::detail
