// Charts from modules.csv: 1 transformer block timing by part, 2 attention breakdown, 3 MLP
// breakdown; one bar per run and pass, ms per step summed over blocks.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "chart.h"

namespace llmprof::plot::detail {

namespace {

using report::ScopeTotal;

double ms(const std::map<std::string, ScopeTotal>& scopes, const std::string& scope) {
  auto it = scopes.find(scope);
  return it == scopes.end() ? 0.0 : it->second.total_ms;
}

// What a parent's time leaves after its parts; rounding noise (below 1e-6 of it) is zero.
double remainder(double whole, double parts) {
  double rest = whole - parts;
  return rest > 1e-6 * whole ? rest : 0.0;
}

bool has(const std::map<std::string, ScopeTotal>& scopes, const std::string& scope) {
  return scopes.find(scope) != scopes.end();
}

// One bar per run with modules and per pass; parts(scopes) gives the series values.
template <typename Parts>
BarTable bars_by_pass(const PlotInputs& in,
                      const std::vector<std::string>& series,
                      const std::string& required_scope,
                      Parts parts) {
  BarTable t;
  t.series = series;
  bool several = in.runs.size() > 1;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const auto& m = in.metrics[i];
    for (const auto* pass : {&m.forward_scopes, &m.backward_scopes}) {
      if (!has(*pass, required_scope)) continue;
      std::string p = pass == &m.forward_scopes ? "forward" : "backward";
      t.rows.push_back(several ? in.runs[i].label + " " + p : p);
      t.values.push_back(parts(*pass));
    }
  }
  return t;
}

std::string block_count(const PlotInputs& in) {
  std::set<int64_t> blocks;
  for (const auto& r : in.runs) {
    for (const auto& row : r.modules) {
      if (row.block) blocks.insert(*row.block);
    }
  }
  return blocks.empty() ? "" : fmt::format(", {} blocks summed", blocks.size());
}

std::string subject(const PlotInputs& in) {
  return in.runs.size() == 1 ? ": " + in.runs[0].label : "";
}

}  // namespace

std::vector<ChartResult> module_charts(const PlotInputs& in, const ChartWriter& w) {
  std::vector<ChartResult> out;
  bool any = std::any_of(in.runs.begin(), in.runs.end(),
                         [](const rundir::Run& r) { return !r.modules.empty(); });
  const char* kNames[] = {"01_block_timing", "02_attention_breakdown", "03_mlp_breakdown"};
  if (!any) {
    std::vector<const rundir::Run*> runs;
    for (const rundir::Run& r : in.runs) runs.push_back(&r);
    const std::string why = no_rows_reason(runs, config::ProfileLevel::kModules);
    for (const char* n : kNames) out.push_back(skipped(n, why));
    return out;
  }
  std::string xlabel = in.runs.size() > 1 ? "run and pass" : "pass";
  std::string blocks = block_count(in);

  BarTable block = bars_by_pass(in, {"attention", "MLP", "layer norms", "other"}, "block",
                                [](const std::map<std::string, ScopeTotal>& s) {
                                  double attn = ms(s, "attn"), mlp = ms(s, "mlp");
                                  // llama's block norms are "norm" (with its final norm, small)
                                  double ln = ms(s, "ln_1") + ms(s, "ln_2") + ms(s, "norm");
                                  double other = remainder(ms(s, "block"), attn + mlp + ln);
                                  return std::vector<double>{attn, mlp, ln, other};
                                });
  out.push_back(block.rows.empty()
                    ? skipped(kNames[0], "modules.csv has no 'block' scope")
                    : bar_chart(w, kNames[0],
                                "Transformer block time per step" + subject(in) + blocks, xlabel,
                                "time per step (ms)", block, true));

  BarTable attn = bars_by_pass(
      in, {"qkv projection", "core (scores, softmax, mix)", "output projection", "other"}, "attn",
      [](const std::map<std::string, ScopeTotal>& s) {
        // llama: q/k/v apart and the rotary embedding count to the projection in; o is proj.
        double qkv = ms(s, "attn.qkv") + ms(s, "attn.q") + ms(s, "attn.k") + ms(s, "attn.v") +
                     ms(s, "attn.rope");
        double core = ms(s, "attn.core");
        double proj = ms(s, "attn.proj") + ms(s, "attn.o");
        double other = remainder(ms(s, "attn"), qkv + core + proj);
        return std::vector<double>{qkv, core, proj, other};
      });
  out.push_back(attn.rows.empty()
                    ? skipped(kNames[1], "modules.csv has no 'attn' scope")
                    : bar_chart(w, kNames[1], "Attention time per step" + subject(in) + blocks,
                                xlabel, "time per step (ms)", attn, true));

  BarTable mlp =
      bars_by_pass(in, {"up projection", "activation (GELU)", "down projection", "other"}, "mlp",
                   [](const std::map<std::string, ScopeTotal>& s) {
                     // llama's SwiGLU: gate and up are both the up projection here
                     double up = ms(s, "mlp.up") + ms(s, "mlp.gate"), act = ms(s, "mlp.act");
                     double down = ms(s, "mlp.down");
                     double other = remainder(ms(s, "mlp"), up + act + down);
                     return std::vector<double>{up, act, down, other};
                   });
  out.push_back(mlp.rows.empty()
                    ? skipped(kNames[2], "modules.csv has no 'mlp' scope")
                    : bar_chart(w, kNames[2], "MLP time per step" + subject(in) + blocks, xlabel,
                                "time per step (ms)", mlp, true));
  return out;
}

}  // namespace llmprof::plot::detail
