// trace.json in Chrome trace event format, in Kineto's categories and argument names (what HTA
// reads): the one trace writer; the GPU records' events are rendered by trace_gpu.cpp. Compact on purpose (bytes per event are benchmarked): microsecond timestamps with 3
// decimals, args only where they carry information. pid = the training process's id; tid = the
// recording thread index + 1.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>

#include "llmprof/base/clock.h"
#include "llmprof/output/gzip.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/profile/analysis.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/tables.h"
#include "trace_json.h"

namespace llmprof::rundir {

using namespace llmprof::profile;  // the records this file formats

namespace {

using detail::append_escaped;

class TraceBuffer {
 public:
  TraceBuffer(int64_t origin_ns, int64_t pid, const std::string& distributed_info,
              const std::string& device_properties)
      : origin_ns_(origin_ns), pid_(pid) {
    out_.reserve(1 << 20);
    // Metadata before the events: HTA's streaming parser reads it up to "traceEvents".
    fmt::format_to(std::back_inserter(out_),
                   "{{\"schemaVersion\": 1, \"distributedInfo\": {}, \"deviceProperties\": {}, "
                   "\"traceEvents\": [\n",
                   distributed_info, device_properties);
  }

  // A complete slice ("ph":"X").
  void slice(std::string_view cat, std::string_view name, int tid, int64_t start_ns, int64_t end_ns,
             const std::string& args) {
    begin();
    out_ += R"({"ph":"X","cat":")";
    out_ += cat;
    out_ += R"(","name":")";
    append_escaped(out_, name);
    fmt::format_to(std::back_inserter(out_), R"(","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f})", pid_,
                   tid, us(start_ns), static_cast<double>(end_ns - start_ns) * 1e-3);
    if (!args.empty()) {
      out_ += R"(,"args":{)";
      out_ += args;
      out_ += "}";
    }
    out_ += "}";
  }
  void counter(std::string_view name, int64_t t_ns, std::string_view series, int64_t value) {
    begin();
    fmt::format_to(std::back_inserter(out_),
                   R"({{"ph":"C","name":"{}","pid":{},"ts":{:.3f},"args":{{"{}":{}}}}})", name,
                   pid_, us(t_ns), series, value);
  }
  // Flow start ("s") inside a forward op, finish ("f", bound to the enclosing slice) at a node.
  void flow(char ph, int64_t id, int tid, int64_t t_ns) {
    begin();
    fmt::format_to(std::back_inserter(out_),
                   R"({{"ph":"{}","cat":"flow","name":"fwd->bwd","id":{},"pid":{},"tid":{},"ts":{:.3f}{}}})",
                   ph, id, pid_, tid, us(t_ns), ph == 'f' ? R"(,"bp":"e")" : "");
  }
  void metadata(std::string_view what, int tid, std::string_view name) {
    begin();
    fmt::format_to(std::back_inserter(out_),
                   R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"name":"{}"}}}})", what, pid_,
                   tid, name);
  }
  // An event rendered elsewhere (GPU activity), as it is.
  void raw(const std::string& event) {
    begin();
    out_ += event;
  }
  std::string finish() {
    out_ += fmt::format(
        "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"schema_version\":{},\"producer\":"
        "\"llmprof\"}}}}\n",
        kTraceSchemaVersion);
    return std::move(out_);
  }
  int64_t events() const { return events_; }

 private:
  void begin() {
    if (events_++ > 0) out_ += ",\n";
  }
  double us(int64_t t_ns) const { return detail::trace_us(t_ns, origin_ns_); }
  std::string out_;
  int64_t origin_ns_;
  int64_t pid_;
  int64_t events_ = 0;
};

}  // namespace

namespace {

// The device type c10d pairs a backend with in a process group's backend_config ("cuda:nccl").
std::string_view backend_device(config::DdpBackend backend) {
  switch (backend) {
    case config::DdpBackend::kNccl:
      return "cuda";
    case config::DdpBackend::kAuto:  // never resolved to: the group's is gloo or nccl
    case config::DdpBackend::kGloo:
      break;
  }
  return "cpu";
}

}  // namespace

