#include <fmt/format.h>

#include <optional>

#include "commands.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/device.h"
#include "llmprof/device/peak.h"
#include "llmprof/error.h"
#include "llmprof/train/runtime.h"
#include "peak_comm.h"

namespace llmprof::cli {

// The matmul peak (with the datasheet's where known), then unless flops_only the memory
// bandwidth, as `key: value` lines.
void print_compute_peak(const device::PeakReport& r) {
  fmt::print("peak_flops_per_s: {}\nmethod: {}\n", r.measured.flops_per_s, r.measured.method);
  if (r.datasheet) {
    fmt::print("datasheet_flops_per_s: {}\ndatasheet: {}\nmeasured_of_datasheet: {:.3f}\n",
               r.datasheet->flops_per_s, r.datasheet->method,
               r.measured.flops_per_s / r.datasheet->flops_per_s);
  }
  if (!r.bandwidth) return;
  fmt::print("peak_bytes_per_s: {}\ncopy_bytes_per_s: {}\nbandwidth_method: {}\n",
             r.bandwidth->triad_bytes_per_s, r.bandwidth->copy_bytes_per_s, r.bandwidth_method);
}

void add_peak_command(CLI::App& app, int& exit_code) {
  struct Args {
    int64_t threads = 0;
    std::string precision = "fp32";
    std::string device = "cpu";
    bool flops_only = false;
  };
  auto args = std::make_shared<Args>();
  auto comm = std::make_shared<PeakCommArgs>();
  auto comm_flag = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand(
      "peak",
      "Measure the matmul peak FLOP/s that MFU is computed against and the memory bandwidth of "
      "the roofline (what train measures); with --comm, the all-reduce bus bandwidth over the "
      "ranks it runs as");
  sub->add_option("--threads", args->threads, "Intra-op threads; 0 = all cores");
  sub->add_option("--precision", args->precision, "fp32, bf16, or fp16 (cuda)");
  sub->add_option("--device", args->device, "cpu, cuda or cuda:N")
      ->check(non_empty("cpu, cuda or cuda:N"));
  sub->add_flag("--flops-only", args->flops_only,
                "The matmul peak only, without the memory bandwidth (what a sweep's shared MFU "
                "peak needs)");
  sub->add_flag("--comm", *comm_flag,
                "All-reduce bus bandwidth per message size, as nccl-tests' all_reduce_perf");
  sub->add_option("--nproc", comm->nproc, "--comm: local ranks to start (as train --nproc)");
  sub->add_option("--min-bytes", comm->min_bytes, "--comm: smallest message (4K)");
  sub->add_option("--max-bytes", comm->max_bytes, "--comm: largest message (256M)");
  sub->add_option("--factor", comm->factor, "--comm: each size the previous x factor (2)");
  sub->add_option("--warmup-iters", comm->warmup_iters, "--comm: untimed all-reduces per size");
  sub->add_option("--iters", comm->iters, "--comm: timed all-reduces per size");
  sub->add_option("--timeout-s", comm->timeout_s, "--comm: rendezvous and collective timeout");
  sub->add_option("--output", comm->output_dir, "--comm: write comm_peak.csv into this folder");
  sub->footer("Prints `peak_flops_per_s: X`: pass it as --set profile.peak_flops_per_s=X so runs\n"
              "on a busy machine share one figure (llmprof sweep does this for its points).\n"
              "--comm prints `peak_busbw_bytes_per_s: X` (the largest bus bandwidth): pass it as\n"
              "--set profile.peak_busbw_bytes_per_s=X so a run's buckets are judged against it:\n"
              "  llmprof peak --comm --nproc 2            (or under srun / torchrun)");
  sub->callback([args, comm, comm_flag, sub, &exit_code]() {
    if (!*comm_flag) {
      for (const char* o : {"--nproc", "--min-bytes", "--max-bytes", "--factor", "--warmup-iters",
                            "--iters", "--timeout-s", "--output"}) {
        if (sub->count(o) > 0) throw UsageError(std::string(o) + " is an option of --comm");
      }
    } else {
      if (args->flops_only) throw UsageError("--flops-only is not an option of --comm");
      if (args->precision != "fp32") {
        throw UsageError("--comm measures float32 all-reduces; drop --precision " +
                         args->precision);
      }
      if (comm->nproc < 0 || (comm->nproc == 0 && sub->count("--nproc") > 0)) {
        throw UsageError(fmt::format("--nproc {}: give 1 or more ranks", comm->nproc));
      }
      comm->device = args->device;
      exit_code = run_peak_comm(*comm);
      return;
    }
    const std::optional<config::Precision> precision =
        config::find_enum<config::Precision>(args->precision);
    if (!precision) {
      throw UsageError("--precision '" + args->precision + "': expected fp32, bf16 or fp16");
    }
    if (args->threads < 0) throw UsageError("--threads must be >= 0");
    config::Config cfg;
    cfg.threads = args->threads;
    config::apply_override(cfg, "device=" + args->device);  // cpu | cuda | cuda:N
    device::check_device(cfg);
    if (*precision == config::Precision::kFp16 && !device::capabilities(cfg.device).fp16) {
      throw UsageError("--precision fp16: CPU matmuls have no fp16 path; use fp32 or bf16");
    }
    train::apply_runtime(cfg);  // threads and BLAS, as a run's
    print_compute_peak(device::measure_peak(cfg.device, *precision, args->flops_only));
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
