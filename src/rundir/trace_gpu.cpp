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

// The events of one set of GPU records: the tracks, the runtime calls, then the work.
class GpuTrace {
 public:
  GpuTrace(std::vector<std::string>& out,
           const GpuRecords& gpu,
           const std::vector<CpuOpInterval>& ops,
           const Correlation& corr,
           const GpuTraceOptions& opt)
      : ev_(out, opt.origin_ns),
        gpu_(gpu),
        ops_(ops),
        corr_(corr),
        opt_(opt),
        tids_(opt.cpu_tids) {}

  // Tracks: one process per device, one thread per stream; host threads not known to the trace.
  void name_tracks() {
    std::set<std::pair<int32_t, uint32_t>> streams;
    for (const auto& k : gpu_.kernels) streams.insert({k.device, k.stream});
    for (const auto& m : gpu_.memcpys) streams.insert({m.device, m.stream});
    for (const auto& m : gpu_.memsets) streams.insert({m.device, m.stream});
    int32_t last_device = -1;
    for (const auto& [device, stream] : streams) {
      if (device != last_device) {
        ev_.name_process(opt_.gpu_pid_base + device, fmt::format("GPU {}", device), 100 + device);
        last_device = device;
      }
      ev_.name_thread(opt_.gpu_pid_base + device, stream, fmt::format("stream {}", stream));
    }
    if (opt_.runtime_slices || opt_.flows) {
      for (const RuntimeApiRecord& r : gpu_.runtime) {
        if (tids_.count(r.thread_id) != 0) continue;
        const int tid = kFirstExtraTid + static_cast<int>(tids_.size() - opt_.cpu_tids.size());
        tids_.emplace(r.thread_id, tid);
        ev_.name_thread(opt_.cpu_pid, tid, fmt::format("cuda thread {}", r.thread_id));
      }
    }
  }

  void runtime_slices() {
    if (!opt_.runtime_slices) return;
    // The op open on the call's thread when it ran (what correlate() attributes work to).
    std::unordered_map<uint32_t, int32_t> op_of_call;
    for (const auto* list : {&corr_.kernels, &corr_.memcpys, &corr_.memsets}) {
      for (const Attribution& a : *list) {
        if (a.runtime >= 0 && a.op >= 0) {
          op_of_call.emplace(gpu_.runtime[static_cast<size_t>(a.runtime)].correlation_id, a.op);
        }
      }
    }
    for (const RuntimeApiRecord& r : gpu_.runtime) {
      const auto owner = op_of_call.find(r.correlation_id);
      ev_.slice("cuda_runtime", r.name, opt_.cpu_pid, tids_.at(r.thread_id), r.start_ns, r.end_ns,
                fmt::format(R"("correlation":{},"cbid":{},"External id":{})", r.correlation_id,
                            r.cbid, external_id(owner == op_of_call.end() ? -1 : owner->second)));
    }
  }

  void kernels() {
    for (size_t i = 0; i < gpu_.kernels.size(); ++i) {
      const KernelRecord& k = gpu_.kernels[i];
      const Attribution a = i < corr_.kernels.size() ? corr_.kernels[i] : Attribution{};
      std::string scope(owner_scope(a, ops_));
      if (a.op >= 0 && ops_[static_cast<size_t>(a.op)].block >= 0 && scope != kUnattributed) {
        scope += fmt::format("[{}]", ops_[static_cast<size_t>(a.op)].block);
      }
      std::string args = fmt::format(
          R"("stream":{},"correlation":{},"External id":{},"device":{},"grid":[{},{},{}],)"
          R"("block":[{},{},{}],"registers per thread":{},"shared memory":{},"op":"{}","scope":"{}")",
          k.stream, k.correlation_id, external_id(a.op), k.device, k.grid.x, k.grid.y, k.grid.z,
          k.block.x, k.block.y, k.block.z, k.registers_per_thread, k.shared_mem_bytes(),
          escaped(owner_op(a, ops_)), escaped(scope));
      if (i < opt_.kernel_args.size() && !opt_.kernel_args[i].empty()) {
        args += "," + opt_.kernel_args[i];
      }
      const int64_t pid = opt_.gpu_pid_base + k.device;
      ev_.slice("kernel", k.name, pid, k.stream, k.start_ns, k.end_ns, args);
      launch_flow(a, k.correlation_id, pid, k.stream, k.start_ns);
    }
  }

