#include "llmprof/profile/analysis.h"

#include "llmprof/profile/bytes.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace llmprof::profile {

namespace {

constexpr const char* kPassNames[3] = {"forward", "recompute", "backward"};

bool is_eval(const OpEvent& e) { return e.phase == static_cast<uint8_t>(Phase::kEval); }

double self_ns(const OpEvent& e) { return static_cast<double>(e.end_ns - e.start_ns - e.child_ns); }

}  // namespace

// Per op event: whether it has a model (op_flops or op_bytes from its shapes), and its own FLOPs
// and bytes: the model less that of the nearest modelled events nested in it, never below 0.
// So each FLOP and byte is counted at one level: clone keeps none of its copy_'s bytes, the
// aten::mul_(Scalar) around an aten::mul_(Tensor) none of the work.
struct AnalysisTotals::OwnModels {
  std::vector<uint8_t> modelled;
  std::vector<std::optional<double>> flops, bytes;
};

AnalysisTotals::OwnModels AnalysisTotals::own_models(const TraceData& data) {
  const size_t n = data.ops.size();
  OwnModels m{std::vector<uint8_t>(n, 0), std::vector<std::optional<double>>(n),
              std::vector<std::optional<double>>(n)};
  std::vector<int32_t> above(n, -1);  // the nearest modelled event around it
  std::vector<double> inner_flops(n, 0), inner_bytes(n, 0);
  for (size_t i = 0; i < n; ++i) {  // parents come before their children
    const int32_t p = data.parents[i];
    if (p >= 0) above[i] = m.modelled[static_cast<size_t>(p)] != 0 ? p : above[static_cast<size_t>(p)];
    const OpEvent& e = data.ops[i];
    if (e.kind != OpEvent::kOp || e.shape_id < 0) continue;
    const ShapeRecord& s = data.shapes[static_cast<size_t>(e.shape_id)];
    const std::string_view name = data.names[e.name_id];
    m.flops[i] = op_flops(name, s);
    m.bytes[i] = op_bytes(name, s);
    if (!m.flops[i] && !m.bytes[i]) continue;
    m.modelled[i] = 1;
    if (above[i] < 0) continue;
    inner_flops[static_cast<size_t>(above[i])] += m.flops[i].value_or(0);
    inner_bytes[static_cast<size_t>(above[i])] += m.bytes[i].value_or(0);
  }
  for (size_t i = 0; i < n; ++i) {
    if (m.flops[i]) m.flops[i] = std::max(0.0, *m.flops[i] - inner_flops[i]);
    if (m.bytes[i]) m.bytes[i] = std::max(0.0, *m.bytes[i] - inner_bytes[i]);
  }
  return m;
}

Analysis analyze(const TraceData& data,
                 const std::vector<StepPhases>& phases,
                 const ScopeFlops& fwd_flops_per_call,
                 double peak_flops_per_s,
                 double peak_bytes_per_s) {
  AnalysisTotals totals(Roofs{peak_flops_per_s, peak_bytes_per_s});
  totals.add(data, phases);
  return totals.result(fwd_flops_per_call);
}

void AnalysisTotals::add(const TraceData& data, const std::vector<StepPhases>& phases,
                         const std::vector<double>* event_gpu_ns) {
  if (data.steps.empty()) return;
  n_steps_ += static_cast<int>(data.steps.size());
  for (const auto& p : phases) {
    forward_phase_ms_ += p.forward_ms;
    backward_phase_ms_ += p.backward_ms;
  }

  add_scopes(data);
  const Owners owners = add_nodes(data);
  const OwnModels own = own_models(data);
  add_roofline(data, owners, own);
  if (event_gpu_ns != nullptr && event_gpu_ns->size() == data.ops.size()) {
    add_gpu(data, owners, *event_gpu_ns);
  }
  add_ops(data, own);

  // ---- activations: bytes left alive by each forward scope ------------------------------------
  for (size_t i = 0; i < data.scopes.size() && i < data.scope_saved_bytes.size(); ++i) {
    const ScopeEvent& e = data.scopes[i];
    if (e.pass != 0) continue;
    auto& [saved, alloc] = activations_[{e.scope, e.block}];
    saved += static_cast<double>(data.scope_saved_bytes[i]);
    alloc += static_cast<double>(data.scope_alloc_bytes[i]);
  }
}

