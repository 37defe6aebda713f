// summary.json "distributed": a rank's own section and the merged run's, and the merged run's
// communication analysis (distributed.comm), each a field table.
#include <fmt/format.h>

#include <string>

#include "json_forms.h"
#include "summary_sections.h"

namespace llmprof::rundir::detail {

namespace {

const JsonFields<RankFigures>& rank_fields() {
  using R = RankFigures;
  static const JsonFields<R> f = {member("rank", &R::rank),
                                  member("step_ms_median", &R::step_ms),
                                  member("data_ms_median", &R::data_ms),
                                  member("forward_ms_median", &R::forward_ms),
                                  member("backward_ms_median", &R::backward_ms),
                                  member("optimizer_ms_median", &R::optimizer_ms),
                                  member("tokens_per_s_median", &R::tokens_per_s),
                                  member("mfu_median", &R::mfu),
                                  member("final_train_step_loss", &R::final_train_step_loss)};
  return f;
}

// The phase where the straggler's extra time went: null when no phase of it is longer.
JsonField<CommStraggler> straggler_phase_field() {
  return converted<CommStraggler>(
      "phase", Presence::kOptional,
      [](const CommStraggler& g) {
        return g.phase ? Json(std::string(profile::phase_name(*g.phase))) : Json();
      },
      [](CommStraggler& g, ObjectReader& o, DocContext&, const std::string& key) {
        if (const std::optional<std::string> phase = o.text(key)) {
          g.phase = parse_step_phase(*phase);
          if (!g.phase) o.fail(key, "data, forward, backward or optimizer");
        }
      });
}

// The phase's excess: null without a phase.
JsonField<CommStraggler> straggler_excess_field() {
  JsonField<CommStraggler> f = member("phase_excess_ms", &CommStraggler::phase_excess_ms);
  f.write = [](const CommStraggler& g) { return g.phase ? Json(g.phase_excess_ms) : Json(); };
  return f;
}

const JsonFields<CommStraggler>& straggler_fields() {
  using G = CommStraggler;
  static const JsonFields<G> f = {member("rank", &G::rank),
                                  member("last_launches", &G::last_count),
                                  member("collectives", &G::collectives),
                                  member("lag_ms", &G::lag_ms),
                                  straggler_phase_field(),
                                  straggler_excess_field()};
  return f;
}

// What a reader takes from the drift figures, in words: measured, below resolution, or unknown.
std::string clock_drift_text(const CommFigures& s) {
  if (s.clock_drift_ns_per_s_max) {
    return fmt::format("measured: up to {:.0f} ns/s (uncertainty up to {:.0f} ns/s)",
                       *s.clock_drift_ns_per_s_max,
                       s.clock_drift_uncertainty_ns_per_s_max.value_or(0.0));
  }
  if (s.clock_drift_uncertainty_ns_per_s_max) {
    return fmt::format(
        "below resolution: |drift| within the uncertainty of {:.0f} ns/s (the "
        "clock estimates' residuals over the time between them)",
        *s.clock_drift_uncertainty_ns_per_s_max);
  }
  return "unknown: no end-of-run clock estimate";
}

const JsonFields<CommFigures>& comm_fields() {
  using C = CommFigures;
  // Written where a second rank's clock was measured (a one-rank group has no drift to state,
  // and its files keep their form).
  const auto drift = [](const C& c) {
    return c.clock_drift_uncertainty_ns_per_s_max || c.clock_drift_ns_per_s_max;
  };
  static const JsonFields<C> f = {
      member("steps", &C::steps),
      member("step_ms_median", &C::step_ms_median),
      member("exposed_comm_ms_median", &C::exposed_comm_ms_median),
      member("exposed_share", &C::exposed_share),
      member("comm_ms_median", &C::comm_ms_median),
      member("overlap", &C::overlap),
      member("latency_ms_median", &C::latency_ms_median),
      member("wait_ms_median", &C::wait_ms_median),
      member("algbw_gb_per_s_median", &C::algbw_gb_per_s_median),
      member("busbw_gb_per_s_median", &C::busbw_gb_per_s_median),
      section("straggler", &C::straggler, straggler_fields()),  // null for one rank
      member("clock_residual_us_max", &C::clock_residual_us_max),
      member("clock_drift_ns_per_s_max", &C::clock_drift_ns_per_s_max),
      only_when(
          member("clock_drift_uncertainty_ns_per_s_max", &C::clock_drift_uncertainty_ns_per_s_max),
          drift),
      only_when(converted<C>(  // derived from the two above: read, not kept
                    "clock_drift", Presence::kOptional,
                    [](const C& c) { return Json(clock_drift_text(c)); },
                    [](C&, ObjectReader& o, DocContext&, const std::string& key) { o.text(key); }),
                drift),
      member("note", &C::note)};
  return f;
}

// Why there is no analysis: a rank's records could not be read ({"error": ...}).
const JsonFields<DistributedFigures>& comm_error_fields() {
  static const JsonFields<DistributedFigures> f = {
      member("error", &DistributedFigures::comm_error)};
  return f;
}

// The analysis, or why there is none.
JsonField<DistributedFigures> comm_field() {
  using D = DistributedFigures;
  return {"comm", Presence::kOptional,
          [](const D& d) {
            if (d.comm) return write_object(*d.comm, comm_fields());
            if (!d.comm_error.empty()) return write_object(d, comm_error_fields());
            return not_written();
          },
          [](D& d, ObjectReader& o, DocContext& ctx, const std::string& key) {
            std::optional<ObjectReader> c = o.object(key);
            if (!c) return;
            if (c->has(comm_error_fields().front().key)) {
              read_object(d, *c, ctx, comm_error_fields());
            } else {
              read_object(d.comm.emplace(), *c, ctx, comm_fields());
            }
            c->keep_unknown();
          },
          [] { return keys_of(comm_fields(), comm_error_fields()); }};
}

}  // namespace

const JsonFields<DistributedFigures>& distributed_fields() {
  using D = DistributedFigures;
  const auto own = [](const D& d) { return d.rank.has_value(); };  // a rank's own summary
  const auto merged = [](const D& d) { return !d.rank; };
  // The global figures' scope and each rank's own: written by a merge of several ranks.
  const auto several = [](const D& d) { return !d.rank && !d.ranks.empty(); };
  static const JsonFields<D> f = {
      member("world_size", &D::world_size),
      member_if_set("rank", &D::rank),
      only_when(member("top_dir", &D::top_dir), own),
      only_when(member("parameter_digest", &D::parameter_digest), own),
      only_when(member("backend", &D::backend), merged),
      only_when(member("launcher", &D::launcher), merged),
      only_when(member("overlap", &D::overlap), merged),
      only_when(member("bucket_mb", &D::bucket_mb), merged),
      only_when(member("first_bucket_mb", &D::first_bucket_mb), merged),
      only_when(
          converted<D>(  // the number of bucket_bytes: read, not kept
              "bucket_count", Presence::kOptional,
              [](const D& d) { return Json(d.bucket_bytes.size()); },
              [](D&, ObjectReader& o, DocContext&, const std::string& key) { o.integer(key); }),
          merged),
      only_when(member("bucket_bytes", &D::bucket_bytes), merged),
      only_when(member("bytes_per_step", &D::bytes_per_step), merged),
      only_when(member("rank0_comm_ms_first_step", &D::rank0_comm_ms_first_step), merged),
      only_when(member("rank0_comm_ms_per_step_median", &D::rank0_comm_ms_per_step_median), merged),
      only_when(member("comm_ms_note", &D::comm_ms_note), merged),
      only_when(member("times_note", &D::times_note), merged),
      only_when(member("rank_dirs", &D::rank_dirs), merged),
      only_when(member("figures_scope", &D::figures_scope), several),
      only_when(list("ranks", &D::ranks, rank_fields()), several),
      comm_field()};
  return f;
}

}  // namespace llmprof::rundir::detail
