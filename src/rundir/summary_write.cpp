// summary.json's one writer: each typed section to its JSON object. Which keys a section writes
// (and which it leaves out) follows the figures, so a file read back rewrites byte-identical.
#include <nlohmann/json.hpp>

#include "summary_sections.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::opt;
using detail::stats_json;
using detail::text_or_null;

Json timing_json(const TimingFigures& t) {
  Json j = {{"step_ms", stats_json(t.step_ms)},       {"data_ms", stats_json(t.data_ms)},
            {"forward_ms", stats_json(t.forward_ms)}, {"backward_ms", stats_json(t.backward_ms)},
            {"optimizer_ms", stats_json(t.optimizer_ms)}};
  if (!t.note.empty()) j["note"] = t.note;
  if (t.phase_sum_median_ms) j["phase_sum_median_ms"] = *t.phase_sum_median_ms;
  if (t.unattributed_median_ms) j["unattributed_median_ms"] = *t.unattributed_median_ms;
  return j;
}

Json flops_json(const FlopsFigures& f) {
  Json j = {{"analytic_per_step", opt(f.analytic_per_step)},
            {"formula", f.formula},
            {"achieved_flops_per_s", stats_json(f.achieved_flops_per_s)}};
  if (f.counted) {
    j["counted_matmul_per_step"] = opt(f.counted->matmul_per_step);
    if (f.counted->matmul_per_step) {
      j["counted_other_per_step"] = opt(f.counted->other_per_step);
      j["counted_vs_analytic_ratio"] = opt(f.counted->vs_analytic_ratio);
    }
    if (!f.counted->note.empty()) j["counted_note"] = f.counted->note;
  }
  return j;
}

Json mfu_json(const MfuFigures& m) {
  Json j = {{"value", stats_json(m.value)},
            {"peak_flops_per_s", m.peak_flops_per_s},
            {"peak_source", m.peak_source},
            {"peak_method", m.peak_method}};
  if (!m.warning.empty()) j["warning"] = m.warning;
  return j;
}

Json loss_json(const LossFigures& l) {
  Json j = {{"task", l.task},
            {"perplexity_note", l.perplexity_note},
            {"final_train_step_loss", opt(l.final_train_step_loss)}};
  if (l.eval) {
    const EvalLoss& e = *l.eval;
    j["eval_step"] = e.step;
    j["final_train_loss"] = opt(e.train_loss);
    j["final_val_loss"] = opt(e.val_loss);
    j["final_train_perplexity"] = opt(e.train_perplexity);
    j["final_val_perplexity"] = opt(e.val_perplexity);
    j["final_train_accuracy"] = opt(e.train_accuracy);
    j["final_val_accuracy"] = opt(e.val_accuracy);
    if (!e.accuracy_note.empty()) j["accuracy_note"] = e.accuracy_note;
  } else {
    j["final_val_loss"] = nullptr;
  }
  if (!l.note.empty()) j["note"] = l.note;
  return j;
}

Json deep_json(const DeepOverhead& d) {
  return {{"events_per_step", d.events_per_step},
          {"scopes_per_step", d.scopes_per_step},
          {"ns_per_event", d.ns_per_event},
          {"ns_per_call_record_function", d.ns_per_call_record_function},
          {"record_function_ms_per_recorded_step", d.record_function_ms_per_recorded_step},
          {"record_function_fraction_of_recorded_step",
           opt(d.record_function_fraction_of_recorded_step)},
          {"untimed_events_per_step", d.untimed_events_per_step},
          {"ns_per_untimed_event", d.ns_per_untimed_event},
          {"untimed_events_observed_per_step", d.untimed_events_observed_per_step},
          {"hidden_calls_per_step", d.hidden_calls_per_step},
          {"ns_per_hidden_call", d.ns_per_hidden_call},
          {"memory_reports_per_step", d.memory_reports_per_step},
          {"ns_per_memory_report", d.ns_per_memory_report},
          {"ns_per_scope", d.ns_per_scope},
          {"ns_per_call_reading_shapes", d.ns_per_call_reading_shapes},
          {"shape_read_fraction", d.shape_read_fraction},
          {"estimated_ms_per_recorded_step", d.estimated_ms_per_recorded_step},
          {"estimated_fraction_of_recorded_step", opt(d.estimated_fraction_of_recorded_step)},
          {"post_processing_ms", d.post_processing_ms},
          {"estimated", true}};
}

Json overhead_json(const OverheadFigures& o) {
  Json j = {{"level", config::name(o.level)}, {"clock_read_ns", o.clock_read_ns}};
  if (o.events_per_step) {
    j["events_per_step"] = *o.events_per_step;
    j["estimated_ms_per_step"] = o.estimated_ms_per_step;
    j["estimated_fraction_of_step"] = opt(o.estimated_fraction_of_step);
  }
  j["estimated"] = true;
  if (o.deep) j["deep"] = deep_json(*o.deep);
  if (o.trace) {
    j["trace"] = {{"windows", o.trace->windows},
                  {"events", o.trace->events},
                  {"bytes", o.trace->bytes},
                  {"bytes_per_event", o.trace->bytes_per_event},
                  {"write_ms", o.trace->write_ms}};
  }
  return j;
}