std::string distributed_info_json(const TraceDistributed& d) {
  std::string ranks;
  for (int r = 0; r < d.world_size; ++r) ranks += fmt::format("{}{}", r ? ", " : "", r);
  return fmt::format(
      "{{\"backend\": \"{}\", \"rank\": {}, \"world_size\": {}, \"pg_count\": 1, \"pg_config\": "
      "[{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"{}:{}\", "
      "\"pg_size\": {}, \"ranks\": [{}]}}]}}",
      config::name(d.backend), d.rank, d.world_size, backend_device(d.backend),
      config::name(d.backend), d.world_size, ranks);
}

std::string collective_args(const CollectiveSlice& c) {
  return fmt::format(
      R"("Collective name":"{}","In msg nelems":{},"Out msg nelems":{},"dtype":"{}",)"
      R"("Group size":{},"Process Group Name":"{}","Process Group Description":"default_pg",)"
      R"("Seq":{},"step":{},"bucket":{},"bytes":{})",
      c.name, c.in_nelems, c.out_nelems, c.dtype, c.group_size, c.pg_name, c.seq, c.step,
      c.bucket, c.bytes);
}

namespace {

// Per collective, the External id (op index + 1) of c10d's record_param_comms op issued inside
// it (launch to the issuing call's return), or 0.
std::vector<int64_t> collective_op_ids(const TraceData& data,
                                       const std::vector<CollectiveSlice>& collectives) {
  std::vector<int64_t> ids(collectives.size(), 0);
  for (size_t i = 0; i < data.ops.size() && !collectives.empty(); ++i) {
    const OpEvent& e = data.ops[i];
    if (e.kind != OpEvent::kOp || data.names[e.name_id] != "record_param_comms") continue;
    for (size_t k = 0; k < collectives.size(); ++k) {
      const CollectiveSlice& c = collectives[k];
      const int64_t issued = std::max(c.issued_ns, c.start_ns);
      if (ids[k] == 0 && e.start_ns >= c.start_ns && e.end_ns <= issued) {
        ids[k] = static_cast<int64_t>(i) + 1;
        break;
      }
    }
  }
  return ids;
}

bool is_collective_op(const TraceData& data, size_t i, const std::vector<int64_t>& ids) {
  if (data.names[data.ops[i].name_id] != "record_param_comms") return false;
  return std::find(ids.begin(), ids.end(), static_cast<int64_t>(i) + 1) != ids.end();
}

// One process per rank (pid = rank, as HTA's per-rank traces); else this process's id.
int64_t trace_pid(const TraceOptions& options) {
  return options.distributed   ? options.distributed->rank
         : options.cpu_pid > 0 ? options.cpu_pid
                               : static_cast<int64_t>(::getpid());
}

// The process's and threads' names; the c10d track's when there are collectives.
void write_track_names(TraceBuffer& tb,
                       const TraceData& data,
                       const TraceOptions& options,
                       int comm_tid) {
  tb.metadata("process_name", 1,
              options.distributed ? fmt::format("llmprof train rank {}", options.distributed->rank)
                                  : std::string("llmprof train"));
  for (int t = 0; t < std::max(1, data.num_threads); ++t) {
    tb.metadata("thread_name", t + 1, t == 0 ? "train loop" : fmt::format("thread {}", t));
  }
  if (!options.collectives.empty()) {
    tb.metadata("thread_name", comm_tid,
                options.distributed ? fmt::format("c10d {}", config::name(options.distributed->backend))
                                    : std::string("c10d"));
  }
}

void write_step_slices(TraceBuffer& tb, const std::vector<StepRecord>& steps) {
  for (const StepRecord& s : steps) {
    // Kineto's step annotation: HTA finds iterations by this name.
    tb.slice("user_annotation", fmt::format("ProfilerStep#{}", s.step), 1, s.start_ns, s.end_ns,
             "");
    for (int i = 0; i < s.num_intervals; ++i) {
      const PhaseInterval& p = s.intervals[i];
      tb.slice("user_annotation", phase_name(p.phase), 1, p.start_ns, p.end_ns,
               R"("llmprof":"phase")");
    }
  }
}

void write_scope_slices(TraceBuffer& tb, const TraceData& data) {
  for (size_t i = 0; i < data.scopes.size(); ++i) {
    const ScopeEvent& e = data.scopes[i];
    std::string name(scope_name(static_cast<Scope>(e.scope)));
    if (e.block >= 0) name += fmt::format("[{}]", e.block);
    std::string args = fmt::format(R"("seq":[{},{}])", e.seq_begin, e.seq_end);
    if (i < data.scope_alloc_bytes.size() && data.scope_alloc_bytes[i] > 0) {
      args += fmt::format(R"(,"alloc_bytes":{},"saved_bytes":{})", data.scope_alloc_bytes[i],
                          data.scope_saved_bytes[i]);
    }
    args += e.pass == 0 ? R"(,"llmprof":"scope")" : R"(,"llmprof":"recompute")";
    tb.slice("user_annotation", name, 1, e.start_ns, e.end_ns, args);
  }
}

// An autograd node's key: its step and sequence number.
int64_t autograd_node_key(const OpEvent& e) { return (static_cast<int64_t>(e.step) << 32) ^ e.seq; }

// The forward op that created each autograd node: the last top-level forward op with that
// sequence number (ops that create no node leave the number to the next op).
std::unordered_map<int64_t, size_t> node_creators(const TraceData& data) {
  std::unordered_map<int64_t, size_t> creator;
  for (size_t i = 0; i < data.ops.size(); ++i) {
    const OpEvent& e = data.ops[i];
    if (e.kind == OpEvent::kOp && e.seq >= 0 && e.phase == static_cast<uint8_t>(Phase::kForward)) {
      creator[autograd_node_key(e)] = i;
    }
  }
  return creator;
}

void write_collective_slices(TraceBuffer& tb,
                             const std::vector<CollectiveSlice>& collectives,
                             const std::vector<int64_t>& comm_ext,
                             int comm_tid) {
  for (size_t k = 0; k < collectives.size(); ++k) {
    const CollectiveSlice& c = collectives[k];
    std::string args = collective_args(c);
    if (comm_ext[k] > 0) args = fmt::format(R"("External id":{},)", comm_ext[k]) + args;
    tb.slice("cpu_op", "record_param_comms", comm_tid, c.start_ns, c.end_ns, args);
  }
}

// The args of op i: its External id, sequence number, FLOPs, input shapes, bytes, node mark.
std::string op_slice_args(const TraceData& data, size_t i) {
  const OpEvent& e = data.ops[i];
  // External id: what the GPU events' runtime calls and kernels name as their op (i + 1).
  std::string args = fmt::format(R"("External id":{})", i + 1);
  if (e.seq >= 0) args += fmt::format(R"(,"Sequence number":{})", e.seq);
  if (e.shape_id >= 0) {
    const ShapeRecord& s = data.shapes[static_cast<size_t>(e.shape_id)];
    if (auto f = op_flops(data.names[e.name_id], s)) args += fmt::format(R"(,"flops":{})", *f);
    args += R"(,"shapes":")";
    for (int k = 0; k < ShapeRecord::kMaxInputs; ++k) {
      if (s.ndim[k] < 0) continue;
      args += "[";
      for (int d = 0; d < s.ndim[k]; ++d) args += (d ? "," : "") + std::to_string(s.dims[k][d]);
      args += "]";
    }
    args += "\"";
  }
  if (e.alloc_bytes > 0) args += fmt::format(R"(,"bytes":{})", e.alloc_bytes);
  if (e.kind == OpEvent::kBackwardNode) args += R"(,"llmprof":"backward_node")";
  return args;
}

