// Per-kernel, per-op and per-scope GPU time (see kernel_table.h) and kernels.csv.
#include "llmprof/gpu/kernel_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>


namespace llmprof::gpu {

namespace {

struct KernelKey {
  std::string name;
  Dim3 grid, block;
  int registers = 0;
  int64_t smem = 0;
  bool operator<(const KernelKey& o) const {
    return std::tie(name, grid, block, registers, smem) <
           std::tie(o.name, o.grid, o.block, o.registers, o.smem);
  }
};

struct KernelAcc {
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t min_ns = std::numeric_limits<int64_t>::max();
  int64_t max_ns = 0;
  std::map<std::pair<std::string, std::string>, int64_t> owner_ns;  // (op, scope) -> time
  const KernelRecord* first = nullptr;
};

struct Acc {
  int64_t ns = 0;
  int64_t launches = 0;
};

// The window's sums: per kernel configuration, per op and per (scope, block, pass).
struct Sums {
  std::map<KernelKey, KernelAcc> kernels;
  std::map<std::string, Acc> by_op;
  std::map<std::tuple<std::string, int, std::string>, Acc> by_scope;
  int64_t kernel_ns = 0, memcpy_ns = 0, memset_ns = 0;
  int64_t unattributed = 0;  // activities without an op
};

// Adds one activity's time to its op and scope rows.
void add_owner(Sums& sums,
               const std::vector<CpuOpInterval>& ops,
               const Attribution& a,
               int64_t ns) {
  if (a.op < 0) ++sums.unattributed;
  Acc& o = sums.by_op[std::string(owner_op(a, ops))];
  o.ns += ns;
  ++o.launches;
  const CpuOpInterval* op = a.op >= 0 ? &ops[static_cast<size_t>(a.op)] : nullptr;
  const bool scoped = op != nullptr && !op->scope.empty();
  Acc& s = sums.by_scope[{std::string(owner_scope(a, ops)), scoped ? op->block : -1,
                          op != nullptr ? op->pass : std::string()}];
  s.ns += ns;
  ++s.launches;
}

Sums sum_records(const GpuRecords& gpu,
                 const std::vector<CpuOpInterval>& ops,
                 const Correlation& corr) {
  Sums sums;
  for (size_t i = 0; i < gpu.kernels.size(); ++i) {
    const KernelRecord& k = gpu.kernels[i];
    const Attribution a = i < corr.kernels.size() ? corr.kernels[i] : Attribution{};
    const int64_t ns = k.duration_ns();
    sums.kernel_ns += ns;
    KernelAcc& acc =
        sums.kernels[{k.name, k.grid, k.block, k.registers_per_thread, k.shared_mem_bytes()}];
    if (acc.first == nullptr) acc.first = &k;
    ++acc.calls;
    acc.total_ns += ns;
    acc.min_ns = std::min(acc.min_ns, ns);
    acc.max_ns = std::max(acc.max_ns, ns);
    acc.owner_ns[{std::string(owner_op(a, ops)), std::string(owner_scope(a, ops))}] += ns;
    add_owner(sums, ops, a, ns);
  }
  for (size_t i = 0; i < gpu.memcpys.size(); ++i) {
    const int64_t ns = gpu.memcpys[i].end_ns - gpu.memcpys[i].start_ns;
    sums.memcpy_ns += ns;
    add_owner(sums, ops, i < corr.memcpys.size() ? corr.memcpys[i] : Attribution{}, ns);
  }
  for (size_t i = 0; i < gpu.memsets.size(); ++i) {
    const int64_t ns = gpu.memsets[i].end_ns - gpu.memsets[i].start_ns;
    sums.memset_ns += ns;
    add_owner(sums, ops, i < corr.memsets.size() ? corr.memsets[i] : Attribution{}, ns);
  }
  return sums;
}

KernelRow kernel_row(const KernelKey& key,
                     const KernelAcc& acc,
                     double per_step,
                     const SmLimits& limits) {
  KernelRow r;
  r.kernel = key.name;
  r.calls = acc.calls * per_step;
  r.total_us = acc.total_ns * 1e-3 * per_step;
  r.mean_us = acc.total_ns * 1e-3 / acc.calls;
  r.min_us = acc.min_ns * 1e-3;
  r.max_us = acc.max_ns * 1e-3;
  r.grid = key.grid;
  r.block = key.block;
  r.registers = key.registers;
  r.shared_mem_bytes = key.smem;
  if (auto e = estimate_occupancy(*acc.first, limits)) r.est_occupancy = e->occupancy;
  // The owner with the most time; ties go to the smallest (op, scope), deterministically.
  auto best = acc.owner_ns.begin();
  for (auto it = acc.owner_ns.begin(); it != acc.owner_ns.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  r.owning_op = best->first.first;
  r.owning_scope = best->first.second;
  r.owners = static_cast<int>(acc.owner_ns.size());
  return r;
}

}  // namespace

std::string format_dim3(const Dim3& d) { return fmt::format("{}x{}x{}", d.x, d.y, d.z); }

GpuTables aggregate_gpu(const GpuRecords& gpu,
                        const std::vector<CpuOpInterval>& ops,
                        const Correlation& corr,
                        int n_steps,
                        const SmLimits& limits) {
  GpuTables t;
  t.n_steps = std::max(1, n_steps);
  const double per_step = 1.0 / t.n_steps;
  const Sums sums = sum_records(gpu, ops, corr);
  t.unattributed_activities = sums.unattributed;
  t.kernel_ms = sums.kernel_ns * 1e-6 * per_step;
  t.memcpy_ms = sums.memcpy_ns * 1e-6 * per_step;
  t.memset_ms = sums.memset_ns * 1e-6 * per_step;

  for (const auto& [key, acc] : sums.kernels) {
    t.kernels.push_back(kernel_row(key, acc, per_step, limits));
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const KernelRow& a, const KernelRow& b) { return a.total_us > b.total_us; });
  for (const auto& [op, acc] : sums.by_op) {
    t.ops.push_back({op, acc.ns * 1e-6 * per_step, acc.launches * per_step});
  }
  std::stable_sort(t.ops.begin(), t.ops.end(),
                   [](const OpGpuRow& a, const OpGpuRow& b) { return a.gpu_ms > b.gpu_ms; });
  for (const auto& [key, acc] : sums.by_scope) {
    t.scopes.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key),
                        acc.ns * 1e-6 * per_step, acc.launches * per_step});
  }
  std::stable_sort(t.scopes.begin(), t.scopes.end(),
                   [](const ScopeGpuRow& a, const ScopeGpuRow& b) { return a.gpu_ms > b.gpu_ms; });
  return t;
}

