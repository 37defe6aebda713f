// The tables of one run: summary row, phases, modules, ops, memory, activations.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "tables.h"

namespace llmprof::report::detail {

namespace {

std::optional<double> median_of(const RunMetrics& m, const std::string& column) {
  const Stats* s = m.stat(column);
  return s ? std::optional<double>(s->median) : std::nullopt;
}

std::string truncate(const std::string& s, size_t max_chars) {
  return s.size() <= max_chars ? s : s.substr(0, max_chars - 3) + "...";
}

std::optional<double> add_opt(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

}  // namespace

Table summary_table(const std::vector<const Run*>& runs, const std::vector<RunMetrics>& metrics) {
  Table t;
  t.id = "summary";
  t.title = "Summary";
  t.columns = {{"run", "run"},
               {"status", "status"},
               {"steps", "steps"},
               {"warmup_steps", "warm-up"},
               {"step_ms_median", "step ms (median)"},
               {"step_ms_p10", "p10"},
               {"step_ms_p90", "p90"},
               {"tokens_per_s", "tokens/s"},
               {"mfu", "MFU"},
               {"train_loss", "train loss"},
               {"val_loss", "val loss"},
               {"val_perplexity", "val ppl"},
               {"peak_rss_bytes", "peak RSS"},
               {"energy_j", "energy J"}};
  bool any_incomplete = false, any_cut = false, any_estimated = false, any_step_loss = false;
  std::vector<std::string> data_parallel;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = *runs[i];
    if (r.world_size > 1)
      data_parallel.push_back(fmt::format("{} ({} ranks)", r.label, r.world_size));
    const RunMetrics& m = metrics[i];
    const Stats* step = m.stat("step_ms");
    any_incomplete |= !r.has_summary;
    any_cut |= !r.warnings.empty();
    std::string status = r.status_text() + (r.message.empty() ? "" : " (" + r.message + ")");
    if (!r.warnings.empty()) {
      status += fmt::format("{}{} part(s) cut short",
                            !r.has_summary ? ": " : ", incomplete: ", r.warnings.size());
    }
    any_estimated |= m.energy_estimated;
    any_step_loss |= m.final_train_loss && !m.train_loss_from_eval;
    Cell energy = number_cell(m.energy_j);
    if (m.energy_j && m.energy_estimated) energy.text += " (est.)";
    t.rows.push_back(
        {text_cell(r.label), text_cell(status), count_cell(static_cast<double>(m.steps_completed)),
         count_cell(static_cast<double>(m.warmup_excluded)),
         ms_cell(step ? std::optional<double>(step->median) : std::nullopt),
         ms_cell(step ? std::optional<double>(step->p10) : std::nullopt),
         ms_cell(step ? std::optional<double>(step->p90) : std::nullopt),
         number_cell(median_of(m, "tokens_per_s"), 5), percent_cell(median_of(m, "mfu")),
         number_cell(m.final_train_loss), number_cell(m.final_val_loss),
         number_cell(m.final_val_perplexity), bytes_cell(m.peak_rss_bytes), energy});
  }
  t.notes.push_back(
      "Step time, tokens/s and MFU are medians over the steps after warm-up; "
      "losses are the last eval's.");
  if (any_step_loss) {
    t.notes.push_back("A run without train evals shows its last step loss as train loss.");
  }
  if (!data_parallel.empty()) {
    t.notes.push_back(fmt::format(
        "Data-parallel: {}: global figures: per step the slowest rank's step time, all ranks' "
        "tokens over it, MFU against all ranks' peak, the eval's loss over every rank's rows; each "
        "rank's own figures are in its ranks table.",
        fmt::join(data_parallel, ", ")));
  }
  if (any_incomplete) {
    t.notes.push_back(
        "`incomplete`: no summary.json (the run is still running, or was killed); figures come "
        "from steps.csv alone.");
  }
  if (any_cut) {
    t.notes.push_back(
        "`cut short`: rows or files a killed run or a full disk left partial were left out (see "
        "Warnings); the figures come from what was whole.");
  }
  if (any_estimated) t.notes.push_back("(est.): energy estimated, not measured.");
  return t;
}

Table phase_table(const Run& run, const RunMetrics& m) {
  Table t;
  t.id = "phases." + run.label;
  t.title = "Phases: " + run.label;
  t.columns = {{"phase", "phase"},   {"median_ms", "median ms"}, {"p10_ms", "p10 ms"},
               {"p90_ms", "p90 ms"}, {"share", "share"},         {"share_of", "share of"}};
  double phase_sum = 0;
  bool all_phases = true;
  for (const auto& p : phase_names()) {
    const Stats* s = m.stat(p + "_ms");
    if (s) phase_sum += s->median;
    all_phases &= s != nullptr;
    t.rows.push_back({text_cell(p), ms_cell(s ? std::optional<double>(s->median) : std::nullopt),
                      ms_cell(s ? std::optional<double>(s->p10) : std::nullopt),
                      ms_cell(s ? std::optional<double>(s->p90) : std::nullopt),
                      percent_cell(m.phase_share(p)), text_cell("step")});
  }
  const Stats* step = m.stat("step_ms");
  std::optional<double> overlap_ms;
  if (step && all_phases) {
    double un = step->median - phase_sum;
    // The phases' medians need not add up to the step's median: a sum beyond it is overlap of
    // the measurements, not time, so the remainder shows as 0 and the note says by how much.
    if (un < 0 && step->median > 0) {
      overlap_ms = -un;
      un = 0;
    }
    t.rows.push_back(
        {text_cell("unattributed"), ms_cell(un), ms_cell(std::nullopt), ms_cell(std::nullopt),
         percent_cell(step->median > 0 ? std::optional<double>(un / step->median) : std::nullopt),
         text_cell("step")});
  }
  t.rows.push_back(
      {text_cell("step"), ms_cell(step ? std::optional<double>(step->median) : std::nullopt),
       ms_cell(step ? std::optional<double>(step->p10) : std::nullopt),
       ms_cell(step ? std::optional<double>(step->p90) : std::nullopt),
       percent_cell(step ? std::optional<double>(1.0) : std::nullopt), text_cell("step")});
  std::vector<double> evals = present(run.steps, "eval_ms");
  Stats e = stats_of(evals);
  t.rows.push_back({text_cell("eval"),
                    ms_cell(e.n ? std::optional<double>(e.median) : std::nullopt),
                    ms_cell(e.n ? std::optional<double>(e.p10) : std::nullopt),
                    ms_cell(e.n ? std::optional<double>(e.p90) : std::nullopt),
                    percent_cell(m.eval_share), text_cell("wall")});
  t.notes.push_back(fmt::format(
      "Per-step medians over {} steps ({} warm-up excluded); share = phase median / step median. "
      "eval: per evaluation ({} evals, {} ms in all); its share is of wall time = steps + evals "
      "({} ms).",
      step ? step->n : 0, m.warmup_excluded, e.n, format_number(m.eval_total_ms),
      format_number(m.step_total_ms + m.eval_total_ms)));
  // The tables this run's profile level left out, as its summary.json recorded the level.
  for (const auto level : {config::ProfileLevel::kModules, config::ProfileLevel::kOps}) {
    if (std::string why = rundir::why_no_rows(run, level); !why.empty()) {
      t.notes.push_back(fmt::format("No {} tables: {}.",
                                    level == config::ProfileLevel::kOps ? "op" : "module", why));
    }
  }
  if (overlap_ms) {
    t.notes.push_back(fmt::format(
        "unattributed: 0; the phase medians add up to {} ms ({:.2f}% of the step median) more "
        "than the step median: medians of the parts need not add up to the median of the whole, "
        "so the excess is overlap of the measurements, not time.",
        format_number(*overlap_ms), *overlap_ms / step->median * 100));
  }
  return t;
}

std::optional<Table> module_table(const Run& run, const RunMetrics& m) {
  if (run.modules.empty()) return std::nullopt;
  Table t;
  t.id = "modules." + run.label;
  t.title = "Modules: " + run.label;
  t.columns = {{"scope", "scope"},
               {"forward_ms", "fwd ms"},
               {"forward_share", "fwd share"},
               {"backward_ms", "bwd ms"},
               {"backward_share", "bwd share"},
               {"backward_over_forward", "bwd/fwd"},
               {"total_ms", "fwd+bwd ms"},
               {"forward_gflop", "fwd GFLOP"},
               {"forward_mfu", "fwd MFU"},
               {"backward_mfu", "bwd MFU"}};
  std::vector<std::string> scopes = scope_order();
  for (const auto* pass : {&m.forward_scopes, &m.backward_scopes}) {
    for (const auto& [name, total] : *pass) {
      if (std::find(scopes.begin(), scopes.end(), name) == scopes.end()) scopes.push_back(name);
    }
  }
  std::set<int64_t> blocks;
  for (const auto& row : run.modules) {
    if (row.block) blocks.insert(*row.block);
  }
  for (const auto& s : scopes) {
    auto f = m.forward_scopes.find(s);
    auto b = m.backward_scopes.find(s);
    if (f == m.forward_scopes.end() && b == m.backward_scopes.end()) continue;
    std::optional<double> fms, bms, fshare, bshare, fflops, fmfu, bmfu;
    if (f != m.forward_scopes.end()) {
      fms = f->second.total_ms;
      fshare = f->second.share_of_pass;
      fflops = f->second.flops;
      fmfu = f->second.mfu;
    }
    if (b != m.backward_scopes.end()) {
      bms = b->second.total_ms;
      bshare = b->second.share_of_pass;
      bmfu = b->second.mfu;
    }
    std::optional<double> ratio =
        fms && bms && *fms > 0 ? std::optional<double>(*bms / *fms) : std::nullopt;
    t.rows.push_back({text_cell(s), ms_cell(fms), percent_cell(fshare), ms_cell(bms),
                      percent_cell(bshare), ratio_cell(ratio), ms_cell(add_opt(fms, bms)),
                      number_cell(fflops ? std::optional<double>(*fflops / 1e9) : std::nullopt),
                      percent_cell(fmfu), percent_cell(bmfu)});
  }
  t.notes.push_back(fmt::format(
      "Per step, each scope summed over {} blocks; share = of its pass (modules.csv "
      "share_of_pass summed); nested scopes (attn.core in attn in block) overlap their parents.",
      blocks.size()));
  return t;
}

std::optional<Table> ops_table(const Run& run, size_t top_n) {
  if (run.ops.empty()) return std::nullopt;
  std::vector<const OpRow*> ops;
  for (const auto& o : run.ops) ops.push_back(&o);
  std::stable_sort(ops.begin(), ops.end(), [](const OpRow* a, const OpRow* b) {
    return a->self_ms.value_or(0) > b->self_ms.value_or(0);
  });
  Table t;
  t.id = "ops." + run.label;
  t.title = fmt::format("Top {} ops by self time: {}", std::min(top_n, ops.size()), run.label);
  t.columns = {{"rank", "#"},
               {"op", "op"},
               {"calls", "calls"},
               {"self_ms", "self ms"},
               {"self_share", "self share"},
               {"total_ms", "total ms"},
               {"achieved_gflops_per_s", "GFLOP/s"},
               {"achieved_gb_per_s", "GB/s"},
               {"bound", "bound"},
               {"lost_ms", "lost ms"},
               {"alloc_bytes", "alloc"},
               {"input_shapes", "input shapes"}};
  for (size_t i = 0; i < ops.size() && i < top_n; ++i) {
    const OpRow& o = *ops[i];
    t.rows.push_back({count_cell(static_cast<double>(i + 1)), text_cell(o.op), count_cell(o.calls),
                      ms_cell(o.self_ms), percent_cell(o.self_share), ms_cell(o.total_ms),
                      number_cell(o.roofline.achieved_gflops_per_s),
                      number_cell(o.roofline.achieved_gb_per_s), text_cell(o.roofline.bound),
                      ms_cell(o.roofline.lost_ms), bytes_cell(o.alloc_bytes),
                      text_cell(truncate(o.input_shapes, 48))});
  }
  t.notes.push_back(fmt::format("Per step; {} ops recorded in all.", ops.size()));
  if (!run.eval_ops.empty()) {
    t.notes.push_back(fmt::format(
        "The {} ops of the eval passes run inside the recorded window are left out (ops.csv "
        "rows during = eval, per pass).",
        run.eval_ops.size()));
  }
  return t;
}

std::optional<Table> memory_table(const Run& run, const RunMetrics& m) {
  if (m.memory_phases.empty() && !m.peak_rss_bytes) return std::nullopt;
  Table t;
  t.id = "memory." + run.label;
  t.title = "Memory: " + run.label;
  t.columns = {{"phase", "phase"},
               {"peak_allocated_bytes", "peak allocated"},
               {"end_allocated_bytes", "end allocated (median)"},
               {"rss_bytes", "peak RSS"}};
  for (const auto& phase : m.memory_phases) {
    const PhaseMemory& pm = m.memory.at(phase);
    t.rows.push_back({text_cell(phase), bytes_cell(pm.peak_allocated_bytes),
                      bytes_cell(pm.end_allocated_bytes), bytes_cell(pm.rss_bytes)});
  }
  t.rows.push_back({text_cell("run"), bytes_cell(std::nullopt), bytes_cell(std::nullopt),
                    bytes_cell(m.peak_rss_bytes)});
  if (m.peak_rss_bytes && run.host_memory_bytes && *run.host_memory_bytes > 0) {
    t.notes.push_back(fmt::format("Peak RSS is {:.1f}% of host memory ({}).",
                                  *m.peak_rss_bytes / *run.host_memory_bytes * 100,
                                  bytes_cell(run.host_memory_bytes).text));
  }
  if (m.memory_phases.empty()) t.notes.push_back("No memory.csv: per-phase memory not recorded.");
  return t;
}

std::optional<Table> plan_table(const Run& run) {
  if (run.plan.empty()) return std::nullopt;
  Table t;
  t.id = "plan." + run.label;
  t.title = "Plan: predicted vs measured memory: " + run.label;
  t.columns = {{"component", "component"},
               {"predicted_bytes", "predicted"},
               {"measured_bytes", "measured"},
               {"ratio", "predicted / measured"}};
  for (const auto& r : run.plan) {
    t.rows.push_back({text_cell(r.component), bytes_cell(r.predicted_bytes),
                      bytes_cell(r.measured_bytes), ratio_cell(r.ratio)});
  }
  t.notes.push_back(fmt::format("Peak predicted at {}, measured in {}. llmprof plan's model of one "
                                "step; measured from the allocator in the run's step 2.",
                                run.plan_peak_predicted.empty() ? "?" : run.plan_peak_predicted,
                                run.plan_peak_measured.empty() ? "?" : run.plan_peak_measured));
  return t;
}

std::optional<Table> gqa_table(const Run& run) {
  if (!run.gqa) return std::nullopt;
  const rundir::GqaSummary& g = *run.gqa;
  const auto times = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (!a || !b) return std::nullopt;
    return *a * *b;
  };
  // MHA / GQA: how many times more the multi-head model of the same width needs.
  const auto saving = [](std::optional<double> gqa, std::optional<double> mha) {
    return ratio_cell(gqa && mha && *gqa > 0 ? std::optional<double>(*mha / *gqa) : std::nullopt);
  };
  Table t;
  t.id = "gqa." + run.label;
  t.title = "Grouped-query attention against multi-head attention: " + run.label;
  t.columns = {{"figure", "figure"},
               {"gqa", fmt::format("this model ({} kv heads)", count_cell(g.n_kv_head).text)},
               {"mha", fmt::format("MHA, same width ({} kv heads)", count_cell(g.n_head).text)},
               {"mha_over_gqa", "MHA / GQA"}};
  t.rows.push_back({text_cell("KV cache per token"), bytes_cell(g.kv_cache_bytes_per_token),
                    bytes_cell(g.mha_kv_cache_bytes_per_token),
                    saving(g.kv_cache_bytes_per_token, g.mha_kv_cache_bytes_per_token)});
  t.rows.push_back({text_cell(fmt::format("KV cache per sequence ({} tokens)",
                                          count_cell(g.block_size).text)),
                    bytes_cell(times(g.kv_cache_bytes_per_token, g.block_size)),
                    bytes_cell(times(g.mha_kv_cache_bytes_per_token, g.block_size)),
                    saving(g.kv_cache_bytes_per_token, g.mha_kv_cache_bytes_per_token)});
  t.rows.push_back({text_cell("attention forward FLOPs per token"),
                    number_cell(g.attention_flops_per_token),
                    number_cell(g.mha_attention_flops_per_token),
                    saving(g.attention_flops_per_token, g.mha_attention_flops_per_token)});
  t.rows.push_back({text_cell("k/v projection forward FLOPs per token"),
                    number_cell(g.kv_projection_flops_per_token),
                    number_cell(g.mha_kv_projection_flops_per_token),
                    saving(g.kv_projection_flops_per_token, g.mha_kv_projection_flops_per_token)});
  t.notes.push_back(fmt::format(
      "Analytic (estimates, not measured): {} layers, {} query heads of {} dims sharing {} key/value "
      "heads, against a multi-head model of the same width. KV cache = layers x 2 x kv heads x "
      "head_dim x {} bytes (the run's precision); attention = q, k, v, o projections + scores and "
      "mix at T = block_size.",
      count_cell(g.n_layer).text, count_cell(g.n_head).text, count_cell(g.head_dim).text,
      count_cell(g.n_kv_head).text, count_cell(g.kv_element_bytes).text));
  return t;
}

std::optional<Table> activations_table(const Run& run) {
  if (run.activations.empty()) return std::nullopt;
  std::vector<std::string> order;
  std::map<std::string, double> bytes;
  double total = 0;
  for (const auto& a : run.activations) {
    if (bytes.find(a.scope) == bytes.end()) order.push_back(a.scope);
    bytes[a.scope] += a.saved_bytes.value_or(0);
    total += a.saved_bytes.value_or(0);
  }
  Table t;
  t.id = "activations." + run.label;
  t.title = "Activations saved for backward: " + run.label;
  t.columns = {{"scope", "scope"}, {"saved_bytes", "saved"}, {"share", "share"}};
  size_t zero = 0;
  for (const auto& s : order) {
    if (bytes[s] == 0) {
      ++zero;
      continue;
    }
    t.rows.push_back(
        {text_cell(s), bytes_cell(bytes[s]),
         percent_cell(total > 0 ? std::optional<double>(bytes[s] / total) : std::nullopt)});
  }
  t.notes.push_back(fmt::format(
      "Per step, summed over blocks; share of all {} saved.{}", bytes_cell(total).text,
      zero ? fmt::format(" {} scopes saving nothing are left out.", zero) : std::string()));
  return t;
}

}  // namespace llmprof::report::detail
