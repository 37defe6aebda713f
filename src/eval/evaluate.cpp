#include "llmprof/eval/evaluate.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>

#include "llmprof/config/schema.h"
#include "llmprof/output/csv.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "prepare.h"

namespace llmprof::eval {

namespace {

}  // namespace

EvalResult run_eval(const config::Config& given, const EvalOptions& opts) {
  Prepared p = prepare(given, opts.checkpoint, opts.allow_init_weights);
  const config::Config& cfg = p.cfg;  // with the checkpoint's model shape
  const int64_t batch = cfg.eval.batch_size > 0 ? cfg.eval.batch_size : cfg.train.batch_size;
  const std::vector<train::EvalSet> sets = eval_sets(p, batch);
  const device::Autocast autocast(cfg);

  EvalResult result;
  result.task = p.task->kind();
  result.weights = weights_label(p);
  result.init_tensors = init_tensors(p);
  result.reports_perplexity = !p.task->reports_accuracy();
  if (p.checkpoint) result.checkpoint = p.checkpoint->path;
  const std::string parent = opts.output_dir.empty() ? cfg.output.dir : opts.output_dir;
  result.run_dir = output::create_run_dir(parent, cfg.output.name, opts.run_label);
  output::write_file_atomic(rundir::path(result.run_dir, rundir::kConfig), config::to_yaml(cfg));
  output::CsvWriter csv(rundir::path(result.run_dir, rundir::kEvalSets),
                        {"set", "source", "batches", "sequences", "available_sequences",
                         "sampling", "targets", "loss", "perplexity", "accuracy", "weights",
                         "seconds", "samples_per_s", "tokens_per_s"});
  for (const std::string& note : cfg.notes) spdlog::warn("config: {}", note);
  for (const std::string& note : p.notes) spdlog::info("model: {}", note);
  spdlog::info("model: {}, {} parameters; {} threads; batch {}, {}", p.task->describe(),
               p.task->num_parameters(), p.runtime.threads, batch,
               config::name(cfg.train.precision));
  for (const train::EvalSet& set : sets) {
    double seconds = 0;
    const train::EvalSums sums = evaluate_set(*p.task, set, autocast, *p.device, &seconds);
    EvalSetResult r;
    r.name = set.name;
    r.source = set.source;
    r.sampling = set.sampling;
    r.available_sequences = set.available;
    r.batches = sums.batches;
    r.sequences = sums.rows;
    r.targets = sums.targets;
    r.loss = sums.mean_loss();
    // Perplexity is a language-model figure; a classifier's is exp(cross-entropy) of nothing
    // anyone reads, so it is null there.
    if (result.reports_perplexity) r.perplexity = std::exp(r.loss);
    if (p.task->reports_accuracy()) r.accuracy = sums.accuracy();
    r.seconds = seconds;
    r.samples_per_s = seconds > 0 ? static_cast<double>(sums.rows) / seconds : NAN;
    r.tokens_per_s = seconds > 0 ? static_cast<double>(sums.tokens) / seconds : NAN;
    csv.add(std::string_view(r.name)).add(std::string_view(r.source)).add(r.batches);
    csv.add(r.sequences).add(r.available_sequences).add(std::string_view(r.sampling));
    csv.add(r.targets).add(r.loss).add(r.perplexity).add(r.accuracy);
    csv.add(std::string_view(result.weights));
    csv.add(r.seconds).add(r.samples_per_s).add(r.tokens_per_s);
    csv.end_row();
    result.sets.push_back(r);
  }
  rundir::EvalDoc doc;
  doc.task = result.task;
  doc.model = p.task->describe();
  doc.parameters = p.task->num_parameters();
  if (!result.checkpoint.empty()) doc.checkpoint = result.checkpoint;
  doc.checkpoint_note = result.checkpoint.empty() ? "untrained: initial weights" : "";
  doc.weights = result.weights;
  doc.init_tensors = result.init_tensors;
  if (result.weights != "checkpoint") {
    doc.weights_note = "figures computed through randomly initialised weights (" +
                       result.weights + "): not a measure of a trained model";
  }
  doc.model_from_checkpoint = p.notes;
  doc.tokenizer = doc_tokenizer(*p.data.tokenizer);
  doc.config_notes = cfg.notes;
  doc.precision = cfg.train.precision;
  doc.threads = p.runtime.threads;
  doc.batch_size = batch;
  doc.perplexity_note = result.reports_perplexity
                            ? "exp of the mean cross-entropy per scored target (mlm: masked "
                              "tokens; lm: next tokens)"
                            : "null: classification reports accuracy, not perplexity";
  doc.command_line = opts.command_line;
  doc.sets = result.sets;
  rundir::write_eval_doc(rundir::path(result.run_dir, rundir::kEvalJson), doc);
  return result;
}

}  // namespace llmprof::eval
