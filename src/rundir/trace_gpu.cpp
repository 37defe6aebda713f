// GPU activity as Chrome trace events for the one trace writer (trace.cpp), in its conventions: microsecond timestamps with 3
// decimals relative to the trace origin, short categories, args only where they inform.
#include "llmprof/rundir/trace_gpu.h"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "trace_json.h"

namespace llmprof::rundir {

using namespace llmprof::gpu;  // the records this file formats

namespace {

using detail::escaped;

class Events {
 public:
  Events(std::vector<std::string>& out, int64_t origin_ns) : out_(out), origin_ns_(origin_ns) {}

  void name_process(int64_t pid, std::string_view name, int sort_index) {
    out_.push_back(
        fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"{}"}}}})", pid,
                    escaped(name)));
    out_.push_back(fmt::format(
        R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid,
        sort_index));
  }
  void name_thread(int64_t pid, int64_t tid, std::string_view name) {
    out_.push_back(
        fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                    pid, tid, escaped(name)));
  }
  void slice(std::string_view cat,
             std::string_view name,
             int64_t pid,
             int64_t tid,
             int64_t start_ns,
             int64_t end_ns,
             const std::string& args) {
    out_.push_back(fmt::format(
        R"({{"ph":"X","cat":"{}","name":"{}","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"args":{{{}}}}})",
        cat, escaped(name), pid, tid, us(start_ns), (end_ns - start_ns) * 1e-3, args));
  }
  // Flow start ("s") on the launching call, finish ("f", bound to the enclosing slice) on the work.
  void flow(char ph, int64_t id, int64_t pid, int64_t tid, int64_t t_ns) {
    out_.push_back(fmt::format(
        R"({{"ph":"{}","cat":"launch","name":"launch","id":{},"pid":{},"tid":{},"ts":{:.3f}{}}})",
        ph, id, pid, tid, us(t_ns), ph == 'f' ? R"(,"bp":"e")" : ""));
  }

 private:
  double us(int64_t t_ns) const { return detail::trace_us(t_ns, origin_ns_); }
  std::vector<std::string>& out_;
  int64_t origin_ns_;
};

}  // namespace

