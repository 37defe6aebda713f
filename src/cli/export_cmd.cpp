#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/error.h"
#include "llmprof/train/task_model.h"

namespace llmprof::cli {

void add_export_command(CLI::App& app, int& exit_code) {
  struct Args {
    std::string path, format = "hf", out;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "export", "Write a checkpoint as a Hugging Face folder that transformers loads");
  sub->add_option("checkpoint", args->path, "Checkpoint directory, or a run directory holding one")
      ->required();
  sub->add_option("--format", args->format, "hf (the only format)");
  sub->add_option("--out", args->out, "Folder to create (must not exist)")->required();
  sub->footer("Writes model.safetensors (F32), config.json and the tokenizer files:\n"
              "  transformers: AutoModelForCausalLM.from_pretrained(OUT) (GPT-2),\n"
              "  AutoModelForMaskedLM / AutoModelForSequenceClassification (DistilBERT).");
  sub->callback([args, &exit_code]() {
    if (args->format != "hf") {
      throw UsageError("--format '" + args->format + "': expected hf");
    }
    const checkpoint::HfExport x = checkpoint::export_hf(args->path, args->out, train::task_model);
    fmt::print("exported {} ({} tensors) to {}: {}\n", x.architecture, x.tensors, x.folder,
               fmt::join(x.files, ", "));
    for (const std::string& note : x.notes) fmt::print("note: {}\n", note);
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
