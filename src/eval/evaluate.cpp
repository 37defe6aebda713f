#include "llmprof/eval/evaluate.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cmath>

#include "llmprof/config/schema.h"
#include "llmprof/output/csv.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "prepare.h"

namespace llmprof::eval {

namespace {

nlohmann::json to_json(const EvalSetResult& r) {
  return {{"name", r.name},
          {"source", r.source},
          {"batches", r.batches},
          {"sequences", r.sequences},
          {"targets", r.targets},
          {"available_sequences", r.available_sequences},
          {"sampling", r.sampling.empty() ? nlohmann::json("the whole set, in order")
                                          : nlohmann::json(r.sampling)},
          {"loss", r.loss},
          {"perplexity", r.perplexity ? nlohmann::json(*r.perplexity) : nlohmann::json(nullptr)},
          {"accuracy", r.accuracy ? nlohmann::json(*r.accuracy) : nlohmann::json(nullptr)},
          {"seconds", r.seconds},
          {"samples_per_s", r.samples_per_s},
          {"tokens_per_s", r.tokens_per_s}};
}


}  // namespace

EvalResult run_eval(const config::Config& given, const EvalOptions& opts) {
  Prepared p = prepare(given, opts.checkpoint, opts.allow_init_weights);
  const config::Config& cfg = p.cfg;  // with the checkpoint's model shape
  const int64_t batch = cfg.eval.batch_size > 0 ? cfg.eval.batch_size : cfg.train.batch_size;
  const std::vector<train::EvalSet> sets = eval_sets(p, batch);
  const train::Autocast autocast(cfg);

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
  nlohmann::json sets_json = nlohmann::json::array();
  for (const auto& r : result.sets) sets_json.push_back(to_json(r));
  nlohmann::json doc = {
      {"schema_version", 1},
      {"task", config::name(result.task)},
      {"model", p.task->describe()},
      {"parameters", p.task->num_parameters()},
      {"checkpoint", result.checkpoint.empty() ? nlohmann::json(nullptr)
                                               : nlohmann::json(result.checkpoint)},
      {"checkpoint_note", result.checkpoint.empty() ? "untrained: initial weights" : ""},
      {"weights", result.weights},
      {"init_tensors", result.init_tensors},
      {"weights_note",
       result.weights == "checkpoint"
           ? nlohmann::json(nullptr)
           : nlohmann::json("figures computed through randomly initialised weights (" +
                            result.weights + "): not a measure of a trained model")},
      {"model_from_checkpoint", p.notes},
      {"tokenizer", tokenizer_json(*p.data.tokenizer)},
      {"config_notes", cfg.notes},
      {"precision", config::name(cfg.train.precision)},
      {"threads", p.runtime.threads},
      {"batch_size", batch},
      {"perplexity_note", result.reports_perplexity
                              ? "exp of the mean cross-entropy per scored target (mlm: masked "
                                "tokens; lm: next tokens)"
                              : "null: classification reports accuracy, not perplexity"},
      {"command_line", opts.command_line},
      {"sets", sets_json}};
  output::write_file_atomic(rundir::path(result.run_dir, rundir::kEvalJson), doc.dump(2) + "\n");
  return result;
}

}  // namespace llmprof::eval