std::vector<std::string> gpu_trace_events(const GpuRecords& gpu,
                                          const std::vector<CpuOpInterval>& ops,
                                          const Correlation& corr,
                                          const GpuTraceOptions& opt) {
  std::vector<std::string> out;
  out.reserve(2 * gpu.size() + 16);
  Events ev(out, opt.origin_ns);

  // Tracks: one process per device, one thread per stream; host threads not known to the trace.
  std::set<std::pair<int32_t, uint32_t>> streams;
  for (const auto& k : gpu.kernels) streams.insert({k.device, k.stream});
  for (const auto& m : gpu.memcpys) streams.insert({m.device, m.stream});
  for (const auto& m : gpu.memsets) streams.insert({m.device, m.stream});
  int32_t last_device = -1;
  for (const auto& [device, stream] : streams) {
    if (device != last_device) {
      ev.name_process(opt.gpu_pid_base + device, fmt::format("GPU {}", device), 100 + device);
      last_device = device;
    }
    ev.name_thread(opt.gpu_pid_base + device, stream, fmt::format("stream {}", stream));
  }
  std::unordered_map<uint64_t, int> tids = opt.cpu_tids;
  if (opt.runtime_slices || opt.flows) {
    for (const RuntimeApiRecord& r : gpu.runtime) {
      if (tids.count(r.thread_id) != 0) continue;
      const int tid = kFirstExtraTid + static_cast<int>(tids.size() - opt.cpu_tids.size());
      tids.emplace(r.thread_id, tid);
      ev.name_thread(opt.cpu_pid, tid, fmt::format("cuda thread {}", r.thread_id));
    }
  }

  // The "External id" of the op owning an activity (-1: none), as trace.cpp numbers ops.
  const auto external_id = [&](int32_t op) -> int64_t {
    if (op < 0) return -1;
    const auto i = static_cast<size_t>(op);
    return i < opt.external_ids.size() ? opt.external_ids[i] : static_cast<int64_t>(i) + 1;
  };
  if (opt.runtime_slices) {
    // The op open on the call's thread when it ran (what correlate() attributes work to).
    std::unordered_map<uint32_t, int32_t> op_of_call;
    for (const auto* list : {&corr.kernels, &corr.memcpys, &corr.memsets}) {
      for (const Attribution& a : *list) {
        if (a.runtime >= 0 && a.op >= 0) {
          op_of_call.emplace(gpu.runtime[static_cast<size_t>(a.runtime)].correlation_id, a.op);
        }
      }
    }
    for (const RuntimeApiRecord& r : gpu.runtime) {
      const auto owner = op_of_call.find(r.correlation_id);
      ev.slice("cuda_runtime", r.name, opt.cpu_pid, tids.at(r.thread_id), r.start_ns, r.end_ns,
               fmt::format(R"("correlation":{},"cbid":{},"External id":{})", r.correlation_id,
                           r.cbid, external_id(owner == op_of_call.end() ? -1 : owner->second)));
    }
  }
  // The launch arrow of one activity, when its runtime call is known.
  auto launch_flow = [&](const Attribution& a, uint32_t correlation_id, int64_t pid, int64_t tid,
                         int64_t start_ns) {
    if (!opt.flows || a.runtime < 0) return;
    const RuntimeApiRecord& r = gpu.runtime[static_cast<size_t>(a.runtime)];
    const int64_t id = kFlowIdBase + correlation_id;
    ev.flow('s', id, opt.cpu_pid, tids.at(r.thread_id), r.start_ns);
    ev.flow('f', id, pid, tid, start_ns);
  };

  for (size_t i = 0; i < gpu.kernels.size(); ++i) {
    const KernelRecord& k = gpu.kernels[i];
    const Attribution a = i < corr.kernels.size() ? corr.kernels[i] : Attribution{};
    std::string scope(owner_scope(a, ops));
    if (a.op >= 0 && ops[static_cast<size_t>(a.op)].block >= 0 && scope != kUnattributed) {
      scope += fmt::format("[{}]", ops[static_cast<size_t>(a.op)].block);
    }
    std::string args = fmt::format(
        R"("stream":{},"correlation":{},"External id":{},"device":{},"grid":[{},{},{}],)"
        R"("block":[{},{},{}],"registers per thread":{},"shared memory":{},"op":"{}","scope":"{}")",
        k.stream, k.correlation_id, external_id(a.op), k.device, k.grid.x, k.grid.y, k.grid.z,
        k.block.x, k.block.y, k.block.z, k.registers_per_thread, k.shared_mem_bytes(),
        escaped(owner_op(a, ops)), escaped(scope));
    if (i < opt.kernel_args.size() && !opt.kernel_args[i].empty()) {
      args += "," + opt.kernel_args[i];
    }
    const int64_t pid = opt.gpu_pid_base + k.device;
    ev.slice("kernel", k.name, pid, k.stream, k.start_ns, k.end_ns, args);
    launch_flow(a, k.correlation_id, pid, k.stream, k.start_ns);
  }
  for (size_t i = 0; i < gpu.memcpys.size(); ++i) {
    const MemcpyRecord& m = gpu.memcpys[i];
    const Attribution a = i < corr.memcpys.size() ? corr.memcpys[i] : Attribution{};
    const int64_t pid = opt.gpu_pid_base + m.device;
    ev.slice("gpu_memcpy",
             fmt::format("Memcpy {} ({} -> {})", copy_kind_name(m.kind),
                         memory_kind_name(m.src_memory), memory_kind_name(m.dst_memory)),
             pid, m.stream, m.start_ns, m.end_ns,
             fmt::format(R"("stream":{},"correlation":{},"External id":{},"device":{},)"
                         R"("bytes":{},"op":"{}")",
                         m.stream, m.correlation_id, external_id(a.op), m.device, m.bytes,
                         escaped(owner_op(a, ops))));
    launch_flow(a, m.correlation_id, pid, m.stream, m.start_ns);
  }
  for (size_t i = 0; i < gpu.memsets.size(); ++i) {
    const MemsetRecord& m = gpu.memsets[i];
    const Attribution a = i < corr.memsets.size() ? corr.memsets[i] : Attribution{};
    const int64_t pid = opt.gpu_pid_base + m.device;
    ev.slice("gpu_memset", fmt::format("Memset ({})", memory_kind_name(m.memory)), pid, m.stream,
             m.start_ns, m.end_ns,
             fmt::format(R"("stream":{},"correlation":{},"External id":{},"device":{},)"
                         R"("bytes":{},"op":"{}")",
                         m.stream, m.correlation_id, external_id(a.op), m.device, m.bytes,
                         escaped(owner_op(a, ops))));
    launch_flow(a, m.correlation_id, pid, m.stream, m.start_ns);
  }
  return out;
}

}  // namespace llmprof::rundir
