// Turning a recorded window (TraceData) into the deep-profiling tables (written by rundir): per-module forward and
// backward time (modules.csv), per-op self/total time with counted FLOPs (ops.csv), activation
// bytes kept for backward per scope (activations.csv), memory per phase (memory.csv), and the
// reconciliation of scopes against phases and of counted against analytic FLOPs.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "llmprof/profile/events.h"
#include "llmprof/profile/roofline.h"
#include "llmprof/profile/scope.h"
#include "llmprof/profile/tracer.h"

namespace llmprof::profile {

// Phase times of one recorded step, to express scope times as a share of their pass.
struct StepPhases {
  int32_t step = 0;
  double forward_ms = 0;
  double backward_ms = 0;
  int64_t max_rss_bytes = 0;
};

struct ModuleRow {
  std::string scope;  // scope name, or "accumulate_grad" / "(unattributed)" for backward nodes
  int block = -1;     // -1 outside blocks
  std::string pass;   // forward | backward | recompute
  double calls = 0;   // per step: scope calls (forward), autograd nodes in the subtree (backward)
  double total_ms = 0, mean_ms = 0, self_ms = 0;  // per step
  std::optional<double> share_of_pass;             // total / the pass's phase time
  std::optional<double> flops;                     // analytic, per step; null when not modelled
  std::optional<double> mfu;
  RooflinePoint roofline;  // ops level: from the ops whose innermost scope this is (their own
                           // FLOPs and bytes, as ops.csv counts them), against self_ms (rows add
                           // up, as self times do); ops without a model are unmodelled_ms
  // CUDA runs: device time (kernels, copies, memsets) launched inside the scope, nested scopes
  // included like total_ms, per step; backward rows through the autograd nodes. Null elsewhere.
  std::optional<double> gpu_ms;
};

struct OpRow {
  std::string op;
  double calls = 0;  // per step
  bool timed = true;  // false: a view/metadata op only counted (its times are unknown)
  double self_ms = 0, total_ms = 0, self_share = 0;
  double view_calls = 0;  // untimed view/metadata calls made directly inside it, per step
  std::optional<double> flops;         // counted from shapes, per step
  double alloc_bytes = 0;              // per step
  std::string input_shapes;            // most frequent, e.g. "[768, 128], [128, 384]"
  // Each call's own FLOPs and bytes (its model less those of the modelled ops nested in it:
  // clone keeps none of its copy_'s) against its self time; calls without a model or shapes are
  // unmodelled_ms. Null for ops without a model.
  RooflinePoint roofline;
  std::optional<double> gpu_ms;        // CUDA runs: device time it launched as the innermost op
};

struct ActivationRow {
  std::string scope;
  int block = -1;
  double saved_bytes = 0;  // allocated in the scope and still live at the end of forward, per step
  double alloc_bytes = 0;  // allocated in the scope during forward, per step
};

struct Analysis {
  int n_steps = 0;
  std::vector<ModuleRow> modules;
  std::vector<OpRow> ops;  // sorted by self time, descending
  // Ops of the eval passes run between recorded steps (ScopedEval), per eval pass, sorted like
  // ops; they count in no other figure. n_evals: the passes recorded.
  std::vector<OpRow> eval_ops;
  int n_evals = 0;
  std::vector<ActivationRow> activations;
  // Reconciliation (per step): top-level forward scopes vs the forward phase; backward nodes
  // (attributed or not) vs the backward phase.
  double forward_scopes_ms = 0, forward_phase_ms = 0;
  double backward_nodes_ms = 0, backward_phase_ms = 0;
  // Counted FLOPs per step (ops level; 0 events at modules level -> nullopt).
  std::optional<double> counted_matmul_flops;
  std::optional<double> counted_other_flops;
  double events_per_step = 0, scopes_per_step = 0;
  double untimed_events_per_step = 0;  // view/metadata calls counted without a timed event
  // CUDA runs, per step: device time launched by recorded ops, and the part launched outside
  // any module scope or autograd node (the optimizer, the loss outside scopes). Null elsewhere.
  std::optional<double> gpu_ms, gpu_ms_outside_scopes;
};

// FLOPs of one op from its input shapes; nullopt for ops not modelled. Formulas:
//   mm [M,K]x[K,N]: 2MKN; addmm (bias, [M,K], [K,N]): 2MKN; bmm [b,M,K]x[b,K,N]: 2bMKN;
//   baddbmm (C, A, B): 2bMKN; softmax / log_softmax: 5 per element (max, sub, exp, sum, div);
//   layer_norm: 5 per element (mean, var, sub, mul, add); gelu: 8 per element (erf form);
//   llmprof::add_layer_norm 6 and llmprof::add_rms_norm 5 per element (model.fused_norm: the
//   norm's count plus the add's 1); llmprof::swiglu 5 per element; their *_backward: 2x the forward
//   count; add and mul (and in place): 1 per output element (torch.profiler's convention).
std::optional<double> op_flops(std::string_view op, const ShapeRecord& shapes);
bool is_matmul_op(std::string_view op);

// fwd_flops_per_call[s]: analytic forward FLOPs of one call of scope s in one step (per block
// for block scopes; backward counts 2x); < 0 = not modelled (null in the table). The roofline
// columns of ops and modules need both peaks (peak_bytes_per_s 0 = unknown: they stay null but
// bytes); a module's come from the ops whose innermost scope it is (a backward op belongs to
// the autograd node around it). Ops with OpEvent::phase kEval are an eval pass's: eval_ops only.
Analysis analyze(const TraceData& data,
                 const std::vector<StepPhases>& phases,
                 const ScopeFlops& fwd_flops_per_call,
                 double peak_flops_per_s,
                 double peak_bytes_per_s = 0);

// The sums behind an Analysis, over any number of recorded windows: a run that records a cycle
// of the schedule again and again (profile.schedule_repeat 0) adds each window as it closes and
// frees its events, so its tables cover every recorded step in memory that does not grow with
// them. analyze() is one window's.
class AnalysisTotals {
 public:
  explicit AnalysisTotals(const Roofs& roofs) : roofs_(roofs) {}
  // phases: the window's recorded steps. event_gpu_ns (CUDA runs), parallel to data.ops: the
  // device time of the work each op event launched as the innermost open op (gpu::correlate).
  void add(const TraceData& data, const std::vector<StepPhases>& phases,
           const std::vector<double>* event_gpu_ns = nullptr);
  Analysis result(const ScopeFlops& fwd_flops_per_call) const;