// Forward (and recompute) scopes: total and self time per (scope, block, pass).
void AnalysisTotals::add_scopes(const TraceData& data) {
  std::vector<double> child_ns(data.scopes.size(), 0);
  for (size_t i = 0; i < data.scopes.size(); ++i) {
    const ScopeEvent& e = data.scopes[i];
    if (e.parent >= 0) child_ns[static_cast<size_t>(e.parent)] += static_cast<double>(e.end_ns - e.start_ns);
  }
  for (size_t i = 0; i < data.scopes.size(); ++i) {
    const ScopeEvent& e = data.scopes[i];
    const double dur = static_cast<double>(e.end_ns - e.start_ns);
    Acc& x = scopes_acc_[{e.pass, e.scope, e.block}];
    x.calls += 1;
    x.total_ns += dur;
    x.self_ns += dur - child_ns[i];
    if (e.parent < 0 && e.pass == 0) forward_scopes_ns_ += dur;
  }
  scopes_ += static_cast<double>(data.scopes.size());
}

// Backward nodes -> the forward scope that created them, through sequence numbers.
AnalysisTotals::Owners AnalysisTotals::add_nodes(const TraceData& data) {
  // Per step: seq -> innermost scope event (events are in enter order, so inner ones overwrite).
  std::unordered_map<int32_t, std::pair<int64_t, std::vector<int32_t>>> seq_maps;
  for (size_t i = 0; i < data.scopes.size(); ++i) {
    const ScopeEvent& e = data.scopes[i];
    auto& [base, map] = seq_maps[e.step];
    if (map.empty()) base = e.seq_begin;
    if (e.seq_begin < base) continue;  // out of order (should not happen)
    if (static_cast<size_t>(e.seq_end - base) > map.size()) map.resize(e.seq_end - base, -1);
    for (int64_t s = e.seq_begin; s < e.seq_end; ++s) map[s - base] = static_cast<int32_t>(i);
  }
  // Node self time: duration minus nested nodes (activation checkpointing nests them).
  const size_t n = data.ops.size();
  std::vector<double> nested_nodes(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (data.ops[i].kind != OpEvent::kBackwardNode) continue;
    for (int32_t p = data.parents[i]; p >= 0; p = data.parents[p]) {
      if (data.ops[p].kind == OpEvent::kBackwardNode) {
        nested_nodes[p] += static_cast<double>(data.ops[i].end_ns - data.ops[i].start_ns);
        break;
      }
    }
  }
  // Per backward node: the scope event it is attributed to, or its bwd_other_ row.
  Owners owners{std::vector<int32_t>(n, -1), std::vector<Acc*>(n, nullptr)};
  std::vector<int32_t>& node_scope = owners.node_scope;
  std::vector<Acc*>& node_other = owners.node_other;
  for (size_t i = 0; i < n; ++i) {
    const OpEvent& e = data.ops[i];
    if (e.kind != OpEvent::kBackwardNode || is_eval(e)) continue;
    const double self = static_cast<double>(e.end_ns - e.start_ns) - nested_nodes[i];
    backward_nodes_ns_ += self;
    int32_t scope_event = -1;
    auto it = seq_maps.find(e.step);
    if (it != seq_maps.end() && e.seq >= it->second.first &&
        e.seq - it->second.first < static_cast<int64_t>(it->second.second.size())) {
      scope_event = it->second.second[static_cast<size_t>(e.seq - it->second.first)];
    }
    if (scope_event < 0) {
      const std::string_view name = data.names[e.name_id];
      const bool accumulate = name.find("AccumulateGrad") != std::string_view::npos;
      Acc& x = bwd_other_[{accumulate ? "accumulate_grad" : "(unattributed)", -1}];
      node_other[i] = &x;
      x.calls += 1;
      x.total_ns += self;
      x.self_ns += self;
      continue;
    }
    node_scope[i] = scope_event;
    // Self to the innermost scope; total and calls (nodes) to it and every enclosing scope.
    bool first = true;
    for (int32_t s = scope_event; s >= 0; s = data.scopes[s].parent) {
      const ScopeEvent& se = data.scopes[s];
      Acc& x = scopes_acc_[{2, se.scope, se.block}];
      x.total_ns += self;
      x.calls += 1;
      if (first) x.self_ns += self;
      first = false;
    }
  }
  return owners;
}

