// The communication analysis (llmprof/dist/comm_analysis.h). Intervals are half-open [start, end)
// in integer nanoseconds, so the breakdown's parts add up to the step exactly before conversion.
#include "llmprof/dist/comm_analysis.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

#include "llmprof/base/stats.h"
#include "llmprof/rundir/comm_ranks.h"

namespace llmprof::dist {

namespace {

using profile::Phase;
using rundir::CommRow;
using rundir::PhaseSpanRow;
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

constexpr double kMsPerNs = 1e-6;

// Sorted, disjoint, non-empty intervals covering the same time.
Intervals normalized(Intervals v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](const auto& i) { return i.second <= i.first; }),
          v.end());
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& i : v) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

int64_t length(const Intervals& v) {
  int64_t n = 0;
  for (const auto& i : v) n += i.second - i.first;
  return n;
}

// Both normalized.
Intervals intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.emplace_back(lo, hi);
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return out;
}

Intervals united(const Intervals& a, const Intervals& b) {
  Intervals v = a;
  v.insert(v.end(), b.begin(), b.end());
  return normalized(std::move(v));
}

double ms(int64_t ns) { return static_cast<double>(ns) * kMsPerNs; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Clocks

ClockEstimate estimate_clock(const std::vector<PingSample>& samples) {
  if (samples.empty()) throw std::invalid_argument("estimate_clock: no ping-pong samples");
  const PingSample* best = &samples.front();
  for (const PingSample& s : samples) {
    if (s.t3_ns - s.t0_ns < best->t3_ns - best->t0_ns) best = &s;
  }
  // (t0 + t3) / 2 without overflow: t0 + (t3 - t0) / 2.
  const int64_t mid = best->t0_ns + (best->t3_ns - best->t0_ns) / 2;
  return {mid, best->peer_ns - mid, (best->t3_ns - best->t0_ns + 1) / 2,
          static_cast<int64_t>(samples.size())};
}

std::optional<double> RankClock::drift_uncertainty_ns_per_s() const {
  if (!end || end->at_ns == start.at_ns) return std::nullopt;
  return static_cast<double>(start.residual_ns + end->residual_ns) /
         (std::abs(static_cast<double>(end->at_ns - start.at_ns)) * 1e-9);
}

std::optional<double> RankClock::drift_ns_per_s() const {
  const std::optional<double> uncertainty = drift_uncertainty_ns_per_s();
  if (!uncertainty) return std::nullopt;
  const double drift = static_cast<double>(end->offset_ns - start.offset_ns) /
                       (static_cast<double>(end->at_ns - start.at_ns) * 1e-9);
  if (std::abs(drift) <= *uncertainty) return std::nullopt;  // below resolution
  return drift;
}

int64_t RankClock::to_rank0(int64_t local_ns) const {
  const std::optional<double> drift = drift_ns_per_s();
  if (!drift) return local_ns - start.offset_ns;
  const double since_s = static_cast<double>(local_ns - start.offset_ns - start.at_ns) * 1e-9;
  return local_ns - start.offset_ns - std::llround(*drift * since_s);
}

rundir::ClockRow RankClock::row() const {
  rundir::ClockRow r;
  r.rank = rank;
  r.rounds = start.rounds;
  r.start_at_ns = start.at_ns;
  r.start_offset_ns = start.offset_ns;
  r.start_residual_ns = start.residual_ns;
  if (end) {
    r.end_at_ns = end->at_ns;
    r.end_offset_ns = end->offset_ns;
    r.end_residual_ns = end->residual_ns;
  }
  r.drift_ns_per_s = drift_ns_per_s();
  r.drift_uncertainty_ns_per_s = drift_uncertainty_ns_per_s();
  return r;
}

// ---------------------------------------------------------------------------------------------
// One step on one rank

namespace {

// The compute of one step on one rank (its own clock): forward, optimizer, and backward up to its
// last bucket handed over (a synchronising backward's autograd ends there; the rest of the span
// waits for the all-reduces). Data loading is not compute. Normalized, inside the step's window.
Intervals compute_of(const std::vector<PhaseSpanRow>& spans,
                     const std::vector<CommRow>& comm,
                     int64_t* backward_compute_ns) {
  Intervals compute;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const PhaseSpanRow& s : spans) {
    lo = std::min(lo, s.start_ns);
    hi = std::max(hi, s.end_ns);
    if (s.phase == Phase::kData) continue;
    int64_t end = s.end_ns;
    if (s.phase == Phase::kBackward) {
      int64_t last_ready = -1;
      for (const CommRow& c : comm) {
        if (c.ready_ns >= s.start_ns && c.ready_ns <= s.end_ns) {
          last_ready = std::max(last_ready, c.ready_ns);
        }
      }
      if (last_ready >= 0) end = last_ready;
      if (backward_compute_ns != nullptr) *backward_compute_ns += end - s.start_ns;
    }
    compute.emplace_back(s.start_ns, end);
  }
  if (spans.empty()) return {};
  return intersect(normalized(std::move(compute)), Intervals{{lo, hi}});
}

}  // namespace