Json modules_json(const ModulesFigures& m) {
  Json j = {{"recorded_steps", m.recorded_steps},
            {"windows", m.windows},
            {"forward_scopes_ms", m.forward_scopes_ms},
            {"forward_phase_ms", m.forward_phase_ms},
            {"forward_residual_fraction", opt(m.forward_residual_fraction)},
            {"backward_nodes_ms", m.backward_nodes_ms},
            {"backward_phase_ms", m.backward_phase_ms},
            {"backward_residual_fraction", opt(m.backward_residual_fraction)},
            {"dropped_events", m.dropped_events},
            {"dropped_scopes", m.dropped_scopes}};
  if (m.eval_passes_recorded) j["eval_passes_recorded"] = *m.eval_passes_recorded;
  if (m.shapes) {
    const ShapeFigures& s = *m.shapes;
    j["shapes"] = {{"read_steps", s.read_steps},
                   {"mapped_steps", s.mapped_steps},
                   {"unmapped_steps", s.unmapped_steps},
                   {"unconfirmed_steps", s.unconfirmed_steps},
                   {"read_every_step_after_a_change", s.read_every_step_after_a_change},
                   {"interval", s.interval}};
  }
  if (m.views) {
    const ViewFigures& v = *m.views;
    j["views"] = {{"hidden_calls", v.hidden_calls},
                  {"counted_from_read_steps", v.counted_from_read_steps},
                  {"mapped_steps", v.mapped_steps},
                  {"unconfirmed_steps", v.unconfirmed_steps},
                  {"lost_steps", v.lost_steps},
                  {"how", v.how}};
    if (!v.note.empty()) j["views"]["note"] = v.note;
  }
  return j;
}

Json gpu_json(const GpuFigures& g) {
  Json j = {{"records", g.records},
            {"dropped_records", g.dropped_records},
            {"incomplete_records", g.incomplete_records},
            {"unattributed_activities", g.unattributed_activities},
            {"kernel_ms_per_step", g.kernel_ms_per_step},
            {"memcpy_ms_per_step", g.memcpy_ms_per_step},
            {"memset_ms_per_step", g.memset_ms_per_step},
            {"kernels_window", g.kernels_window},
            {"launched_by_ops_ms_per_step", opt(g.launched_by_ops_ms_per_step)},
            {"outside_scopes_ms_per_step", opt(g.outside_scopes_ms_per_step)}};
  const GpuIdleFigures& i = g.idle;
  if (i.steps == 0) {
    j["idle"] = {{"steps", 0}, {"reason", i.reason}};
  } else {
    j["idle"] = {{"steps", i.steps},         {"window_ms", i.window_ms},
                 {"busy_ms", i.busy_ms},     {"idle_ms", i.idle_ms},
                 {"busy_fraction", opt(i.busy_fraction)}, {"host_bound_ms", i.host_bound_ms},
                 {"data_bound_ms", i.data_bound_ms},      {"sync_bound_ms", i.sync_bound_ms}};
  }
  return j;
}

}  // namespace

std::string summary_text(const Summary& s) {
  Json j;
  j["schema_version"] = kSummarySchemaVersion;
  j["status"] = s.status ? Json(std::string(config::name(*s.status))) : Json(nullptr);
  j["message"] = text_or_null(s.message);
  if (s.profile_level) j["profile_level"] = config::name(*s.profile_level);
  if (s.steps) {
    j["steps"] = {{"completed", s.steps->completed}, {"max_steps", s.steps->max_steps},
                  {"warmup_excluded", s.steps->warmup_excluded},
                  {"measured", s.steps->measured}};
  }
  j["wall_s"] = s.wall_s;
  j["parameters"] = opt(s.parameters);
  if (s.timing) j["timing"] = timing_json(*s.timing);
  if (s.throughput) {
    j["throughput"] = {{"tokens_per_s", stats_json(s.throughput->tokens_per_s)},
                       {"samples_per_s", stats_json(s.throughput->samples_per_s)}};
  }
  if (s.flops) j["flops"] = flops_json(*s.flops);
  if (s.mfu) j["mfu"] = mfu_json(*s.mfu);
  if (s.loss) j["loss"] = loss_json(*s.loss);
  j["memory"] = {{"peak_rss_bytes", opt(s.peak_rss_bytes)}};
  if (s.process) {
    j["process"] = {{"minor_faults_per_step", stats_json(s.process->minor_faults_per_step)},
                    {"involuntary_switches_per_step",
                     stats_json(s.process->involuntary_switches_per_step)},
                    {"cpu_ms_per_step", stats_json(s.process->cpu_ms_per_step)}};
  }
  if (s.overhead) j["profiler_overhead"] = overhead_json(*s.overhead);
  if (s.modules) j["modules"] = modules_json(*s.modules);
  if (s.gpu) j["gpu"] = gpu_json(*s.gpu);
  if (s.energy) j["energy"] = detail::energy_json(*s.energy);
  if (s.distributed) j["distributed"] = detail::distributed_json(*s.distributed);
  j["config_notes"] = s.config_notes;
  detail::put_context(j, s.context);
  if (!s.run_dir.empty()) j["run_dir"] = s.run_dir;
  if (s.final_global_train_loss) j["final_global_train_loss"] = *s.final_global_train_loss;
  detail::put_unknown(j, s.unknown);
  return j.dump(2) + "\n";
}

void write_summary(const std::string& path, const Summary& s) {
  output::write_file_atomic(path, summary_text(s));
}

std::optional<double> Summary::median_step_ms() const {
  if (!timing || !timing->step_ms) return std::nullopt;
  return timing->step_ms->median;
}

std::optional<double> Summary::median_tokens_per_s() const {
  if (!throughput || !throughput->tokens_per_s) return std::nullopt;
  return throughput->tokens_per_s->median;
}

std::optional<double> Summary::median_mfu() const {
  if (!mfu || !mfu->value) return std::nullopt;
  return mfu->value->median;
}

}  // namespace llmprof::rundir
