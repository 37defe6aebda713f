// summary.json's profiler sections: profiler_overhead (with the deep profile's own cost and the
// trace's), modules and gpu (profile.level=modules|ops), each a field table.
#include "json_forms.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/summary.h"
#include "summary_sections.h"

namespace llmprof::rundir::detail {

namespace {

const JsonFields<DeepOverhead>& deep_overhead_fields() {
  using D = DeepOverhead;
  static const JsonFields<D> f = {
      member("events_per_step", &D::events_per_step),
      member("scopes_per_step", &D::scopes_per_step),
      member("ns_per_event", &D::ns_per_event),
      member("ns_per_call_record_function", &D::ns_per_call_record_function),
      member("record_function_ms_per_recorded_step", &D::record_function_ms_per_recorded_step),
      member("record_function_fraction_of_recorded_step",
             &D::record_function_fraction_of_recorded_step),
      member("untimed_events_per_step", &D::untimed_events_per_step),
      member("ns_per_untimed_event", &D::ns_per_untimed_event),
      member("untimed_events_observed_per_step", &D::untimed_events_observed_per_step),
      member("hidden_calls_per_step", &D::hidden_calls_per_step),
      member("ns_per_hidden_call", &D::ns_per_hidden_call),
      member("memory_reports_per_step", &D::memory_reports_per_step),
      member("ns_per_memory_report", &D::ns_per_memory_report),
      member("ns_per_scope", &D::ns_per_scope),
      member("ns_per_call_reading_shapes", &D::ns_per_call_reading_shapes),
      member("shape_read_fraction", &D::shape_read_fraction),
      member("estimated_ms_per_recorded_step", &D::estimated_ms_per_recorded_step),
      member("estimated_fraction_of_recorded_step", &D::estimated_fraction_of_recorded_step),
      member("post_processing_ms", &D::post_processing_ms),
      fixed<D>("estimated", true)};
  return f;
}

const JsonFields<TraceCost>& trace_cost_fields() {
  using T = TraceCost;
  static const JsonFields<T> f = {
      member("windows", &T::windows), member("events", &T::events), member("bytes", &T::bytes),
      member("bytes_per_event", &T::bytes_per_event), member("write_ms", &T::write_ms)};
  return f;
}

// The profile level: a name of config::ProfileLevel's table (another text is a DataError).
JsonField<OverheadFigures> level_field() {
  return converted<OverheadFigures>(
      "level", Presence::kOptional,
      [](const OverheadFigures& o) { return Json(config::name(o.level)); },
      [](OverheadFigures& o, ObjectReader& r, DocContext&, const std::string& key) {
        if (const Json* level = r.raw(key); level != nullptr && level->is_string()) {
          o.level =
              parse_name<config::ProfileLevel>(level->get<std::string>(), r.file(), r.field(key));
        }
      });
}

const JsonFields<ShapeFigures>& shape_fields() {
  using S = ShapeFigures;
  static const JsonFields<S> f = {
      member("read_steps", &S::read_steps),
      member("mapped_steps", &S::mapped_steps),
      member("unmapped_steps", &S::unmapped_steps),
      member("unconfirmed_steps", &S::unconfirmed_steps),
      member("read_every_step_after_a_change", &S::read_every_step_after_a_change),
      member("interval", &S::interval)};
  return f;
}

const JsonFields<ViewFigures>& view_fields() {
  using V = ViewFigures;
  static const JsonFields<V> f = {member("hidden_calls", &V::hidden_calls),
                                  member("counted_from_read_steps", &V::counted_from_read_steps),
                                  member("mapped_steps", &V::mapped_steps),
                                  member("unconfirmed_steps", &V::unconfirmed_steps),
                                  member("lost_steps", &V::lost_steps),
                                  member("how", &V::how),
                                  text_if_set("note", &V::note)};
  return f;
}

// The idle figures of the recorded steps, or (no step) why there are none.
const JsonFields<GpuIdleFigures>& gpu_idle_fields() {
  using I = GpuIdleFigures;
  const auto none = [](const I& i) { return i.steps == 0; };
  const auto some = [](const I& i) { return i.steps != 0; };
  static const JsonFields<I> f = {member("steps", &I::steps),
                                  only_when(member("reason", &I::reason), none),
                                  only_when(member("window_ms", &I::window_ms), some),
                                  only_when(member("busy_ms", &I::busy_ms), some),
                                  only_when(member("idle_ms", &I::idle_ms), some),
                                  only_when(member("busy_fraction", &I::busy_fraction), some),
                                  only_when(member("host_bound_ms", &I::host_bound_ms), some),
                                  only_when(member("data_bound_ms", &I::data_bound_ms), some),
                                  only_when(member("sync_bound_ms", &I::sync_bound_ms), some)};
  return f;
}

}  // namespace

const JsonFields<OverheadFigures>& overhead_fields() {
  using O = OverheadFigures;
  // The estimates are written when a step ran.
  const auto stepped = [](const O& o) { return o.events_per_step.has_value(); };
  static const JsonFields<O> f = {
      level_field(),
      member("clock_read_ns", &O::clock_read_ns),
      member_if_set("events_per_step", &O::events_per_step),
      only_when(member("estimated_ms_per_step", &O::estimated_ms_per_step), stepped),
      only_when(member("estimated_fraction_of_step", &O::estimated_fraction_of_step), stepped),
      fixed<O>("estimated", true),
      section_if_set("deep", &O::deep, deep_overhead_fields()),
      section_if_set("trace", &O::trace, trace_cost_fields())};
  return f;
}

const JsonFields<ModulesFigures>& modules_fields() {
  using M = ModulesFigures;
  static const JsonFields<M> f = {
      member("recorded_steps", &M::recorded_steps),
      member("windows", &M::windows),
      member("forward_scopes_ms", &M::forward_scopes_ms),
      member("forward_phase_ms", &M::forward_phase_ms),
      member("forward_residual_fraction", &M::forward_residual_fraction),
      member("backward_nodes_ms", &M::backward_nodes_ms),
      member("backward_phase_ms", &M::backward_phase_ms),
      member("backward_residual_fraction", &M::backward_residual_fraction),
      member("dropped_events", &M::dropped_events),
      member("dropped_scopes", &M::dropped_scopes),
      member_if_set("eval_passes_recorded", &M::eval_passes_recorded),
      section_if_set("shapes", &M::shapes, shape_fields()),
      section_if_set("views", &M::views, view_fields())};
  return f;
}

const JsonFields<GpuFigures>& gpu_fields() {
  using G = GpuFigures;
  static const JsonFields<G> f = {
      member("records", &G::records),
      member("dropped_records", &G::dropped_records),
      member("incomplete_records", &G::incomplete_records),
      member("unattributed_activities", &G::unattributed_activities),
      member("kernel_ms_per_step", &G::kernel_ms_per_step),
      member("memcpy_ms_per_step", &G::memcpy_ms_per_step),
      member("memset_ms_per_step", &G::memset_ms_per_step),
      member("kernels_window", &G::kernels_window),
      member("launched_by_ops_ms_per_step", &G::launched_by_ops_ms_per_step),
      member("outside_scopes_ms_per_step", &G::outside_scopes_ms_per_step),
      object("idle", &G::idle, gpu_idle_fields())};
  return f;
}

}  // namespace llmprof::rundir::detail