// The module row an op event belongs to. Forward (and recompute) ops: the scope open when they
// started; backward ops (no scope is open in backward but a recompute's): the autograd node
// around them (or the node itself), and that node's scope or its bwd_other_ row.
AnalysisTotals::Owner AnalysisTotals::owner_of(const TraceData& data, const Owners& owners,
                                               size_t i) {
  Owner o;
  const OpEvent& e = data.ops[i];
  if (e.kind == OpEvent::kOp && e.scope_event >= 0 &&
      static_cast<size_t>(e.scope_event) < data.scopes.size()) {
    o.scope_event = e.scope_event;
    o.pass = data.scopes[static_cast<size_t>(o.scope_event)].pass;
    return o;
  }
  const int32_t first = e.kind == OpEvent::kBackwardNode ? static_cast<int32_t>(i) : data.parents[i];
  for (int32_t p = first; p >= 0; p = data.parents[static_cast<size_t>(p)]) {
    if (data.ops[static_cast<size_t>(p)].kind != OpEvent::kBackwardNode) continue;
    o.scope_event = owners.node_scope[static_cast<size_t>(p)];
    o.other = owners.node_other[static_cast<size_t>(p)];
    break;
  }
  return o;
}

// Each op event's own FLOPs and bytes against its self time, in its op's row and its module's
// (the innermost scope: rows add up, as self times do); an op event without a model (or shapes)
// adds its self time to both as unmodelled, never lost. Eval passes' ops add nothing.
void AnalysisTotals::add_roofline(const TraceData& data, const Owners& owners,
                                  const OwnModels& own) {
  const auto module_row = [&](size_t i) -> Acc* {
    const Owner o = owner_of(data, owners, i);
    if (o.other != nullptr || o.scope_event < 0) return o.other;
    const ScopeEvent& se = data.scopes[static_cast<size_t>(o.scope_event)];
    auto row = scopes_acc_.find({o.pass, se.scope, se.block});
    return row != scopes_acc_.end() ? &row->second : nullptr;
  };
  for (size_t i = 0; i < data.ops.size(); ++i) {
    const OpEvent& e = data.ops[i];
    if (e.kind != OpEvent::kOp || is_eval(e)) continue;
    Acc* row = module_row(i);
    RooflineSums& op_roof = ops_[data.names[e.name_id]].roof;
    if (own.modelled[i] != 0) {
      op_roof.add(own.flops[i], own.bytes[i], roofs_);
      if (row != nullptr) row->roof.add(own.flops[i], own.bytes[i], roofs_);
    } else {
      op_roof.add_unmodelled(self_ns(e));
      if (row != nullptr) row->roof.add_unmodelled(self_ns(e));
    }
  }
}

// CUDA runs: device time to the op that launched it and up its owner's scopes.
void AnalysisTotals::add_gpu(const TraceData& data, const Owners& owners,
                             const std::vector<double>& event_gpu_ns) {
  any_gpu_ = true;
  for (size_t i = 0; i < data.ops.size(); ++i) {
    const double g = event_gpu_ns[i];
    if (g <= 0 || is_eval(data.ops[i])) continue;
    gpu_ns_ += g;
    ops_[data.names[data.ops[i].name_id]].gpu_ns += g;
    const Owner o = owner_of(data, owners, i);
    if (o.other != nullptr) {
      o.other->gpu_ns += g;
    } else if (o.scope_event < 0) {
      gpu_outside_ns_ += g;
    }
    // Inclusive, like total_ms: the innermost scope and every enclosing one of the same pass.
    for (int32_t s = o.scope_event; s >= 0; s = data.scopes[static_cast<size_t>(s)].parent) {
      const ScopeEvent& se = data.scopes[static_cast<size_t>(s)];
      scopes_acc_[{o.pass, se.scope, se.block}].gpu_ns += g;
    }
  }
}