  void memcpys() {
    for (size_t i = 0; i < gpu_.memcpys.size(); ++i) {
      const MemcpyRecord& m = gpu_.memcpys[i];
      const Attribution a = i < corr_.memcpys.size() ? corr_.memcpys[i] : Attribution{};
      const int64_t pid = opt_.gpu_pid_base + m.device;
      ev_.slice("gpu_memcpy",
                fmt::format("Memcpy {} ({} -> {})", copy_kind_name(m.kind),
                            memory_kind_name(m.src_memory), memory_kind_name(m.dst_memory)),
                pid, m.stream, m.start_ns, m.end_ns,
                fmt::format(R"("stream":{},"correlation":{},"External id":{},"device":{},)"
                            R"("bytes":{},"op":"{}")",
                            m.stream, m.correlation_id, external_id(a.op), m.device, m.bytes,
                            escaped(owner_op(a, ops_))));
      launch_flow(a, m.correlation_id, pid, m.stream, m.start_ns);
    }
  }

  void memsets() {
    for (size_t i = 0; i < gpu_.memsets.size(); ++i) {
      const MemsetRecord& m = gpu_.memsets[i];
      const Attribution a = i < corr_.memsets.size() ? corr_.memsets[i] : Attribution{};
      const int64_t pid = opt_.gpu_pid_base + m.device;
      ev_.slice("gpu_memset", fmt::format("Memset ({})", memory_kind_name(m.memory)), pid, m.stream,
                m.start_ns, m.end_ns,
                fmt::format(R"("stream":{},"correlation":{},"External id":{},"device":{},)"
                            R"("bytes":{},"op":"{}")",
                            m.stream, m.correlation_id, external_id(a.op), m.device, m.bytes,
                            escaped(owner_op(a, ops_))));
      launch_flow(a, m.correlation_id, pid, m.stream, m.start_ns);
    }
  }

 private:
  // The "External id" of the op owning an activity (-1: none), as trace.cpp numbers ops.
  int64_t external_id(int32_t op) const {
    if (op < 0) return -1;
    const auto i = static_cast<size_t>(op);
    return i < opt_.external_ids.size() ? opt_.external_ids[i] : static_cast<int64_t>(i) + 1;
  }
  // The launch arrow of one activity, when its runtime call is known.
  void launch_flow(
      const Attribution& a, uint32_t correlation_id, int64_t pid, int64_t tid, int64_t start_ns) {
    if (!opt_.flows || a.runtime < 0) return;
    const RuntimeApiRecord& r = gpu_.runtime[static_cast<size_t>(a.runtime)];
    const int64_t id = kFlowIdBase + correlation_id;
    ev_.flow('s', id, opt_.cpu_pid, tids_.at(r.thread_id), r.start_ns);
    ev_.flow('f', id, pid, tid, start_ns);
  }

  Events ev_;
  const GpuRecords& gpu_;
  const std::vector<CpuOpInterval>& ops_;
  const Correlation& corr_;
  const GpuTraceOptions& opt_;
  std::unordered_map<uint64_t, int> tids_;  // host thread id -> trace tid
};

}  // namespace

std::vector<std::string> gpu_trace_events(const GpuRecords& gpu,
                                          const std::vector<CpuOpInterval>& ops,
                                          const Correlation& corr,
                                          const GpuTraceOptions& opt) {
  std::vector<std::string> out;
  out.reserve(2 * gpu.size() + 16);
  GpuTrace trace(out, gpu, ops, corr, opt);
  trace.name_tracks();
  trace.runtime_slices();
  trace.kernels();
  trace.memcpys();
  trace.memsets();
  return out;
}

}  // namespace llmprof::rundir
