// summary.json's profiler sections read back: profiler_overhead (with the deep profile's own
// cost and the trace's), modules and gpu (profile.level=modules|ops).
#include "summary_sections.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::rundir::detail {

namespace {

DeepOverhead read_deep(ObjectReader& o) {
  DeepOverhead d;
  auto n = [&](const char* key) { return o.number(key).value_or(0); };
  d.events_per_step = n("events_per_step");
  d.scopes_per_step = n("scopes_per_step");
  d.ns_per_event = n("ns_per_event");
  d.ns_per_call_record_function = n("ns_per_call_record_function");
  d.record_function_ms_per_recorded_step = n("record_function_ms_per_recorded_step");
  d.record_function_fraction_of_recorded_step =
      o.number("record_function_fraction_of_recorded_step");
  d.untimed_events_per_step = n("untimed_events_per_step");
  d.ns_per_untimed_event = n("ns_per_untimed_event");
  d.untimed_events_observed_per_step = n("untimed_events_observed_per_step");
  d.hidden_calls_per_step = n("hidden_calls_per_step");
  d.ns_per_hidden_call = n("ns_per_hidden_call");
  d.memory_reports_per_step = n("memory_reports_per_step");
  d.ns_per_memory_report = n("ns_per_memory_report");
  d.ns_per_scope = n("ns_per_scope");
  d.ns_per_call_reading_shapes = n("ns_per_call_reading_shapes");
  d.shape_read_fraction = n("shape_read_fraction");
  d.estimated_ms_per_recorded_step = n("estimated_ms_per_recorded_step");
  d.estimated_fraction_of_recorded_step = o.number("estimated_fraction_of_recorded_step");
  d.post_processing_ms = n("post_processing_ms");
  o.boolean("estimated");  // always true: written, not kept
  o.keep_unknown();
  return d;
}

TraceCost read_trace(ObjectReader& o) {
  TraceCost t;
  t.windows = o.integer("windows").value_or(1);
  t.events = o.integer("events").value_or(0);
  t.bytes = o.integer("bytes").value_or(0);
  t.bytes_per_event = o.number("bytes_per_event").value_or(0);
  t.write_ms = o.number("write_ms").value_or(0);
  o.keep_unknown();
  return t;
}

ShapeFigures read_shapes(ObjectReader& o) {
  ShapeFigures s;
  s.read_steps = o.integer("read_steps").value_or(0);
  s.mapped_steps = o.integer("mapped_steps").value_or(0);
  s.unmapped_steps = o.integer("unmapped_steps").value_or(0);
  s.unconfirmed_steps = o.integer("unconfirmed_steps").value_or(0);
  s.read_every_step_after_a_change = o.boolean("read_every_step_after_a_change").value_or(false);
  s.interval = o.integer("interval").value_or(0);
  o.keep_unknown();
  return s;
}

ViewFigures read_views(ObjectReader& o) {
  ViewFigures v;
  v.hidden_calls = o.integer("hidden_calls").value_or(0);
  v.counted_from_read_steps = o.integer("counted_from_read_steps").value_or(0);
  v.mapped_steps = o.integer("mapped_steps").value_or(0);
  v.unconfirmed_steps = o.integer("unconfirmed_steps").value_or(0);
  v.lost_steps = o.integer("lost_steps").value_or(0);
  v.how = o.text("how").value_or("");
  v.note = o.text("note").value_or("");
  o.keep_unknown();
  return v;
}

GpuIdleFigures read_idle(ObjectReader& o) {
  GpuIdleFigures i;
  i.steps = o.integer("steps").value_or(0);
  i.reason = o.text("reason").value_or("");
  i.window_ms = o.number("window_ms").value_or(0);
  i.busy_ms = o.number("busy_ms").value_or(0);
  i.idle_ms = o.number("idle_ms").value_or(0);
  i.busy_fraction = o.number("busy_fraction");
  i.host_bound_ms = o.number("host_bound_ms").value_or(0);
  i.data_bound_ms = o.number("data_bound_ms").value_or(0);
  i.sync_bound_ms = o.number("sync_bound_ms").value_or(0);
  o.keep_unknown();
  return i;
}

}  // namespace

std::optional<OverheadFigures> read_overhead(ObjectReader& doc) {
  std::optional<ObjectReader> o = doc.object("profiler_overhead");
  if (!o) return std::nullopt;
  OverheadFigures f;
  if (const Json* level = o->raw("level"); level != nullptr && level->is_string()) {
    f.level = parse_name<config::ProfileLevel>(level->get<std::string>(), o->file(),
                                               "profiler_overhead.level");
  }
  f.clock_read_ns = o->number("clock_read_ns").value_or(0);
  f.events_per_step = o->number("events_per_step");
  f.estimated_ms_per_step = o->number("estimated_ms_per_step").value_or(0);
  f.estimated_fraction_of_step = o->number("estimated_fraction_of_step");
  o->boolean("estimated");
  if (std::optional<ObjectReader> d = o->object("deep")) f.deep = read_deep(*d);
  if (std::optional<ObjectReader> t = o->object("trace")) f.trace = read_trace(*t);
  o->keep_unknown();
  return f;
}

std::optional<ModulesFigures> read_modules(ObjectReader& doc) {
  std::optional<ObjectReader> o = doc.object("modules");
  if (!o) return std::nullopt;
  ModulesFigures m;
  m.recorded_steps = o->integer("recorded_steps").value_or(0);
  m.windows = o->integer("windows").value_or(0);
  m.forward_scopes_ms = o->number("forward_scopes_ms").value_or(0);
  m.forward_phase_ms = o->number("forward_phase_ms").value_or(0);
  m.forward_residual_fraction = o->number("forward_residual_fraction");
  m.backward_nodes_ms = o->number("backward_nodes_ms").value_or(0);
  m.backward_phase_ms = o->number("backward_phase_ms").value_or(0);
  m.backward_residual_fraction = o->number("backward_residual_fraction");
  m.dropped_events = o->integer("dropped_events").value_or(0);
  m.dropped_scopes = o->integer("dropped_scopes").value_or(0);
  m.eval_passes_recorded = o->integer("eval_passes_recorded");
  if (std::optional<ObjectReader> s = o->object("shapes")) m.shapes = read_shapes(*s);
  if (std::optional<ObjectReader> v = o->object("views")) m.views = read_views(*v);
  o->keep_unknown();
  return m;
}

std::optional<GpuFigures> read_gpu(ObjectReader& doc) {
  std::optional<ObjectReader> o = doc.object("gpu");
  if (!o) return std::nullopt;
  GpuFigures g;
  g.records = o->integer("records").value_or(0);
  g.dropped_records = o->integer("dropped_records").value_or(0);
  g.incomplete_records = o->integer("incomplete_records").value_or(0);
  g.unattributed_activities = o->integer("unattributed_activities").value_or(0);
  g.kernel_ms_per_step = o->number("kernel_ms_per_step").value_or(0);
  g.memcpy_ms_per_step = o->number("memcpy_ms_per_step").value_or(0);
  g.memset_ms_per_step = o->number("memset_ms_per_step").value_or(0);
  g.kernels_window = o->text("kernels_window").value_or("");
  g.launched_by_ops_ms_per_step = o->number("launched_by_ops_ms_per_step");
  g.outside_scopes_ms_per_step = o->number("outside_scopes_ms_per_step");
  if (std::optional<ObjectReader> i = o->object("idle")) g.idle = read_idle(*i);
  o->keep_unknown();
  return g;
}

}  // namespace llmprof::rundir::detail
