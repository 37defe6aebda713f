#include "llmprof/profile/analysis.h"

#include "llmprof/profile/bytes.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace llmprof::profile {

namespace {

double numel(const ShapeRecord& s, int i) {
  if (s.ndim[i] < 0) return 0;
  double n = 1;
  for (int d = 0; d < s.ndim[i]; ++d) n *= static_cast<double>(s.dims[i][d]);
  return n;
}

bool has(const ShapeRecord& s, int i, int nd) { return s.ndim[i] == nd; }

constexpr const char* kPassNames[3] = {"forward", "recompute", "backward"};

}  // namespace

namespace {

// The fused attention kernels' ops (LibTorch 2.x, scaled_dot_product_attention on CUDA), forward
// and backward. Their inner ops (_flash_attention_forward, ...) and the composite
// aten::scaled_dot_product_attention above them are left unmodelled: counted once.
bool is_fused_attention(std::string_view op) {
  for (std::string_view base : {"aten::_scaled_dot_product_flash_attention",
                                "aten::_scaled_dot_product_efficient_attention",
                                "aten::_scaled_dot_product_cudnn_attention"}) {
    if (op.substr(0, base.size()) != base) continue;
    const std::string_view rest = op.substr(base.size());
    if (rest.empty() || rest == "_backward") return true;
  }
  return false;
}

}  // namespace

bool is_matmul_op(std::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         is_fused_attention(op);
}

