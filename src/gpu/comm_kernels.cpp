// Communication kernels by their launching collective (llmprof/gpu/comm_kernels.h).
#include "llmprof/gpu/comm_kernels.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace llmprof::gpu {

namespace {

// The issue holding a host call that started at t on thread, or -1. `order` sorts issues by start.
int32_t issue_at(const std::vector<CollectiveIssue>& issues, const std::vector<int32_t>& order,
                 int64_t t, uint64_t thread) {
  // The last issue starting at or before t; issues on other threads may interleave, so walk back
  // over those that started earlier while one could still hold t.
  auto it = std::upper_bound(order.begin(), order.end(), t, [&](int64_t v, int32_t i) {
    return v < issues[static_cast<size_t>(i)].start_ns;
  });
  while (it != order.begin()) {
    --it;
    const CollectiveIssue& c = issues[static_cast<size_t>(*it)];
    const bool same_thread = c.thread_id == 0 || thread == 0 || c.thread_id == thread;
    if (same_thread && t <= c.end_ns) return *it;
    if (same_thread) return -1;  // the thread's latest issue before t had returned
  }
  return -1;
}

}  // namespace

std::vector<int32_t> collective_of_kernels(const GpuRecords& gpu,
                                           const std::vector<CollectiveIssue>& issues) {
  std::vector<int32_t> order(issues.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return issues[static_cast<size_t>(a)].start_ns < issues[static_cast<size_t>(b)].start_ns;
  });
  std::unordered_map<uint32_t, const RuntimeApiRecord*> launch_of;
  launch_of.reserve(gpu.runtime.size());
  for (const RuntimeApiRecord& r : gpu.runtime) launch_of.emplace(r.correlation_id, &r);
  std::vector<int32_t> out(gpu.kernels.size(), -1);
  for (size_t k = 0; k < gpu.kernels.size(); ++k) {
    const auto call = launch_of.find(gpu.kernels[k].correlation_id);
    if (call == launch_of.end()) continue;
    out[k] = issue_at(issues, order, call->second->start_ns, call->second->thread_id);
  }
  return out;
}

}  // namespace llmprof::gpu
