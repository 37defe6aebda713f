// Correlation of GPU activity with runtime calls and CPU ops (see correlate.h).
#include "llmprof/gpu/correlate.h"

#include <algorithm>
#include <unordered_map>

namespace llmprof::gpu {

namespace {

// The ops of one thread sorted by start (outer before inner at equal starts), with each op's
// enclosing op, so "innermost op containing t" is: the last op starting at or before t, then up
// its parent chain to the first that has not ended. Under proper nesting every op containing t
// is an ancestor (or itself) of that last op, so the walk is bounded by the nesting depth.
struct ThreadOps {
  std::vector<int32_t> order;   // op indexes sorted by start
  std::vector<int64_t> starts;  // starts[i] = ops[order[i]].start_ns
  std::vector<int32_t> parent;  // parent[i]: position in order of the enclosing op, -1 at top
};

std::unordered_map<uint64_t, ThreadOps> index_ops(const std::vector<CpuOpInterval>& ops) {
  std::unordered_map<uint64_t, ThreadOps> by_thread;
  for (size_t i = 0; i < ops.size(); ++i) {
    by_thread[ops[i].thread].order.push_back(static_cast<int32_t>(i));
  }
  for (auto& [thread, t] : by_thread) {
    std::sort(t.order.begin(), t.order.end(), [&](int32_t a, int32_t b) {
      if (ops[a].start_ns != ops[b].start_ns) return ops[a].start_ns < ops[b].start_ns;
      return ops[a].end_ns > ops[b].end_ns;
    });
    t.starts.resize(t.order.size());
    t.parent.assign(t.order.size(), -1);
    std::vector<int32_t> stack;
    for (size_t i = 0; i < t.order.size(); ++i) {
      const CpuOpInterval& op = ops[t.order[i]];
      t.starts[i] = op.start_ns;
      while (!stack.empty() && ops[t.order[stack.back()]].end_ns <= op.start_ns) stack.pop_back();
      t.parent[i] = stack.empty() ? -1 : stack.back();
      stack.push_back(static_cast<int32_t>(i));
    }
  }
  return by_thread;
}

int32_t innermost_op(const std::unordered_map<uint64_t, ThreadOps>& by_thread,
                     const std::vector<CpuOpInterval>& ops,
                     uint64_t thread,
                     int64_t t_ns) {
  auto it = by_thread.find(thread);
  if (it == by_thread.end()) return -1;
  const ThreadOps& t = it->second;
  auto pos = std::upper_bound(t.starts.begin(), t.starts.end(), t_ns);
  if (pos == t.starts.begin()) return -1;
  int32_t i = static_cast<int32_t>(pos - t.starts.begin()) - 1;
  while (i >= 0 && ops[t.order[i]].end_ns <= t_ns) i = t.parent[i];
  return i >= 0 ? t.order[i] : -1;
}

}  // namespace

Correlation correlate(const GpuRecords& gpu, const std::vector<CpuOpInterval>& ops) {
  std::unordered_map<uint32_t, int32_t> runtime_of;  // correlation id -> runtime record
  runtime_of.reserve(gpu.runtime.size());
  for (size_t i = 0; i < gpu.runtime.size(); ++i) {
    runtime_of.emplace(gpu.runtime[i].correlation_id, static_cast<int32_t>(i));
  }
  const auto by_thread = index_ops(ops);
  Correlation c;
  auto attribute = [&](uint32_t correlation_id) {
    Attribution a;
    auto it = runtime_of.find(correlation_id);
    if (it == runtime_of.end()) {
      ++c.without_launch;
      return a;
    }
    a.runtime = it->second;
    const RuntimeApiRecord& r = gpu.runtime[static_cast<size_t>(a.runtime)];
    a.op = innermost_op(by_thread, ops, r.thread_id, r.start_ns);
    if (a.op < 0) ++c.without_op;
    return a;
  };
  c.kernels.reserve(gpu.kernels.size());
  for (const KernelRecord& k : gpu.kernels) c.kernels.push_back(attribute(k.correlation_id));
  c.memcpys.reserve(gpu.memcpys.size());
  for (const MemcpyRecord& m : gpu.memcpys) c.memcpys.push_back(attribute(m.correlation_id));
  c.memsets.reserve(gpu.memsets.size());
  for (const MemsetRecord& m : gpu.memsets) c.memsets.push_back(attribute(m.correlation_id));
  return c;
}

std::string_view owner_op(const Attribution& a, const std::vector<CpuOpInterval>& ops) {
  return a.op >= 0 ? std::string_view(ops[static_cast<size_t>(a.op)].name) : kUnattributed;
}

std::string_view owner_scope(const Attribution& a, const std::vector<CpuOpInterval>& ops) {
  if (a.op < 0) return kUnattributed;
  const std::string& scope = ops[static_cast<size_t>(a.op)].scope;
  return scope.empty() ? kUnattributed : std::string_view(scope);
}

}  // namespace llmprof::gpu