// Op events into their rows: the steps' in ops_ (with their own FLOPs), the eval passes' in
// eval_ops_ (no FLOPs: their shapes are read only after a step that reads them); the view calls
// counted without events.
void AnalysisTotals::add_ops(const TraceData& data, const OwnModels& own) {
  std::vector<OpAcc*> op_of(data.names.size(), nullptr);  // this window's name ids -> rows
  const auto op_acc = [&](uint32_t id) -> OpAcc& {
    if (op_of[id] == nullptr) op_of[id] = &ops_[data.names[id]];
    return *op_of[id];
  };
  std::vector<int32_t> eval_steps;  // the step each eval pass followed: one pass per step
  for (size_t i = 0; i < data.ops.size(); ++i) {
    const OpEvent& e = data.ops[i];
    if (is_eval(e)) {
      add_event(eval_ops_[data.names[e.name_id]], data, i, std::nullopt);
      eval_self_ns_ += self_ns(e);
      if (std::find(eval_steps.begin(), eval_steps.end(), e.step) == eval_steps.end()) {
        eval_steps.push_back(e.step);
      }
      continue;
    }
    add_event(op_acc(e.name_id), data, i, own.flops[i]);
    all_self_ns_ += self_ns(e);
    events_ += 1;
    if (e.kind == OpEvent::kOp) any_op_ = true;
    if (own.flops[i]) (is_matmul_op(data.names[e.name_id]) ? matmul_flops_ : other_flops_) += *own.flops[i];
  }
  n_evals_ += static_cast<int>(eval_steps.size());
  for (uint32_t id = 0; id < data.names.size(); ++id) {
    const auto count_of = [&](const std::vector<int64_t>& v) {
      return id < v.size() ? static_cast<double>(v[id]) : 0.0;
    };
    const double untimed = count_of(data.untimed_calls), inside = count_of(data.views_inside);
    if (untimed == 0 && inside == 0) continue;
    OpAcc& o = op_acc(id);
    o.untimed += untimed;
    o.views_inside += inside;
  }
}

Analysis AnalysisTotals::result(const ScopeFlops& fwd_flops_per_call) const {
  Analysis a;
  a.n_steps = n_steps_;
  if (n_steps_ == 0) return a;
  const double per_step = 1.0 / n_steps_;
  a.forward_phase_ms = forward_phase_ms_ * per_step;
  a.backward_phase_ms = backward_phase_ms_ * per_step;
  a.forward_scopes_ms = forward_scopes_ns_ * 1e-6 * per_step;
  a.backward_nodes_ms = backward_nodes_ns_ * 1e-6 * per_step;
  a.scopes_per_step = scopes_ * per_step;
  a.events_per_step = events_ * per_step;

  for (const auto& [key, x] : scopes_acc_) {
    const auto [pass, scope, block] = key;
    ModuleRow r;
    r.scope = std::string(scope_name(static_cast<Scope>(scope)));
    r.block = block;
    r.pass = kPassNames[pass];
    r.calls = x.calls * per_step;
    r.total_ms = x.total_ns * 1e-6 * per_step;
    r.self_ms = x.self_ns * 1e-6 * per_step;
    r.mean_ms = r.calls > 0 ? r.total_ms / r.calls : 0;
    const double pass_ms = pass == 0 ? a.forward_phase_ms : a.backward_phase_ms;
    if (pass_ms > 0) r.share_of_pass = r.total_ms / pass_ms;
    const double f = fwd_flops_per_call[scope];
    if (f >= 0 && pass != 1) {
      // Forward calls per step x per-call FLOPs; backward = 2x forward.
      const auto fwd = scopes_acc_.find({0, scope, block});
      const double fwd_calls = fwd != scopes_acc_.end() ? fwd->second.calls * per_step : 0;
      r.flops = f * fwd_calls * (pass == 2 ? 2.0 : 1.0);
      if (roofs_.flops_per_s > 0 && r.total_ms > 0) {
        r.mfu = *r.flops / (r.total_ms * 1e-3) / roofs_.flops_per_s;
      }
    }
    r.roofline = x.roof.point(r.self_ms, per_step, roofs_);
    if (any_gpu_) r.gpu_ms = x.gpu_ns * 1e-6 * per_step;
    a.modules.push_back(r);
  }
  for (const auto& [key, x] : bwd_other_) {
    ModuleRow r;
    r.scope = key.first;
    r.pass = "backward";
    r.calls = x.calls * per_step;
    r.total_ms = r.self_ms = x.total_ns * 1e-6 * per_step;
    r.mean_ms = r.calls > 0 ? r.total_ms / r.calls : 0;
    if (a.backward_phase_ms > 0) r.share_of_pass = r.total_ms / a.backward_phase_ms;
    r.roofline = x.roof.point(r.total_ms, per_step, roofs_);
    if (any_gpu_) r.gpu_ms = x.gpu_ns * 1e-6 * per_step;
    a.modules.push_back(r);
  }

  if (any_gpu_) {
    a.gpu_ms = gpu_ns_ * 1e-6 * per_step;
    a.gpu_ms_outside_scopes = gpu_outside_ns_ * 1e-6 * per_step;
  }
  if (any_op_) {
    a.counted_matmul_flops = matmul_flops_ * per_step;
    a.counted_other_flops = other_flops_ * per_step;
  }
  const auto by_self = [](const OpRow& x, const OpRow& y) { return x.self_ms > y.self_ms; };
  for (const auto& [name, o] : ops_) {
    a.untimed_events_per_step += o.untimed * per_step;
    if (o.calls == 0 && o.untimed == 0) continue;
    a.ops.push_back(op_row(name, o, per_step, all_self_ns_));
  }
  std::sort(a.ops.begin(), a.ops.end(), by_self);
  a.n_evals = n_evals_;
  for (const auto& [name, o] : eval_ops_) {
    a.eval_ops.push_back(op_row(name, o, 1.0 / std::max(1, n_evals_), eval_self_ns_));
  }
  std::sort(a.eval_ops.begin(), a.eval_ops.end(), by_self);

  for (const auto& [key, v] : activations_) {
    a.activations.push_back({std::string(scope_name(static_cast<Scope>(key.first))), key.second,
                             v.first * per_step, v.second * per_step});
  }
  return a;
}