rundir::CommStepRow step_breakdown(const std::vector<PhaseSpanRow>& spans,
                                   const std::vector<CommRow>& comm) {
  rundir::CommStepRow row;
  if (spans.empty()) return row;
  row.step = spans.front().step;
  row.rank = spans.front().rank;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const PhaseSpanRow& s : spans) {
    lo = std::min(lo, s.start_ns);
    hi = std::max(hi, s.end_ns);
  }
  const Intervals window{{lo, hi}};
  Intervals phases, comm_iv;
  std::array<int64_t, profile::kNumPhases> phase_ns{};  // by phase; the step's four are written
  int64_t backward_compute_ns = 0;
  for (const PhaseSpanRow& s : spans) {
    phases.emplace_back(s.start_ns, s.end_ns);
    phase_ns[static_cast<size_t>(s.phase)] += s.end_ns - s.start_ns;
  }
  const Intervals compute = compute_of(spans, comm, &backward_compute_ns);
  for (const CommRow& c : comm) {
    if (c.end_ns) comm_iv.emplace_back(c.launch_ns, *c.end_ns);
  }
  phases = intersect(normalized(phases), window);
  comm_iv = intersect(normalized(comm_iv), window);
  const Intervals busy = united(compute, comm_iv);
  const int64_t hidden = length(intersect(comm_iv, compute));
  const int64_t other = length(phases) - length(intersect(phases, busy));
  const int64_t idle = (hi - lo) - length(united(busy, phases));
  row.step_ms = ms(hi - lo);
  row.compute_ms = ms(length(compute));
  row.comm_ms = ms(length(comm_iv));
  row.hidden_comm_ms = ms(hidden);
  row.exposed_comm_ms = ms(length(comm_iv) - hidden);
  row.other_ms = ms(other);
  row.idle_ms = ms(idle);
  if (length(comm_iv) > 0) {
    row.overlap = static_cast<double>(hidden) / static_cast<double>(length(comm_iv));
  }
  row.data_ms = ms(phase_ns[0]);
  row.forward_ms = ms(phase_ns[1]);
  row.backward_ms = ms(phase_ns[2]);
  row.backward_compute_ms = ms(backward_compute_ns);
  row.optimizer_ms = ms(phase_ns[3]);
  row.buckets = static_cast<int64_t>(comm.size());
  for (const CommRow& c : comm) row.first_layout = row.first_layout || c.first_layout;
  return row;
}

// ---------------------------------------------------------------------------------------------
// Collectives across ranks

