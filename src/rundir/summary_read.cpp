// summary.json's one reader: JSON to the typed sections. schema_version is the one
// first-version field every file must have; later fields absent get a note; fields this version
// does not know are kept for a rewrite.
#include <fmt/format.h>

#include <limits>

#include "read_util.h"
#include "summary_sections.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::ObjectReader;
using detail::read_section;

TimingFigures read_timing(ObjectReader& o) {
  TimingFigures t;
  t.step_ms = o.stats("step_ms");
  t.data_ms = o.stats("data_ms");
  t.forward_ms = o.stats("forward_ms");
  t.backward_ms = o.stats("backward_ms");
  t.optimizer_ms = o.stats("optimizer_ms");
  t.note = o.text("note").value_or("");
  t.phase_sum_median_ms = o.number("phase_sum_median_ms");
  t.unattributed_median_ms = o.number("unattributed_median_ms");
  return t;
}

FlopsFigures read_flops(ObjectReader& o) {
  FlopsFigures f;
  f.analytic_per_step = o.number("analytic_per_step");
  f.formula = o.text("formula").value_or("");
  f.achieved_flops_per_s = o.stats("achieved_flops_per_s");
  if (o.has("counted_matmul_per_step")) {
    CountedFlops c;
    c.matmul_per_step = o.number("counted_matmul_per_step");
    c.other_per_step = o.number("counted_other_per_step");
    c.vs_analytic_ratio = o.number("counted_vs_analytic_ratio");
    c.note = o.text("counted_note").value_or("");
    f.counted = c;
  }
  return f;
}

MfuFigures read_mfu(ObjectReader& o) {
  MfuFigures m;
  m.value = o.stats("value");
  m.peak_flops_per_s = o.number("peak_flops_per_s").value_or(0);
  m.peak_source = o.text("peak_source").value_or("");
  m.peak_method = o.text("peak_method").value_or("");
  m.warning = o.text("warning").value_or("");
  return m;
}

LossFigures read_loss(ObjectReader& o) {
  LossFigures l;
  l.task = o.text("task").value_or("");
  l.perplexity_note = o.text("perplexity_note").value_or("");
  l.final_train_step_loss = o.number("final_train_step_loss");
  if (o.has("eval_step")) {
    EvalLoss e;
    e.step = o.integer("eval_step").value_or(0);
    e.train_loss = o.number("final_train_loss");
    e.val_loss = o.number("final_val_loss");
    e.train_perplexity = o.number("final_train_perplexity");
    e.val_perplexity = o.number("final_val_perplexity");
    e.train_accuracy = o.number("final_train_accuracy");
    e.val_accuracy = o.number("final_val_accuracy");
    e.accuracy_note = o.text("accuracy_note").value_or("");
    l.eval = e;
  } else {
    // A file without eval_step may still carry the final losses (older hand-made files).
    const std::optional<double> val = o.number("final_val_loss");
    const std::optional<double> train = o.number("final_train_loss");
    const std::optional<double> ppl = o.number("final_val_perplexity");
    if (val || train || ppl) {
      l.eval = EvalLoss{};
      l.eval->val_loss = val;
      l.eval->train_loss = train;
      l.eval->val_perplexity = ppl;
    }
  }
  l.note = o.text("note").value_or("");
  return l;
}

StepCounts read_steps(ObjectReader& o) {
  StepCounts c;
  c.completed = o.integer("completed").value_or(0);
  c.max_steps = o.integer("max_steps").value_or(0);
  c.warmup_excluded = o.integer("warmup_excluded").value_or(0);
  c.measured = o.integer("measured").value_or(0);
  return c;
}

ProcessFigures read_process(ObjectReader& o) {
  ProcessFigures p;
  p.minor_faults_per_step = o.stats("minor_faults_per_step");
  p.involuntary_switches_per_step = o.stats("involuntary_switches_per_step");
  p.cpu_ms_per_step = o.stats("cpu_ms_per_step");
  return p;
}

// The name-table enum at key: null or absent -> nullopt; another name is a DataError.
template <typename E>
std::optional<E> name_field(ObjectReader& doc, const std::string& key) {
  const Json* v = doc.raw(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return parse_name<E>(v->is_string() ? v->get<std::string>() : llmprof::printable_json(*v),
                      doc.file(), key);
}

}  // namespace

const std::vector<std::string>& summary_keys() {
  static const std::vector<std::string> keys{
      "schema_version", "status",      "message",      "profile_level",
      "steps",          "wall_s",      "parameters",   "timing",
      "throughput",     "flops",       "mfu",          "loss",
      "memory",         "process",     "profiler_overhead",
      "modules",        "gpu",         "energy",       "distributed",
      "config_notes",   "data",        "model",        "resumed_from",
      "init_from",      "cuda_graphs", "plan",         "run_dir",
      "final_global_train_loss"};
  return keys;
}

Summary parse_summary(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  Summary s;
  detail::DocContext ctx{file, &s.unknown, &s.read_notes};
  ObjectReader doc(j, ctx, "");
  s.schema_version = detail::check_version(doc, kSummarySchemaVersion);
  s.status = name_field<config::RunStatus>(doc, "status");
  s.message = doc.text("message").value_or("");
  doc.later("profile_level");
  s.profile_level = name_field<config::ProfileLevel>(doc, "profile_level");
  s.steps = read_section<StepCounts>(doc, "steps", read_steps);
  s.wall_s = doc.number("wall_s").value_or(0);
  s.parameters = doc.integer("parameters");
  s.timing = read_section<TimingFigures>(doc, "timing", read_timing);
  s.throughput = read_section<ThroughputFigures>(doc, "throughput", [](ObjectReader& o) {
    return ThroughputFigures{o.stats("tokens_per_s"), o.stats("samples_per_s")};
  });
  s.flops = read_section<FlopsFigures>(doc, "flops", read_flops);
  s.mfu = read_section<MfuFigures>(doc, "mfu", read_mfu);
  s.loss = read_section<LossFigures>(doc, "loss", read_loss);
  if (std::optional<ObjectReader> m = doc.object("memory")) {
    s.peak_rss_bytes = m->integer("peak_rss_bytes");
    m->keep_unknown();
  }
  s.process = read_section<ProcessFigures>(doc, "process", read_process);
  s.overhead = detail::read_overhead(doc);
  s.modules = detail::read_modules(doc);
  s.gpu = detail::read_gpu(doc);
  s.energy = read_section<telemetry::EnergyFigures>(doc, "energy", detail::read_energy);
  s.distributed = read_section<DistributedFigures>(doc, "distributed", detail::read_distributed);
  if (const Json* notes = doc.raw("config_notes"); notes != nullptr && !notes->is_null()) {
    if (!notes->is_array()) doc.fail("config_notes", "an array of strings");
    for (const Json& n : *notes) {
      if (!n.is_string()) doc.fail("config_notes", "an array of strings");
      s.config_notes.push_back(n.get<std::string>());
    }
  }
  s.context = detail::read_context(doc);
  s.run_dir = doc.text("run_dir").value_or("");
  if (const Json* loss = doc.raw("final_global_train_loss"); loss != nullptr) {
    // null: the ranks' mean loss was NaN (a diverged run); kept so that it is written again.
    s.final_global_train_loss = doc.number("final_global_train_loss")
                                    .value_or(std::numeric_limits<double>::quiet_NaN());
  }
  doc.keep_unknown();
  return s;
}

}  // namespace llmprof::rundir