 private:
  struct Acc {
    double calls = 0, total_ns = 0, self_ns = 0, gpu_ns = 0;
    RooflineSums roof;
  };
  struct OpAcc {
    double calls = 0, self_ns = 0, total_ns = 0, alloc = 0, flops = 0, gpu_ns = 0;
    double untimed = 0, views_inside = 0;  // view/metadata calls counted, and run inside it
    bool has_flops = false;
    RooflineSums roof;
    std::map<std::string, int> shapes;  // input shapes -> calls (the first 64 seen)
  };
  // Per backward node of a window: the scope event it is attributed to (-1: none), or its
  // bwd_other_ row; and the module row an op event belongs to through them.
  struct Owners {
    std::vector<int32_t> node_scope;
    std::vector<Acc*> node_other;
  };
  struct Owner {
    int32_t scope_event = -1;
    int pass = 2;
    Acc* other = nullptr;
  };
  struct OwnModels;  // per op event: its own FLOPs and bytes (analysis.cpp)
  static OwnModels own_models(const TraceData& data);
  static Owner owner_of(const TraceData& data, const Owners& owners, size_t i);
  // The stages of add(), one window's events each.
  void add_scopes(const TraceData& data);
  Owners add_nodes(const TraceData& data);
  void add_roofline(const TraceData& data, const Owners& owners, const OwnModels& own);
  void add_gpu(const TraceData& data, const Owners& owners, const std::vector<double>& event_gpu_ns);
  void add_ops(const TraceData& data, const OwnModels& own);
  // One op event into its row (times, allocations, FLOPs, shapes).
  static void add_event(OpAcc& o, const TraceData& data, size_t i, std::optional<double> flops);
  OpRow op_row(const std::string& name, const OpAcc& o, double per_unit, double all_self_ns) const;
  Roofs roofs_;
  int n_steps_ = 0;
  double forward_phase_ms_ = 0, backward_phase_ms_ = 0;  // sums over the steps
  double forward_scopes_ns_ = 0, backward_nodes_ns_ = 0, scopes_ = 0, events_ = 0;
  double matmul_flops_ = 0, other_flops_ = 0, all_self_ns_ = 0;
  bool any_op_ = false;
  bool any_gpu_ = false;                       // a window came with GPU times
  double gpu_ns_ = 0, gpu_outside_ns_ = 0;     // over the windows
  std::map<std::tuple<int, int, int>, Acc> scopes_acc_;  // (pass, scope, block)
  std::map<std::pair<std::string, int>, Acc> bwd_other_;  // accumulate_grad, (unattributed)
  std::map<std::string, OpAcc> ops_;
  std::map<std::string, OpAcc> eval_ops_;  // ops of eval passes (OpEvent::phase kEval)
  int n_evals_ = 0;
  double eval_self_ns_ = 0;
  std::map<std::pair<int, int>, std::pair<double, double>> activations_;  // saved, allocated
};

// memory.csv's rows: one per (step, phase) from the per-interval records, in first-seen order; a
// phase that runs several times in a step (data and forward/backward per micro-batch) keeps its
// highest peak and the allocated bytes where its last interval ended.
std::vector<PhaseMemory> memory_per_phase(const std::vector<PhaseMemory>& intervals);

}  // namespace llmprof::profile
