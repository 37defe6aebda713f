// docs/summary.md, generated from the Summary struct through its writer: a summary with every
// figure set and one with none are written, and each key's presence in the two says whether it
// is always there, null when unknown, or written only with its figure.
#include <fmt/format.h>

#include <string>

#include "json_doc.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::rundir {

namespace {

using detail::Json;

// Both forms of data (lm's corpus, the encoder tasks' files) at once, so the list has every key.
RunContext every_context() {
  RunContext c;
  DataFileFigures file{"text", "text", 1, 1, 1, {{1, "text"}}};
  c.data = DataFigures{CorpusFigures{"text", 1, 1, 1},
                       DatasetFigures{file, file, "", 1, 1, 1, 1, 1, 1, 1}};
  c.model = ModelFigures{"llama", GqaSummary{1, 1, 1, 1, 1, 1, 1, 1, 1., 1., 1., 1., "text"}};
  c.resumed_from = ResumeFigures{"text", 1};
  c.init_from = InitFromFigures{"text", "text", 1, 1, {"text"}, {"text"}};
  c.cuda_graphs = CudaGraphFigures{1, "text"};
  MemoryReconciliation& r = c.plan.emplace();
  r.measured_step = r.unmodelled_bytes = r.activations_per_block_bytes = 1;
  r.reason = r.peak_phase.measured = "text";
  r.components.push_back({"<component>", 1, 1, 1.0, false});
  return c;
}

Summary every_figure() {
  Summary s;
  s.status = config::RunStatus::kCompleted;
  s.message = "text";
  s.profile_level = config::ProfileLevel::kOps;
  s.steps = StepCounts{};
  s.parameters = 1;
  const Stats st{2, 1, 1, 1, 1, 1, 1, 0.5, 0.5};
  s.timing = TimingFigures{st, st, st, st, st, "text", 1.0, 1.0};
  s.throughput = ThroughputFigures{st, st};
  s.flops = FlopsFigures{1.0, "text", st, CountedFlops{1.0, 1.0, 1.0, "text"}};
  s.mfu = MfuFigures{st, 1, "text", "text", "text"};
  s.loss = LossFigures{"lm", "text", 1.0, EvalLoss{1, 1., 1., 1., 1., 1., 1., "text"}, "text"};
  s.peak_rss_bytes = 1;
  s.process = ProcessFigures{st, st, st};
  OverheadFigures& o = s.overhead.emplace();
  o.events_per_step = 1;
  o.estimated_fraction_of_step = 1;
  o.deep = DeepOverhead{};
  o.deep->record_function_fraction_of_recorded_step = 1;
  o.deep->estimated_fraction_of_recorded_step = 1;
  o.trace = TraceCost{};
  s.modules = ModulesFigures{};
  s.modules->forward_residual_fraction = s.modules->backward_residual_fraction = 1;
  s.modules->eval_passes_recorded = 1;
  s.modules->shapes = ShapeFigures{};
  s.modules->views = ViewFigures{0, 0, 0, 0, 0, "text", "text"};
  s.gpu = GpuFigures{};
  s.gpu->launched_by_ops_ms_per_step = s.gpu->outside_scopes_ms_per_step = 1;
  s.gpu->idle.steps = 1;
  s.gpu->idle.busy_fraction = 1;
  telemetry::EnergyFigures& e = s.energy.emplace();
  e.total_j = e.kwh = e.tokens_per_j = e.flops_per_j = e.mean_power_w = e.peak_power_w =
      e.co2_g = 1;
  e.sampler = telemetry::SamplerCost{1, 1, {{"text", "text"}}};
  e.domains.push_back({"text", "text", "text", "counter", false, false, 1., true, 1., 1., 1., 1.,
                       1., 1.});
  e.phases.emplace();
  (*e.phases)["<phase>"] = {1., 1., 1., false, 1};
  DistributedFigures& d = s.distributed.emplace();  // the merged run's form
  d.bucket_bytes = {1};
  d.rank0_comm_ms_first_step = d.rank0_comm_ms_per_step_median = 1;
  d.rank_dirs = {"rank0"};
  d.figures_scope = "text";
  d.ranks = {RankFigures{0, 1., 1., 1., 1., 1., 1., 1., 1.}};
  const CommStraggler straggler{1, 1, 1, 1., profile::Phase::kBackward, 1.};
  d.comm = CommFigures{1, 1, 1., 1., 1., 1., 1., 1., 1., 1., 1., straggler, 1., 1., 1., "text"};
  s.config_notes = {"text"};
  s.context = every_context();
  s.run_dir = "text";
  s.final_global_train_loss = 1;
  return s;
}

std::string type_of(const Json& v) {
  if (v.is_boolean()) return "bool";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

bool is_stats(const Json& v) { return v.is_object() && v.contains("median") && v.contains("p90"); }

}  // namespace

namespace detail {

void doc_field_rows(const Json& full, const Json* none, const std::string& path, std::string& out) {
  for (const auto& [key, value] : full.items()) {
    const std::string field = path.empty() ? key : path + "." + key;
    const Json* other = none != nullptr && none->is_object() && none->contains(key)
                            ? &(*none)[key]
                            : nullptr;
    const std::string when = other == nullptr      ? "with its figure"
                             : other->is_null()    ? "always; null when unknown"
                                                   : "always";
    if (is_stats(value)) {
      out += fmt::format("| `{}` | statistics | {} |\n", field, when);
    } else if (value.is_object() && !value.empty()) {
      out += fmt::format("| `{}` | object | {} |\n", field, when);
      doc_field_rows(value, other, field, out);
    } else if (value.is_array() && !value.empty() && value[0].is_object()) {
      out += fmt::format("| `{}` | array of objects | {} |\n", field, when);
      doc_field_rows(value[0], nullptr, field + "[]", out);
    } else {
      out += fmt::format("| `{}` | {} | {} |\n", field, type_of(value), when);
    }
  }
}

std::string field_table_page(std::string heading, const Json& full, const Json& none) {
  heading += "| field | type | present |\n|---|---|---|\n";
  doc_field_rows(full, &none, "", heading);
  return heading;
}

}  // namespace detail

std::string summary_fields_doc() {
  const Json full = Json::parse(summary_text(every_figure()));
  const Json none = Json::parse(summary_text(Summary{}));
  const std::string heading = fmt::format(
      "# summary.json fields (schema_version {})\n\n"
      "Generated from `rundir::Summary` (include/llmprof/rundir/summary.h) through its writer; "
      "`tests/rundir/summary_test.cpp` checks that this file matches. Keys are written in this "
      "(sorted) order. \"with its figure\": written only when the run has that figure (a "
      "deep profile, an eval, energy); \"null when unknown\": never 0 for an unknown figure. A "
      "statistics object is `n, mean, median, p10, p90, min, max, stddev, cv` over the measured "
      "steps (stddev and cv null below n = 2).\n\n"
      "`distributed` is shown in the merged run's form; a rank's own summary.json has `rank`, "
      "`world_size`, `top_dir` and `parameter_digest` there instead.\n\n"
      "`data` has `source`, `bytes`, `train_tokens` and `val_tokens` for lm, and the dataset "
      "files' keys for mlm and classify (`val_split` when there is no `val_file`). `plan` of a "
      "config the planner cannot plan is `{{\"predicted\": null, \"reason\": ...}}`. "
      "`run_dir` and `final_global_train_loss` are the merged data-parallel summary's.\n\n",
      kSummarySchemaVersion);
  return detail::field_table_page(heading, full, none);
}

}  // namespace llmprof::rundir