// Every op but the collectives' own, each backward node with a flow from its creating op.
void write_op_slices(TraceBuffer& tb, const TraceData& data, const std::vector<int64_t>& comm_ext) {
  const std::unordered_map<int64_t, size_t> creator = node_creators(data);
  for (size_t i = 0; i < data.ops.size(); ++i) {
    const OpEvent& e = data.ops[i];
    if (is_collective_op(data, i, comm_ext)) continue;
    tb.slice("cpu_op", data.names[e.name_id], e.thread + 1, e.start_ns, e.end_ns,
             op_slice_args(data, i));
    if (e.kind == OpEvent::kBackwardNode && e.seq >= 0) {
      auto it = creator.find(autograd_node_key(e));
      if (it != creator.end()) {
        const OpEvent& f = data.ops[it->second];
        tb.flow('s', autograd_node_key(e), f.thread + 1, f.start_ns);
        tb.flow('f', autograd_node_key(e), e.thread + 1, e.start_ns);
      }
    }
  }
}

void write_memory_counters(TraceBuffer& tb,
                           const TraceData& data,
                           const std::vector<StepRecord>& steps,
                           int64_t origin) {
  for (const PhaseMemory& m : data.memory) {
    // The counter at the phase's end: peak during the phase and what remains allocated.
    int64_t t = origin;
    for (const StepRecord& s : steps) {
      if (s.step != m.step) continue;
      for (int i = 0; i < s.num_intervals; ++i) {
        if (static_cast<uint8_t>(s.intervals[i].phase) == m.phase) t = s.intervals[i].end_ns;
      }
    }
    tb.counter("allocated_bytes", t, "peak", m.peak_allocated_bytes);
    tb.counter("allocated_bytes_end", t, "end", m.end_allocated_bytes);
  }
}

}  // namespace

