#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/plot/plot.h"

namespace llmprof::cli {

namespace {

struct PlotArgs {
  std::vector<std::string> inputs;
  std::string out_dir;
  std::string format = "png";
  std::string gnuplot = "gnuplot";
};

// One input: <input>/plots; several: ./plots.
std::string default_out_dir(const std::vector<std::string>& inputs) {
  if (inputs.size() == 1) return (std::filesystem::path(inputs[0]) / "plots").string();
  return "plots";
}

}  // namespace

void add_plot_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PlotArgs>();
  auto* sub = app.add_subcommand("plot", "Charts of run and sweep directories, through gnuplot");
  sub->add_option("dirs", args->inputs, "Run or sweep directories")->required();
  sub->add_option("--out,-o", args->out_dir,
                  "Output directory (default: <dir>/plots for one input, ./plots for several)");
  sub->add_option("--format,-f", args->format, "Image format: png (default) or svg");
  sub->add_option("--gnuplot", args->gnuplot, "gnuplot program (name on PATH or path)");
  sub->footer(
      "Charts: 01 block timing, 02 attention, 03 MLP (modules.csv); 04 phases; 05 loss curves;\n"
      "06 tokens/s and MFU vs batch size; 07 sweep heatmaps; 08 FLOPs per joule vs batch size;\n"
      "09 radar of the best configs; 10 step-time distribution; 11 memory per phase.\n"
      "Each chart NAME is written as NAME.png|svg beside NAME.gp and its .dat files; a chart\n"
      "without data is skipped with the reason. Examples:\n"
      "  llmprof plot runs/quickstart-20261122-123357\n"
      "  llmprof plot runs/a runs/b --out plots/ab --format svg\n"
      "  llmprof plot sweeps/batch-lr\n"
      "Exit codes: 0 ok, 1 gnuplot missing or failing, 2 missing directory or malformed file.");
  sub->callback([args, &exit_code]() {
    plot::PlotOptions opts;
    opts.inputs = args->inputs;
    opts.format = plot::parse_image_format(args->format);
    opts.out_dir = args->out_dir.empty() ? default_out_dir(args->inputs) : args->out_dir;
    opts.gnuplot = args->gnuplot;
    size_t written = 0;
    plot::PlotResult result = plot::make_plots(opts);
    for (const auto& w : result.warnings) fmt::print(stderr, "warning: {}\n", w);
    for (const auto& c : result.charts) {
      if (c.image.empty()) {
        fmt::print("skipped {}: {}\n", c.name, c.skipped);
      } else {
        fmt::print("wrote   {}\n", c.image);
        ++written;
      }
    }
    fmt::print("{} charts in {}\n", written, opts.out_dir);
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