namespace {

using Key = std::pair<int64_t, int64_t>;  // (step, bucket)

// Each rank's compute per step (its own clock), keyed (step, rank).
std::map<Key, Intervals> compute_by_step_rank(const CommInput& in) {
  std::map<Key, std::vector<PhaseSpanRow>> spans;
  std::map<Key, std::vector<CommRow>> comm;
  for (const PhaseSpanRow& s : in.spans) spans[{s.step, s.rank}].push_back(s);
  for (const CommRow& c : in.comm) comm[{c.step, c.rank}].push_back(c);
  std::map<Key, Intervals> out;
  for (const auto& [key, s] : spans) out[key] = compute_of(s, comm[key], nullptr);
  return out;
}

// Each collective's rows, one per rank, on rank 0's clock; hidden/exposed: the part of this
// rank's all-reduce under its compute, and the rest.
std::vector<rundir::CollectiveRow> collectives_of(const CommInput& in) {
  const int64_t n = static_cast<int64_t>(in.clocks.size());
  const std::map<Key, Intervals> compute = compute_by_step_rank(in);
  std::map<Key, std::vector<rundir::CollectiveRow>> by_key;
  for (const CommRow& c : in.comm) {
    if (c.rank < 0 || c.rank >= n) continue;
    const RankClock& clock = in.clocks[static_cast<size_t>(c.rank)];
    rundir::CollectiveRow r;
    r.step = c.step;
    r.bucket = c.bucket;
    r.rank = c.rank;
    r.first_layout = c.first_layout;
    r.bytes = c.bytes;
    r.elements = c.elements;
    r.dtype = c.dtype;
    r.world_size = n;
    r.launch_aligned_ns = clock.to_rank0(c.launch_ns);
    if (c.end_ns) {
      r.end_aligned_ns = clock.to_rank0(*c.end_ns);
      r.duration_ms = ms(*c.end_ns - c.launch_ns);  // one clock: no alignment error
      if (auto it = compute.find({c.step, c.rank}); it != compute.end()) {
        const int64_t hidden = length(intersect({{c.launch_ns, *c.end_ns}}, it->second));
        r.hidden_ms = ms(hidden);
        r.exposed_ms = ms(*c.end_ns - c.launch_ns - hidden);
      }
    }
    by_key[{c.step, c.bucket}].push_back(std::move(r));
  }
  std::vector<rundir::CollectiveRow> out;
  for (auto& [key, rows] : by_key) {
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.rank < b.rank; });
    const auto last = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.launch_aligned_ns < b.launch_aligned_ns;
    });
    std::optional<double> latency;
    for (const auto& r : rows) {
      if (r.duration_ms && (!latency || *r.duration_ms < *latency)) latency = r.duration_ms;
    }
    for (auto& r : rows) {
      r.last_rank = last->rank;
      r.wait_ms = ms(last->launch_aligned_ns - r.launch_aligned_ns);
      r.latency_ms = latency;
      if (latency && *latency > 0) {
        r.algbw_gb_per_s = static_cast<double>(r.bytes) / (*latency * 1e-3) * 1e-9;
        r.busbw_gb_per_s =
            *r.algbw_gb_per_s * 2.0 * static_cast<double>(n - 1) / static_cast<double>(n);
      }
      out.push_back(r);
    }
  }
  return out;
}

