// Each JSON document driven by a field table (src/rundir/json_fields.h): what its writer writes is
// what its reader reads. A document with every figure set is written; its keys, nested ones too,
// are the table's (a field with a conversion of its own, a map, may hold keys of its own below
// it); read back, nothing is left unknown, and it rewrites byte-identical.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "doc_tables.h"
#include "sweep_doc_json.h"

namespace llmprof::rundir {
namespace {

using detail::Json;

// Whether key lies below a table key that has no keys of its own in the table (a map's names).
bool under_open_field(const std::string& key, const std::set<std::string>& table) {
  for (const std::string& t : table) {
    const auto below = [&t](const std::string& k) {
      return k.rfind(t + ".", 0) == 0 || k.rfind(t + "[]", 0) == 0;
    };
    if (!below(key)) continue;
    bool has_inner = false;
    for (const std::string& u : table) has_inner = has_inner || below(u);
    if (!has_inner) return true;
  }
  return false;
}

// fulls: documents with every figure set, together writing every key (one, unless a field has
// alternative forms).
template <typename Doc, typename J>
void expect_writer_keys_are_reader_keys(
    const std::vector<Doc>& fulls,
    const detail::JsonFields<Doc, J>& fields,
    const std::function<std::string(const Doc&)>& text_of,
    const std::function<Doc(const std::string&, const std::string&)>& parse) {
  const std::vector<std::string> listed = detail::field_keys(fields);
  const std::set<std::string> table(listed.begin(), listed.end());
  EXPECT_EQ(table.size(), listed.size()) << "a key twice in the table";
  std::set<std::string> written;
  for (const Doc& full : fulls) {
    const std::string text = text_of(full);
    for (const std::string& k : detail::json_keys(Json::parse(text))) written.insert(k);
    const Doc back = parse(text, "full.json");
    EXPECT_TRUE(back.unknown.empty())
        << "a written key the reader did not read: " << back.unknown.begin()->first;
    EXPECT_EQ(text_of(back), text) << "read back, it rewrites differently";
  }
  written.erase("schema_version");
  for (const std::string& k : table) EXPECT_EQ(written.count(k), 1u) << k << ": not written";
  for (const std::string& k : written) {
    EXPECT_TRUE(table.count(k) == 1 || under_open_field(k, table)) << k << ": not in the table";
  }
}

template <typename Doc, typename J>
void expect_writer_keys_are_reader_keys(
    const Doc& full,
    const detail::JsonFields<Doc, J>& fields,
    const std::function<std::string(const Doc&)>& text_of,
    const std::function<Doc(const std::string&, const std::string&)>& parse) {
  expect_writer_keys_are_reader_keys<Doc, J>(std::vector<Doc>{full}, fields, text_of, parse);
}

TEST(DocFields, BenchDocWritesWhatItReads) {
  BenchDoc d;
  d.checkpoint = d.tokenizer.sha256 = d.generation_note = "text";
  d.init_tensors = d.model_from_checkpoint = {"wte"};
  d.variants = {config::BenchVariant::kFp32};
  d.batch_sizes = {1, 2};
  d.generation = GenerationFigures{};
  d.notes["fp32"] = "text";
  d.rows.push_back(BenchRow{});
  d.rows[0].loss = d.rows[0].perplexity = d.rows[0].accuracy = d.rows[0].ttft_ms =
      d.rows[0].per_token_p50_ms = d.rows[0].generate_tokens_per_s = 1.5;
  d.quality.push_back(QualityRow{});
  d.quality[0].loss = d.quality[0].perplexity = d.quality[0].accuracy = d.quality[0].samples_per_s =
      d.quality[0].tokens_per_s = 1.5;
  expect_writer_keys_are_reader_keys<BenchDoc>(d, detail::bench_doc_fields(), bench_doc_text,
                                               parse_bench_doc);
}

TEST(DocFields, CheckDocWritesWhatItReads) {
  CheckDoc d;
  d.mode = "repetitions";
  d.rounds = 6;
  CheckGate g;
  g.figure = "step_ms";
  g.point = "p0";
  g.baseline = g.candidate = g.limit = g.ratio = 1.5;
  g.interval = CheckInterval{0.9, 1.1, 0.96875};
  d.gates.push_back(g);
  expect_writer_keys_are_reader_keys<CheckDoc>(d, detail::check_doc_fields(), check_doc_text,
                                               parse_check_doc);
}

// The tokenizer is written in one of two forms: with its files, or as a reference.
TEST(DocFields, CheckpointMetaWritesWhatItReads) {
  CheckpointMeta with_files;
  with_files.model_type = with_files.task = with_files.hf_config = "text";
  with_files.model = CheckpointModelShape{};
  with_files.tensors = {{"wte", {1, 2}}};
  with_files.tokenizer = CheckpointTokenizer{
      "gpt2", std::string(64, 'a'), 1, true, "tokenizer", {"vocab.json"}, "text", {{"k", "v"}}};
  CheckpointMeta with_ref = with_files;
  with_ref.tokenizer.reset();
  with_ref.tokenizer_ref = CheckpointTokenizerRef{"char", "text"};
  expect_writer_keys_are_reader_keys<CheckpointMeta>({with_files, with_ref},
                                                     detail::checkpoint_meta_fields(),
                                                     checkpoint_meta_text, parse_checkpoint_meta);
}

TEST(DocFields, EnvWritesWhatItReads) {
  Env e;
  e.start_time = "text";
  e.command_line = {"text"};
  e.llmprof = EnvBuild{"text", "text", "text"};
  e.host = EnvHost{"text", "text", "text", "text", 1, true, true, 1};
  e.torch = EnvTorch{"text", true, "text"};
  e.device = config::DeviceKind::kCpu;
  e.threads = e.threads_configured = 1;
  e.blas = EnvBlas{"text", "text", {"text"}};
  e.runtime = EnvRuntime{true, true, 1, 1, "text", "text", "text"};
  e.peak_flops = EnvPeakFlops{1.5, "text", "text", 1.5};
  e.peak_bandwidth = EnvPeakBandwidth{1.5, 1.5, "text", "text"};
  e.peak_comm = EnvPeakComm{1.5, "text"};
  telemetry::EnergyAvailability& a = e.energy.emplace();
  a.enabled = a.monitored = true;
  a.reason = "text";
  a.sources = {{"text", false, "text", {{"text", "text", "text", false, false}}}};
  a.sample_hz = 1;
  a.total_source = "text";
  expect_writer_keys_are_reader_keys<Env>(e, detail::env_fields(), env_text, parse_env);
}

TEST(DocFields, EvalDocWritesWhatItReads) {
  EvalDoc d;
  d.checkpoint = d.weights_note = d.tokenizer.sha256 = "text";
  d.init_tensors = {"wte"};
  d.sets.push_back(EvalSetFigures{});
  d.sets[0].sampling = "first 2 batches";
  d.sets[0].perplexity = d.sets[0].accuracy = 1.5;
  expect_writer_keys_are_reader_keys<EvalDoc>(d, detail::eval_doc_fields(), eval_doc_text,
                                              parse_eval_doc);
}

TEST(DocFields, PlanDocWritesWhatItReads) {
  PlanDoc d;
  d.components_at_peak_bytes = {{"parameters", 1}, {"gradients", 2}};
  d.block_modules = {PlanDocModule{"attn.softmax", "fp32", 1}};
  d.allocator = "cuda";
  d.workspace_bytes = d.fragmentation_bytes = d.largest_tensor_bytes = 1;
  d.step_ms = d.calibration_ratio = 1.5;
  const PlanDocTechnique row{"text", "text", "text", false, 1, 1, 1, 1, false, 1, 1, 1, 1.5};
  d.techniques = {row};
  d.techniques_adamw = std::vector<PlanDocTechnique>{row};
  d.technique_notes = d.notes = {"text"};
  expect_writer_keys_are_reader_keys<PlanDoc>(d, detail::plan_doc_fields(), plan_doc_text,
                                              parse_plan_doc);
}

TEST(DocFields, ReportDocWritesWhatItReads) {
  ReportDoc d;
  d.intro = d.incomplete_runs = d.footer = {"text"};
  d.warnings.push_back(InputWarning{"run", "file", 3, "message"});
  ReportTable t;
  t.columns.push_back(ReportColumn{"median_ms", "median ms"});
  t.rows.push_back({{"median_ms", ReportCell{1.5, std::nullopt}}});
  t.notes = {"note"};
  t.source = "runs/a/ops.csv";
  d.tables.push_back(t);
  ReportFinding f;
  f.measured = f.threshold = 1.5;
  f.sets = {"key=value"};
  ReportTried tried;
  tried.verdict = "faster";
  tried.repetitions = 3;
  tried.ratio_of_medians = tried.ci_low = tried.ci_high = 1.5;
  f.tried.push_back(tried);
  d.findings.push_back(f);
  expect_writer_keys_are_reader_keys<ReportDoc>(d, detail::report_doc_fields(), report_doc_text,
                                                parse_report_doc);
}

// A summary with every figure, in the form each section takes when it has them all.
Summary every_summary_figure() {
  Summary s;
  s.status = config::RunStatus::kCompleted;
  s.message = "text";
  s.profile_level = config::ProfileLevel::kOps;
  s.steps = StepCounts{};
  s.parameters = 1;
  const Stats st{2, 1, 1, 1, 1, 1, 1, 0.5, 0.5};
  s.timing = TimingFigures{st, st, st, st, st, "text", 1.5, 1.5};
  s.throughput = ThroughputFigures{st, st};
  s.flops = FlopsFigures{1.5, "text", st, CountedFlops{1.5, 1.5, 1.5, "text"}};
  s.mfu = MfuFigures{st, 1, "text", "text", "text"};
  s.loss = LossFigures{"lm", "text", 1.5, EvalLoss{1, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, "text"}, "t"};
  s.peak_rss_bytes = 1;
  s.process = ProcessFigures{st, st, st};
  OverheadFigures& o = s.overhead.emplace();
  o.events_per_step = o.estimated_fraction_of_step = 1.5;
  o.deep = DeepOverhead{};
  o.deep->record_function_fraction_of_recorded_step = 1.5;
  o.deep->estimated_fraction_of_recorded_step = 1.5;
  o.trace = TraceCost{};
  ModulesFigures& m = s.modules.emplace();
  m.forward_residual_fraction = m.backward_residual_fraction = 1.5;
  m.eval_passes_recorded = 1;
  m.shapes = ShapeFigures{};
  m.views = ViewFigures{0, 0, 0, 0, 0, "text", "text"};
  GpuFigures& g = s.gpu.emplace();
  g.launched_by_ops_ms_per_step = g.outside_scopes_ms_per_step = g.idle.busy_fraction = 1.5;
  g.idle.steps = 1;
  telemetry::EnergyFigures& e = s.energy.emplace();
  e.total_j = e.kwh = e.tokens_per_j = e.flops_per_j = e.mean_power_w = e.peak_power_w = e.co2_g =
      1.5;
  e.sampler = telemetry::SamplerCost{1.5, 1.5, {{"text", "text"}}};
  e.domains.push_back(
      {"text", "text", "text", "counter", false, false, 1.5, true, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5});
  e.phases.emplace();
  (*e.phases)["forward"] = {1.5, 1.5, 1.5, false, 1};
  DistributedFigures& d = s.distributed.emplace();  // the merged run's form
  d.bucket_bytes = {1};
  d.rank0_comm_ms_first_step = d.rank0_comm_ms_per_step_median = 1.5;
  d.rank_dirs = {"rank0"};
  d.figures_scope = "text";
  d.ranks = {RankFigures{0, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5}};
  const CommStraggler straggler{1, 1, 1, 1.5, profile::Phase::kBackward, 1.5};
  d.comm = CommFigures{1,   2,   1.5, 1.5,       1.5, 1.5, 1.5, 1.5,
                       1.5, 1.5, 1.5, straggler, 1.5, 1.5, 1.5, "text"};
  s.config_notes = {"text"};
  RunContext& c = s.context;
  c.data = DataFigures{CorpusFigures{"text", 1, 1, 1}, std::nullopt};
  c.model = ModelFigures{"llama", GqaSummary{1, 1, 1, 1, 1, 1, 1, 1, 1.5, 1.5, 1.5, 1.5, "text"}};
  c.resumed_from = ResumeFigures{"text", 1};
  c.init_from = InitFromFigures{"text", "text", 1, 1, {"text"}, {"text"}};
  c.cuda_graphs = CudaGraphFigures{1, "text"};
  MemoryReconciliation& r = c.plan.emplace();
  r.measured_step = r.unmodelled_bytes = r.activations_per_block_bytes = 1;
  r.reason = r.peak_phase.measured = "text";
  r.components.push_back({"peak", 1, 1, 1.5, false});
  s.run_dir = "text";
  s.final_global_train_loss = 1.5;
  return s;
}

// summary.json's sections take several forms (a rank's distributed or the merged run's, energy
// with its total or without, the data of lm or of the encoder tasks, ...): one summary each.
TEST(DocFields, SummaryWritesWhatItReads) {
  const Summary full = every_summary_figure();
  Summary other = full;  // each section's other form
  other.loss->eval.reset();
  other.gpu->idle = GpuIdleFigures{0, "text"};
  other.energy = telemetry::EnergyFigures{};
  other.energy->reason = "text";
  other.energy->sampler = telemetry::SamplerCost{1.5, 1.5, {{"text", "text"}}};
  other.distributed = DistributedFigures{};
  other.distributed->rank = 1;
  other.distributed->top_dir = other.distributed->parameter_digest = "text";
  other.distributed->comm_error = "text";
  DataFileFigures file{"text", "text", 1, 1, 1, {{1, "text"}}};
  other.context.data =
      DataFigures{std::nullopt, DatasetFigures{file, file, "", 1, 1, 1, 1, 1, 1, 1}};
  other.context.plan = MemoryReconciliation{};
  other.context.plan->unplanned_reason = "text";
  Summary split = full;  // the validation set split from the training set
  split.context.data = DataFigures{std::nullopt, DatasetFigures{file, std::nullopt, "text"}};
  expect_writer_keys_are_reader_keys<Summary>({full, other, split}, detail::summary_fields(),
                                              summary_text, parse_summary);
  // The top-level keys summary_keys() lists are the table's.
  std::set<std::string> top(summary_keys().begin(), summary_keys().end());
  for (const std::string& k : detail::json_keys(Json::parse(summary_text(full)))) {
    if (k.find('.') == std::string::npos && k.find('[') == std::string::npos) {
      EXPECT_EQ(top.count(k), 1u) << k;
    }
  }
}

// The sweep's documents: a context and an outcome with every text and figure set.
SweepContext every_sweep_context() {
  SweepContext c;
  c.status_note = c.peak_measured_at = c.threads_source = c.invocation = "text";
  c.peak_flops_per_s = 1.5;
  c.grid = {GridAxis{"train.batch_size", {"2", "4"}, "text"}};
  c.overrides = c.command_line = {"text"};
  return c;
}

PointOutcome every_outcome() {
  PointOutcome o;
  o.status = config::PointStatus::kFailed;
  o.exit_code = o.signal = 1;
  o.duration_s = 1.5;
  o.message = o.run_dir = o.log_path = o.host = o.slurm_job_id = o.slurm_task_id = o.start_time =
      o.end_time = o.invocation = "text";
  o.moved_aside = {"text"};
  return o;
}

TEST(DocFields, SweepPlanWritesWhatItReads) {
  SweepPlan d;
  d.context = every_sweep_context();
  d.points = {PlanPoint{1, 1, {{"train.batch_size", "2"}}, "p1"}};
  expect_writer_keys_are_reader_keys<SweepPlan>(
      d, detail::sweep_plan_fields(), sweep_plan_text,
      [](const std::string& text, const std::string& file) {
        return parse_sweep_plan(text, file);
      });
}

TEST(DocFields, PointRecordWritesWhatItReads) {
  PointRecord d;
  d.id = "p1";
  d.outcome = every_outcome();
  expect_writer_keys_are_reader_keys<PointRecord>(
      d, detail::point_record_fields(), point_record_text,
      [](const std::string& text, const std::string& file) {
        return parse_point_record(text, file);
      });
}

TEST(DocFields, SweepDocWritesWhatItReads) {
  SweepDoc d;
  d.context = every_sweep_context();
  d.points = {
      SweepDocPoint{PlanPoint{1, 1, {{"train.batch_size", "2"}}, "p1"}, every_outcome(), true}};
  expect_writer_keys_are_reader_keys<SweepDoc>(
      d, detail::sweep_doc_fields(), sweep_doc_text,
      [](const std::string& text, const std::string& file) { return parse_sweep_doc(text, file); });
}

TEST(DocFields, TriedDocWritesWhatItReads) {
  TriedDoc d;
  TriedEntry t;
  t.rules = {"rule"};
  t.baseline = t.candidate = {1.5};
  t.world_size = 2;
  t.comparison = TriedComparison{"faster", 3, 1.5, 1.5, 1.5, 1.5, 0.95, 1.5, 1.5};
  d.tried.push_back(t);
  expect_writer_keys_are_reader_keys<TriedDoc>(d, detail::tried_doc_fields(), tried_doc_text,
                                               parse_tried_doc);
}

TEST(DocFields, TuneDocWritesWhatItReads) {
  TuneDoc d;
  d.inputs.sets = d.inputs.space = {"key=value"};
  d.knobs.push_back({"key", {"key=value"}, "kept", 1.5, "source"});
  TuneCandidate c;
  c.sets = {"key=value"};
  c.predicted_ratio = c.baseline_median = c.candidate_median = c.ratio = c.ci_low = c.ci_high =
      c.loss_difference = 1.5;
  c.planned_peak_bytes = 2;
  c.planned_fits = c.loss_within_tolerance = true;
  c.verdict = "faster";
  c.repetitions.push_back({"baseline", 0, 1.5, 1.5, 1.5, "log"});
  d.candidates.push_back(c);
  d.winner = 1;
  d.notes = {"note"};
  expect_writer_keys_are_reader_keys<TuneDoc>(d, detail::tune_doc_fields(), tune_doc_text,
                                              parse_tune_doc);
}

}  // namespace
}  // namespace llmprof::rundir
