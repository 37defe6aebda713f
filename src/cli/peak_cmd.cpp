#include <fmt/format.h>

#include <optional>

#include "commands.h"
#include "llmprof/config/config.h"
#include "llmprof/error.h"
#include "llmprof/train/calibrate.h"
#include "llmprof/train/runtime.h"

namespace llmprof::cli {

void add_peak_command(CLI::App& app, int& exit_code) {
  struct Args {
    int64_t threads = 0;
    std::string precision = "fp32";
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "peak",
      "Measure the matmul peak FLOP/s that MFU is computed against and the memory bandwidth of "
      "the roofline (what train measures)");
  sub->add_option("--threads", args->threads, "Intra-op threads; 0 = all cores");
  sub->add_option("--precision", args->precision, "fp32 or bf16");
  sub->footer("Prints `peak_flops_per_s: X`: pass it as --set profile.peak_flops_per_s=X so runs\n"
              "on a busy machine share one figure (llmprof sweep does this for its points).");
  sub->callback([args, &exit_code]() {
    const std::optional<config::Precision> precision =
        config::find_enum<config::Precision>(args->precision);
    if (precision != config::Precision::kFp32 && precision != config::Precision::kBf16) {
      throw UsageError("--precision '" + args->precision + "': expected fp32 or bf16");
    }
    if (args->threads < 0) throw UsageError("--threads must be >= 0");
    config::Config cfg;
    cfg.threads = args->threads;
    train::apply_runtime(cfg);
    train::PeakFlops peak = train::measure_matmul_peak(*precision, 2048, 5);
    fmt::print("peak_flops_per_s: {}\nmethod: {}\n", peak.flops_per_s, peak.method);
    const train::PeakBandwidth bw = train::measure_memory_bandwidth(0, 5);
    fmt::print("peak_bytes_per_s: {}\ncopy_bytes_per_s: {}\nbandwidth_method: {} (triad; {})\n",
               bw.triad_bytes_per_s, bw.copy_bytes_per_s, bw.method,
               bw.llc_bytes > 0 ? fmt::format("last-level cache {} MiB", bw.llc_bytes >> 20)
                                : std::string("last-level cache size not in sysfs"));
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