// The per-step rows of every rank, with the launch lag and last launches from the collectives.
std::vector<rundir::CommStepRow> steps_of(const CommInput& in,
                                          const std::vector<rundir::CollectiveRow>& coll) {
  std::map<Key, std::vector<PhaseSpanRow>> spans;  // (step, rank)
  std::map<Key, std::vector<CommRow>> comm;
  for (const PhaseSpanRow& s : in.spans) spans[{s.step, s.rank}].push_back(s);
  for (const CommRow& c : in.comm) comm[{c.step, c.rank}].push_back(c);
  std::map<Key, int64_t> earliest;  // (step, bucket) -> earliest aligned launch
  for (const auto& c : coll) {
    auto [it, fresh] = earliest.emplace(Key{c.step, c.bucket}, c.launch_aligned_ns);
    if (!fresh) it->second = std::min(it->second, c.launch_aligned_ns);
  }
  std::map<Key, std::pair<double, int64_t>> lag;  // (step, rank) -> (sum ms, count)
  std::map<Key, int64_t> lasts;
  for (const auto& c : coll) {
    auto& l = lag[{c.step, c.rank}];
    l.first += ms(c.launch_aligned_ns - earliest[{c.step, c.bucket}]);
    ++l.second;
    if (c.last_rank == c.rank) ++lasts[{c.step, c.rank}];
  }
  std::vector<rundir::CommStepRow> out;
  for (const auto& [key, s] : spans) {
    if (key.second < 0 || key.second >= static_cast<int64_t>(in.clocks.size())) continue;
    rundir::CommStepRow row = step_breakdown(s, comm[key]);
    int64_t lo = s.front().start_ns;
    for (const auto& span : s) lo = std::min(lo, span.start_ns);
    row.start_aligned_ns = in.clocks[static_cast<size_t>(key.second)].to_rank0(lo);
    if (auto it = lag.find(key); it != lag.end() && it->second.second > 0) {
      row.launch_lag_ms = it->second.first / static_cast<double>(it->second.second);
    }
    row.last_launches = lasts[key];
    out.push_back(row);
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The straggler and the summary

namespace {

// A phase's compute duration on one step row (backward without the wait for its all-reduces).
double phase_ms(const rundir::CommStepRow& r, Phase p) {
  switch (p) {
    case Phase::kData:
      return r.data_ms;
    case Phase::kForward:
      return r.forward_ms;
    case Phase::kBackward:
      return r.backward_compute_ms;
    case Phase::kOptimizer:
      return r.optimizer_ms;
    case Phase::kEval:  // not a step phase: never in phases.csv
      break;
  }
  return 0;
}

// Collectives' rows grouped by (step, bucket), of the steady steps (rundir's rule, decided by the
// steps' table).
std::map<Key, std::vector<const rundir::CollectiveRow*>> grouped(
    const std::vector<rundir::CollectiveRow>& coll, const std::vector<rundir::CommStepRow>& steps) {
  std::map<Key, std::vector<const rundir::CollectiveRow*>> g;
  for (const auto* c : rundir::steady_steps(coll, steps)) g[{c->step, c->bucket}].push_back(c);
  return g;
}

// Which phase the straggler's extra time is in: the median over steps of its phase time minus
// the other ranks' median, largest first.
void blame_phase(Straggler& s, const std::vector<rundir::CommStepRow>& steps) {
  std::map<int64_t, std::vector<const rundir::CommStepRow*>> by_step;
  for (const auto* r : rundir::steady_steps(steps)) by_step[r->step].push_back(r);
  for (int p = 0; p < profile::kNumStepPhases; ++p) {
    const auto phase = static_cast<Phase>(p);
    std::vector<double> excess;
    for (const auto& [step, rows] : by_step) {
      std::optional<double> mine;
      std::vector<double> others;
      for (const auto* r : rows) {
        if (r->rank == s.rank) {
          mine = phase_ms(*r, phase);
        } else {
          others.push_back(phase_ms(*r, phase));
        }
      }
      if (mine && !others.empty()) excess.push_back(*mine - *median(others));
    }
    const std::optional<double> m = median(excess);
    if (m && *m > 0 && (!s.phase || *m > s.phase_excess_ms)) {
      s.phase = phase;
      s.phase_excess_ms = *m;
    }
  }
}

// The straggler as rundir::straggler_rank defines it (the largest median launch lag over the
// steady steps), with how often it launched last and the phase its extra time is in.
std::optional<Straggler> straggler_of(int64_t n,
                                      const std::vector<rundir::CollectiveRow>& coll,
                                      const std::vector<rundir::CommStepRow>& steps) {
  const auto groups = grouped(coll, steps);
  if (n < 2 || groups.empty()) return std::nullopt;
  const std::vector<rundir::CommRankFigures> ranks = rundir::comm_rank_figures(steps);
  const std::optional<int64_t> rank = rundir::straggler_rank(ranks);
  if (!rank) return std::nullopt;
  Straggler s;
  s.rank = *rank;
  s.collectives = static_cast<int64_t>(groups.size());
  for (const auto& [key, rows] : groups) s.last_count += rows.front()->last_rank == s.rank;
  for (const auto& r : ranks) {
    if (r.rank == s.rank) s.lag_ms = r.launch_lag_ms.value_or(0.0);
  }
  blame_phase(s, steps);
  return s;
}

CommSummary summary_of(const CommAnalysis& a, int64_t n) {
  CommSummary m;
  m.world_size = n;
  std::vector<double> step_ms, exposed, comm, latency, wait, algbw, busbw;
  double hidden_sum = 0, comm_sum = 0;
  std::map<int64_t, bool> counted;
  for (const rundir::CommStepRow* steady : rundir::steady_steps(a.steps)) {
    const rundir::CommStepRow& r = *steady;
    counted[r.step] = true;
    step_ms.push_back(r.step_ms);
    exposed.push_back(r.exposed_comm_ms);
    comm.push_back(r.comm_ms);
    hidden_sum += r.hidden_comm_ms;
    comm_sum += r.comm_ms;
  }
  for (const auto& [key, rows] : grouped(a.collectives, a.steps)) {
    const auto* r = rows.front();
    if (r->latency_ms) latency.push_back(*r->latency_ms);
    if (r->algbw_gb_per_s) algbw.push_back(*r->algbw_gb_per_s);
    if (r->busbw_gb_per_s) busbw.push_back(*r->busbw_gb_per_s);
    for (const auto* x : rows) wait.push_back(x->wait_ms.value_or(0.0));
  }
  m.steps = static_cast<int64_t>(counted.size());
  m.step_ms_median = median(step_ms);
  m.exposed_comm_ms_median = median(exposed);
  if (m.step_ms_median && m.exposed_comm_ms_median && *m.step_ms_median > 0) {
    m.exposed_share = *m.exposed_comm_ms_median / *m.step_ms_median;
  }
  m.comm_ms_median = median(comm);
  if (comm_sum > 0) m.overlap = hidden_sum / comm_sum;
  m.latency_ms_median = median(latency);
  m.wait_ms_median = median(wait);
  m.algbw_gb_per_s_median = median(algbw);
  m.busbw_gb_per_s_median = median(busbw);
  m.straggler = straggler_of(n, a.collectives, a.steps);
  for (const auto& c : a.clocks) {
    if (c.rank == 0) continue;
    const double res_us =
        static_cast<double>(std::max(c.start_residual_ns, c.end_residual_ns.value_or(0))) * 1e-3;
    m.clock_residual_us_max = std::max(m.clock_residual_us_max.value_or(0.0), res_us);
    if (c.drift_ns_per_s) {
      m.clock_drift_ns_per_s_max =
          std::max(m.clock_drift_ns_per_s_max.value_or(0.0), std::abs(*c.drift_ns_per_s));
    }
    if (c.drift_uncertainty_ns_per_s) {
      m.clock_drift_uncertainty_ns_per_s_max = std::max(
          m.clock_drift_uncertainty_ns_per_s_max.value_or(0.0), *c.drift_uncertainty_ns_per_s);
    }
  }
  return m;
}

}  // namespace

CommAnalysis analyse_comm(const CommInput& input) {
  CommAnalysis a;
  const int64_t n = static_cast<int64_t>(input.clocks.size());
  for (const RankClock& c : input.clocks) a.clocks.push_back(c.row());
  a.collectives = collectives_of(input);
  a.steps = steps_of(input, a.collectives);
  a.summary = summary_of(a, n);
  return a;
}

}  // namespace llmprof::dist
