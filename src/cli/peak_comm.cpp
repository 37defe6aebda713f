#include "peak_comm.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <optional>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/device.h"
#include "llmprof/dist/comm_bench.h"
#include "llmprof/dist/process_group.h"
#include "llmprof/dist/rank_env.h"
#include "llmprof/error.h"
#include "llmprof/rundir/comm_peak.h"
#include "llmprof/rundir/files.h"
#include "train_launch.h"

namespace llmprof::cli {

int64_t parse_bytes(const std::string& option, const std::string& value) {
  size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  int shift = 0;
  if (used > 0 && used + 1 == value.size()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(value[used])));
    shift = unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : -1;
    if (shift >= 0) ++used;
  }
  if (used == 0 || used != value.size() || n < 0 || shift < 0 || n > (int64_t{1} << 40) >> shift) {
    throw UsageError(fmt::format("{} '{}': expected a size in bytes such as 4096, 4K, 256M or 1G",
                                 option, value));
  }
  return static_cast<int64_t>(n) << shift;
}

namespace {

dist::CommBenchOptions bench_options(const PeakCommArgs& a) {
  dist::CommBenchOptions o;
  o.min_bytes = parse_bytes("--min-bytes", a.min_bytes);
  o.max_bytes = parse_bytes("--max-bytes", a.max_bytes);
  o.factor = a.factor;
  o.warmup_iters = a.warmup_iters;
  o.iters = a.iters;
  (void)dist::comm_bench_sizes(o);  // bad sizes or counts: exit 2 before any rank starts
  return o;
}

void print_result(const dist::CommBenchResult& r) {
  fmt::print(
      "# all-reduce bus bandwidth (as nccl-tests' all_reduce_perf): {} rank{}, {}, float32 "
      "sum, {} warm-up + {} timed iterations per size\n",
      r.world_size, r.world_size == 1 ? "" : "s", config::name(r.backend), r.options.warmup_iters,
      r.options.iters);
  fmt::print("# busbw = algbw x 2(n-1)/n; time = mean over ranks of each rank's mean iteration\n");
  fmt::print("#{:>11} {:>10} {:>11} {:>11} {:>11} {:>11}\n", "bytes", "elements", "time_us",
             "algbw_GB/s", "busbw_GB/s", "slowest_us");
  for (const dist::CommBenchRow& row : r.rows) {
    fmt::print("{:>12} {:>10} {:>11.1f} {:>11.3f} {:>11.3f} {:>11.1f}\n", row.bytes, row.elements,
               row.time_us, row.algbw_bytes_per_s * 1e-9, row.busbw_bytes_per_s * 1e-9,
               row.max_rank_time_us);
  }
  if (r.max_busbw_bytes_per_s) {
    fmt::print("peak_busbw_bytes_per_s: {:.6g}\nbusbw_at_bytes: {}\n", *r.max_busbw_bytes_per_s,
               r.max_busbw_at_bytes);
  } else {
    fmt::print("peak_busbw_bytes_per_s: null\n");
  }
  fmt::print("comm_roof: {}\n", r.roof_note);
}

void write_table(const std::string& dir, const dist::CommBenchResult& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("--output {}: cannot create the directory: {}", dir, ec.message()));
  std::vector<rundir::CommPeakRow> rows;
  for (const dist::CommBenchRow& row : r.rows) {
    rundir::CommPeakRow c;
    c.bytes = row.bytes;
    c.elements = row.elements;
    c.world_size = r.world_size;
    c.backend = std::string(config::name(r.backend));
    c.warmup_iters = r.options.warmup_iters;
    c.iters = r.options.iters;
    c.time_us = row.time_us;
    c.min_rank_time_us = row.min_rank_time_us;
    c.max_rank_time_us = row.max_rank_time_us;
    c.algbw_gb_per_s = row.algbw_bytes_per_s * 1e-9;
    c.busbw_gb_per_s = row.busbw_bytes_per_s * 1e-9;
    rows.push_back(std::move(c));
  }
  rundir::write_comm_peak(rundir::path(dir, rundir::kCommPeak), rows);
}

}  // namespace

int run_peak_comm(const PeakCommArgs& args) {
  dist::CommBenchOptions options = bench_options(args);
  if (!(args.timeout_s > 0)) {
    throw UsageError(fmt::format("--timeout-s {}: expected a positive number", args.timeout_s));
  }
  config::Config cfg;
  config::apply_override(cfg, "device=" + args.device);  // cpu | cuda | cuda:N; bad: exit 2
  if (args.nproc > 1) return launch_self(args.nproc, 1, args.timeout_s, false);
  const dist::RankEnv env = dist::rank_env_from_environment();
  dist::GroupOptions group;
  group.timeout_s = args.timeout_s;
  group.c10d_for_one_rank = true;  // world size 1 still times the backend's all-reduce
  group.backend = device::resolve_backend(cfg);  // ddp.backend auto: nccl on cuda, gloo on cpu
  group.cuda_device = device::cuda_ordinal(
      cfg.device, env.distributed() ? std::optional(env.local_rank) : std::nullopt);
  options.cuda_device = group.cuda_device;
  auto pg = dist::ProcessGroup::create(env, group);
  const dist::CommBenchResult result = dist::run_all_reduce_bench(*pg, options);
  if (env.rank == 0) {
    print_result(result);
    if (!args.output_dir.empty()) write_table(args.output_dir, result);
  }
  pg->barrier();  // no rank tears the group down while another still reads
  return 0;
}

}  // namespace llmprof::cli