void AnalysisTotals::add_event(OpAcc& o, const TraceData& data, size_t i,
                               std::optional<double> flops) {
  const OpEvent& e = data.ops[i];
  o.calls += 1;
  o.total_ns += static_cast<double>(e.end_ns - e.start_ns);
  o.self_ns += self_ns(e);
  o.alloc += static_cast<double>(e.alloc_bytes);
  if (flops) {
    o.flops += *flops;
    o.has_flops = true;
  }
  if (e.shape_id < 0 || o.shapes.size() >= 64) return;
  const ShapeRecord& s = data.shapes[static_cast<size_t>(e.shape_id)];
  std::string key;
  for (int k = 0; k < ShapeRecord::kMaxInputs; ++k) {
    if (s.ndim[k] < 0) continue;
    if (!key.empty()) key += ", ";
    key += "[";
    for (int d = 0; d < s.ndim[k]; ++d) key += (d ? ", " : "") + std::to_string(s.dims[k][d]);
    key += "]";
  }
  o.shapes[key] += 1;
}

// One row of ops.csv: figures per step (per_unit = 1 / recorded steps) or per eval pass.
OpRow AnalysisTotals::op_row(const std::string& name, const OpAcc& o, double per_unit,
                             double all_self_ns) const {
  OpRow r;
  r.op = name;
  r.view_calls = o.views_inside * per_unit;
  if (o.calls == 0) {  // only counted
    r.calls = o.untimed * per_unit;
    r.timed = false;
    return r;
  }
  r.calls = (o.calls + o.untimed) * per_unit;
  r.self_ms = o.self_ns * 1e-6 * per_unit;
  r.total_ms = o.total_ns * 1e-6 * per_unit;
  r.self_share = all_self_ns > 0 ? o.self_ns / all_self_ns : 0;
  r.alloc_bytes = o.alloc * per_unit;
  if (o.has_flops) r.flops = o.flops * per_unit;
  r.roofline = o.roof.point(r.self_ms, per_unit, roofs_);
  if (any_gpu_) r.gpu_ms = o.gpu_ns * 1e-6 * per_unit;
  int best = 0;
  for (const auto& [k, c] : o.shapes) {
    if (c > best) {  // the most frequent; on a tie the first in order
      best = c;
      r.input_shapes = k;
    }
  }
  return r;
}

}  // namespace llmprof::profile