GpuTables merge_gpu_tables(const GpuTables& a, const GpuTables& b) {
  GpuTables t;
  t.n_steps = a.n_steps + b.n_steps;
  const double wa = static_cast<double>(a.n_steps) / t.n_steps;
  const double wb = static_cast<double>(b.n_steps) / t.n_steps;
  t.kernel_ms = a.kernel_ms * wa + b.kernel_ms * wb;
  t.memcpy_ms = a.memcpy_ms * wa + b.memcpy_ms * wb;
  t.memset_ms = a.memset_ms * wa + b.memset_ms * wb;
  t.unattributed_activities = a.unattributed_activities + b.unattributed_activities;

  std::map<KernelKey, KernelRow> kernels;
  std::map<KernelKey, double> owner_share;  // the current owner's side's time, over all steps
  const auto add_kernels = [&](const GpuTables& side, double w) {
    for (const KernelRow& r : side.kernels) {
      const KernelKey key{r.kernel, r.grid, r.block, r.registers, r.shared_mem_bytes};
      const double share = r.total_us * side.n_steps;
      auto [it, fresh] = kernels.try_emplace(key, r);
      KernelRow& m = it->second;
      if (fresh) {
        m.calls = r.calls * w;
        m.total_us = r.total_us * w;
        owner_share[key] = share;
        continue;
      }
      m.calls += r.calls * w;
      m.total_us += r.total_us * w;
      m.min_us = std::min(m.min_us, r.min_us);
      m.max_us = std::max(m.max_us, r.max_us);
      m.owners = std::max(m.owners, r.owners);
      if (share > owner_share[key]) {
        owner_share[key] = share;
        m.owning_op = r.owning_op;
        m.owning_scope = r.owning_scope;
      }
    }
  };
  add_kernels(a, wa);
  add_kernels(b, wb);
  for (auto& [key, r] : kernels) {
    r.mean_us = r.calls > 0 ? r.total_us / r.calls : 0;
    t.kernels.push_back(std::move(r));
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const KernelRow& x, const KernelRow& y) { return x.total_us > y.total_us; });

  std::map<std::string, OpGpuRow> ops;
  for (const auto& [side, w] : {std::pair<const GpuTables*, double>{&a, wa}, {&b, wb}}) {
    for (const OpGpuRow& r : side->ops) {
      OpGpuRow& m = ops.try_emplace(r.op, OpGpuRow{r.op, 0, 0}).first->second;
      m.gpu_ms += r.gpu_ms * w;
      m.launches += r.launches * w;
    }
  }
  for (auto& [op, r] : ops) t.ops.push_back(r);
  std::stable_sort(t.ops.begin(), t.ops.end(),
                   [](const OpGpuRow& x, const OpGpuRow& y) { return x.gpu_ms > y.gpu_ms; });

  std::map<std::tuple<std::string, int, std::string>, ScopeGpuRow> scopes;
  for (const auto& [side, w] : {std::pair<const GpuTables*, double>{&a, wa}, {&b, wb}}) {
    for (const ScopeGpuRow& r : side->scopes) {
      ScopeGpuRow& m = scopes.try_emplace({r.scope, r.block, r.pass},
                                          ScopeGpuRow{r.scope, r.block, r.pass, 0, 0})
                           .first->second;
      m.gpu_ms += r.gpu_ms * w;
      m.launches += r.launches * w;
    }
  }
  for (auto& [key, r] : scopes) t.scopes.push_back(r);
  std::stable_sort(t.scopes.begin(), t.scopes.end(),
                   [](const ScopeGpuRow& x, const ScopeGpuRow& y) { return x.gpu_ms > y.gpu_ms; });
  return t;
}

}  // namespace llmprof::gpu