std::optional<double> op_flops(std::string_view op, const ShapeRecord& s) {
  if (op == "aten::mm" && has(s, 0, 2) && has(s, 1, 2)) {
    return 2.0 * s.dims[0][0] * s.dims[0][1] * s.dims[1][1];
  }
  if (op == "aten::addmm" && has(s, 1, 2) && has(s, 2, 2)) {
    return 2.0 * s.dims[1][0] * s.dims[1][1] * s.dims[2][1];
  }
  if (op == "aten::bmm" && has(s, 0, 3) && has(s, 1, 3)) {
    return 2.0 * s.dims[0][0] * s.dims[0][1] * s.dims[0][2] * s.dims[1][2];
  }
  if (op == "aten::baddbmm" && has(s, 1, 3) && has(s, 2, 3)) {
    return 2.0 * s.dims[1][0] * s.dims[1][1] * s.dims[1][2] * s.dims[2][2];
  }
  // Fused attention, torch.utils.flop_counter's count: forward Q K^T and P V, 2 matmuls of
  // 2*B*H*T*S*D each (causal masking not discounted); backward recomputes the scores and forms
  // dV, dP, dQ, dK: 5 such matmuls. Forward inputs (q, k, v), backward (grad_out, q, k, v).
  if (is_fused_attention(op)) {
    const bool backward = op.size() > 9 && op.substr(op.size() - 9) == "_backward";
    const int q = backward ? 1 : 0, k = q + 1;
    if (!has(s, q, 4) || !has(s, k, 4)) return std::nullopt;
    const double bhtsd = static_cast<double>(s.dims[q][0]) * s.dims[q][1] * s.dims[q][2] *
                         s.dims[k][2] * s.dims[q][3];
    return (backward ? 10.0 : 4.0) * bhtsd;
  }
  // add and mul: one FLOP per output element, torch.profiler's convention for them.
  if ((op == "aten::add" || op == "aten::add_" || op == "aten::mul" || op == "aten::mul_") &&
      s.ndim[0] >= 0) {
    if (s.ndim[1] < 0) return numel(s, 0);
    const int nd = std::max<int>(s.ndim[0], s.ndim[1]);
    double out = 1;
    for (int k = 1; k <= nd; ++k) {
      const int64_t a = k <= s.ndim[0] ? s.dims[0][s.ndim[0] - k] : 1;
      const int64_t b = k <= s.ndim[1] ? s.dims[1][s.ndim[1] - k] : 1;
      out *= static_cast<double>(std::max(a, b));
    }
    return out;
  }
  double per_element = 0, factor = 1;
  std::string_view base = op;
  if (base.size() > 9 && base.substr(base.size() - 9) == "_backward") {
    base = base.substr(0, base.size() - 9);
    factor = 2;
  } else if (base.size() > 14 && base.substr(base.size() - 14) == "_backward_data") {
    base = base.substr(0, base.size() - 14);
    factor = 2;
  }
  if (base == "aten::_softmax" || base == "aten::_log_softmax") per_element = 5;
  if (base == "aten::native_layer_norm") per_element = 5;
  if (base == "aten::gelu") per_element = 8;
  if (per_element == 0 || s.ndim[0] < 0) return std::nullopt;
  return factor * per_element * numel(s, 0);
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

  // ---- forward (and recompute) scopes: total and self time per (scope, block, pass) ----------
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

  // ---- backward nodes -> forward scope through sequence numbers ------------------------------
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
  std::vector<int32_t> node_scope(n, -1);
  std::vector<Acc*> node_other(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const OpEvent& e = data.ops[i];
    if (e.kind != OpEvent::kBackwardNode) continue;
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
  events_ += static_cast<double>(n);

  // The module row an op event belongs to. Forward (and recompute) ops: the scope open when they
  // started; backward ops (no scope is open in backward but a recompute's): the autograd node
  // around them (or the node itself), and that node's scope or its bwd_other_ row.
  struct Owner {
    int32_t scope_event = -1;
    int pass = 2;
    Acc* other = nullptr;
  };
  const auto owner = [&](size_t i) {
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
      o.scope_event = node_scope[static_cast<size_t>(p)];
      o.other = node_other[static_cast<size_t>(p)];
      break;
    }
    return o;
  };

  // ---- counted FLOPs and bytes per op event; the outermost modelled ops go to their module ---
  std::vector<std::optional<double>> event_flops(n), event_bytes(n);
  std::vector<uint8_t> covered(n, 0);  // inside a modelled op (or is one)
  for (size_t i = 0; i < n; ++i) {
    const OpEvent& e = data.ops[i];
    const int32_t parent = data.parents[i];
    const bool inside = parent >= 0 && covered[static_cast<size_t>(parent)] != 0;
    if (e.kind != OpEvent::kOp || e.shape_id < 0) {
      covered[i] = inside;
      continue;
    }
    const ShapeRecord& s = data.shapes[static_cast<size_t>(e.shape_id)];
    const std::string_view name = data.names[e.name_id];
    event_flops[i] = op_flops(name, s);
    event_bytes[i] = op_bytes(name, s);
    const bool modelled = event_flops[i] || event_bytes[i];
    covered[i] = inside || modelled;
    if (!modelled || inside) continue;
    const Owner o = owner(i);
    if (o.other != nullptr) o.other->roof.add(event_flops[i], event_bytes[i], roofs_);
    if (o.scope_event >= 0) {  // the innermost scope only: rows add up, as self times do
      const ScopeEvent& se = data.scopes[static_cast<size_t>(o.scope_event)];
      auto row = scopes_acc_.find({o.pass, se.scope, se.block});
      if (row != scopes_acc_.end()) row->second.roof.add(event_flops[i], event_bytes[i], roofs_);
    }
  }

  // ---- GPU time (CUDA runs): to the op that launched it and up its owner's scopes ------------
  if (event_gpu_ns != nullptr && event_gpu_ns->size() == n) {
    any_gpu_ = true;
    for (size_t i = 0; i < n; ++i) {
      const double g = (*event_gpu_ns)[i];
      if (g <= 0) continue;
      gpu_ns_ += g;
      ops_[data.names[data.ops[i].name_id]].gpu_ns += g;
      const Owner o = owner(i);
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

  // ---- ops ------------------------------------------------------------------------------------
  std::vector<OpAcc*> op_of(data.names.size(), nullptr);  // this window's name ids -> rows
  const auto op_acc = [&](uint32_t id) -> OpAcc& {
    if (op_of[id] == nullptr) op_of[id] = &ops_[data.names[id]];
    return *op_of[id];
  };
  for (size_t i = 0; i < n; ++i) {
    const OpEvent& e = data.ops[i];
    const double dur = static_cast<double>(e.end_ns - e.start_ns);
    OpAcc& o = op_acc(e.name_id);
    o.calls += 1;
    o.total_ns += dur;
    o.self_ns += dur - static_cast<double>(e.child_ns);
    o.alloc += static_cast<double>(e.alloc_bytes);
    all_self_ns_ += dur - static_cast<double>(e.child_ns);
    if (e.kind == OpEvent::kOp) any_op_ = true;
    if (e.shape_id >= 0) {
      const ShapeRecord& s = data.shapes[static_cast<size_t>(e.shape_id)];
      const std::string_view name = data.names[e.name_id];
      if (const std::optional<double>& f = event_flops[i]) {
        o.flops += *f;
        o.has_flops = true;
        (is_matmul_op(name) ? matmul_flops_ : other_flops_) += *f;
      }
      o.roof.add(event_flops[i], event_bytes[i], roofs_);
      if (o.shapes.size() < 64) {
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
    }
  }
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

  // ---- activations: bytes left alive by each forward scope ------------------------------------
  for (size_t i = 0; i < data.scopes.size() && i < data.scope_saved_bytes.size(); ++i) {
    const ScopeEvent& e = data.scopes[i];
    if (e.pass != 0) continue;
    auto& [saved, alloc] = activations_[{e.scope, e.block}];
    saved += static_cast<double>(data.scope_saved_bytes[i]);
    alloc += static_cast<double>(data.scope_alloc_bytes[i]);
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
  for (const auto& [name, o] : ops_) {
    a.untimed_events_per_step += o.untimed * per_step;
    if (o.calls == 0 && o.untimed == 0) continue;
    OpRow r;
    r.op = name;
    r.view_calls = o.views_inside * per_step;
    if (o.calls == 0) {  // only counted
      r.calls = o.untimed * per_step;
      r.timed = false;
      a.ops.push_back(std::move(r));
      continue;
    }
    r.calls = (o.calls + o.untimed) * per_step;
    r.self_ms = o.self_ns * 1e-6 * per_step;
    r.total_ms = o.total_ns * 1e-6 * per_step;
    r.self_share = all_self_ns_ > 0 ? o.self_ns / all_self_ns_ : 0;
    r.alloc_bytes = o.alloc * per_step;
    if (o.has_flops) r.flops = o.flops * per_step;
    r.roofline = o.roof.point(r.total_ms, per_step, roofs_);
    if (any_gpu_) r.gpu_ms = o.gpu_ns * 1e-6 * per_step;
    int best = 0;
    for (const auto& [k, c] : o.shapes) {
      if (c > best) {  // the most frequent; on a tie the first in order
        best = c;
        r.input_shapes = k;
      }
    }
    a.ops.push_back(std::move(r));
  }
  std::sort(a.ops.begin(), a.ops.end(), [](const OpRow& x, const OpRow& y) { return x.self_ms > y.self_ms; });

  for (const auto& [key, v] : activations_) {
    a.activations.push_back({std::string(scope_name(static_cast<Scope>(key.first))), key.second,
                             v.first * per_step, v.second * per_step});
  }
  return a;
}

}  // namespace llmprof::profile