int64_t trace_origin_ns(const TraceData& data,
                        const std::vector<StepRecord>& steps,
                        const std::optional<TraceDistributed>& distributed) {
  if (distributed) return -distributed->clock_offset_ns;  // us(t) = t + offset: rank 0's clock
  int64_t origin = steps.empty() ? 0 : steps.front().start_ns;
  for (const auto& e : data.ops) origin = std::min(origin == 0 ? e.start_ns : origin, e.start_ns);
  return origin;
}

TraceStats write_trace(const std::string& path,
                       const TraceData& data,
                       const std::vector<StepRecord>& steps,
                       const TraceOptions& options) {
  const int64_t t0 = now_ns();
  const int64_t origin = trace_origin_ns(data, steps, options.distributed);
  TraceBuffer tb(origin, trace_pid(options),
                 options.distributed ? distributed_info_json(*options.distributed)
                                     : R"({"rank": 0, "world_size": 1})",
                 options.device_properties_json);
  // Collectives on their own track after the op threads' (Gloo's worker, NCCL's stream launch).
  const int comm_tid = std::max(1, data.num_threads) + 1;
  write_track_names(tb, data, options, comm_tid);
  write_step_slices(tb, steps);
  write_scope_slices(tb, data);
  // c10d's own record_param_comms op (traced at profile.level=ops) inside a collective's issue is
  // that collective: one slice on the c10d track with Kineto's args and the op's External id
  // (what its GPU work names), not a second, arg-less record_param_comms.
  const std::vector<int64_t> comm_ext = collective_op_ids(data, options.collectives);
  write_collective_slices(tb, options.collectives, comm_ext, comm_tid);
  write_op_slices(tb, data, comm_ext);
  write_memory_counters(tb, data, steps, origin);
  for (const std::string& event : options.extra_events) tb.raw(event);
  TraceStats stats;
  stats.events = tb.events();
  std::string text = tb.finish();
  if (options.gzip) text = output::gzip_compress(text);
  stats.bytes = static_cast<int64_t>(text.size());
  output::write_file_atomic(path, text);
  stats.write_ms = static_cast<double>(now_ns() - t0) * 1e-6;
  return stats;
}

}  // namespace llmprof::rundir
