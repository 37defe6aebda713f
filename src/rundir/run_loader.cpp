// load_run: every file of a run directory into typed rows, by the column names the writers print
// (tables_columns.h; tests/rundir writes every table and reads it back). Only steps.csv is
// required; each later file (modules.csv, ops.csv, memory.csv, activations.csv, summary.json) is
// read when present. Every file goes through one reader that leaves out what a killed run or full disk cut short
// (a last row, an empty file) into Run::warnings.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include "llmprof/base/numbers.h"
#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "read_util.h"

namespace fs = std::filesystem;

namespace llmprof::rundir {

namespace {

using detail::CsvFile;
using Warnings = std::vector<InputWarning>;

// The CSV file at path when present and not empty.
std::optional<CsvFile> read_side_csv(const std::string& path, Warnings& warnings) {
  if (!fs::exists(path)) return std::nullopt;
  return detail::read_run_csv(path, warnings, /*required=*/false);
}

// The JSON file at path when present and not empty; an empty one is left out with a warning.
std::optional<nlohmann::json> read_side_json(const std::string& path, Warnings& warnings) {
  if (!fs::exists(path)) return std::nullopt;
  std::error_code ec;
  if (fs::file_size(path, ec) == 0 && !ec) {
    warnings.push_back({"", path, 0, "empty file (0 bytes): killed run or full disk? Left out"});
    return std::nullopt;
  }
  return detail::read_json(path);
}

void flatten_yaml(const YAML::Node& node,
                  const std::string& prefix,
                  std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      std::string key = kv.first.as<std::string>();
      flatten_yaml(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else if (node.IsScalar()) {
    out[prefix] = node.Scalar();
  } else if (node.IsNull()) {
    out[prefix] = "";
  }
}

std::map<std::string, std::string> read_config(const std::string& path, Warnings& warnings) {
  std::map<std::string, std::string> out;
  if (!fs::exists(path)) return out;
  std::string text = detail::read_text(path);
  if (text.empty()) {
    warnings.push_back({"", path, 0, "empty file (0 bytes): killed run or full disk? Left out"});
    return out;
  }
  try {
    flatten_yaml(YAML::Load(text), "", out);
  } catch (const YAML::Exception& e) {
    throw DataError(fmt::format("{} line {}, col {}: invalid YAML: {}", path, e.mark.line + 1,
                                e.mark.column + 1, e.msg));
  }
  return out;
}

std::vector<StepRow> read_steps(const std::string& path, Warnings& warnings) {
  CsvFile csv = *detail::read_run_csv(path, warnings, /*required=*/true);
  const int step = csv.require("step");
  csv.require("step_ms");
  std::vector<std::pair<int, std::optional<double> StepRow::*>> fields;
  for (const StepColumn& c : step_columns()) {
    fields.emplace_back(csv.index(std::string(c.name)), c.field);  // -1: an older file lacks it
  }
  std::vector<StepRow> rows(csv.rows.size());
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    rows[r].step = csv.required_integer(r, step);
    for (const auto& [col, field] : fields) rows[r].*field = csv.number(r, col);
  }
  return rows;
}

std::vector<EvalRow> read_evals(const std::string& path, Warnings& warnings) {
  std::vector<EvalRow> rows;
  std::optional<CsvFile> file = read_side_csv(path, warnings);
  if (!file) return rows;
  const CsvFile& csv = *file;
  int step = csv.require("step"), split = csv.require("split"), loss = csv.require("loss");
  int ppl = csv.index("perplexity"), acc = csv.index("accuracy"), ms = csv.index("eval_ms");
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    EvalRow e;
    e.step = csv.required_integer(r, step);
    e.split = csv.text(r, split);
    e.loss = csv.required_number(r, loss);
    e.perplexity = csv.number(r, ppl);
    e.accuracy = csv.number(r, acc);
    e.eval_ms = csv.number(r, ms);
    rows.push_back(e);
  }
  return rows;
}

// The roofline columns of ops.csv or modules.csv (absent in runs written before them).
struct RooflineIndex {
  int bytes, intensity, gflops, gbps, bound, roofline, unmodelled, lost;
  explicit RooflineIndex(const CsvFile& csv)
      : bytes(csv.index("bytes")), intensity(csv.index("arithmetic_intensity")),
        gflops(csv.index("achieved_gflops_per_s")), gbps(csv.index("achieved_gb_per_s")),
        bound(csv.index("bound")), roofline(csv.index("roofline_ms")),
        unmodelled(csv.index("unmodelled_ms")), lost(csv.index("lost_ms")) {
    if (gflops < 0) gflops = csv.index("gflops_per_s");  // its name before the roofline
  }
  RooflineColumns read(const CsvFile& csv, size_t r) const {
    RooflineColumns c;
    c.bytes = csv.number(r, bytes);
    c.arithmetic_intensity = csv.number(r, intensity);
    c.achieved_gflops_per_s = csv.number(r, gflops);
    c.achieved_gb_per_s = csv.number(r, gbps);
    c.bound = csv.text(r, bound);
    if (!c.bound.empty() && c.bound != "compute" && c.bound != "memory" && c.bound != "overhead") {
      throw DataError(fmt::format("{} line {}: column 'bound': '{}' (expected compute|memory|overhead)",
                                  csv.path, csv.lines[r], c.bound));
    }
    c.roofline_ms = csv.number(r, roofline);
    c.unmodelled_ms = csv.number(r, unmodelled);
    c.lost_ms = csv.number(r, lost);
    return c;
  }
};

std::vector<ModuleRow> read_modules(const std::string& path, Warnings& warnings) {
  std::vector<ModuleRow> rows;
  std::optional<CsvFile> file = read_side_csv(path, warnings);
  if (!file) return rows;
  const CsvFile& csv = *file;
  int scope = csv.require("scope"), block = csv.index("block"), pass = csv.require("pass");
  int total = csv.require("total_ms");
  int calls = csv.index("calls"), mean = csv.index("mean_ms"), self = csv.index("self_ms");
  int share = csv.index("share_of_pass"), flops = csv.index("flops"), mfu = csv.index("mfu");
  int steps = csv.index("steps"), gpu = csv.index("gpu_ms");
  const RooflineIndex roofline(csv);
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    ModuleRow m;
    m.roofline = roofline.read(csv, r);
    m.scope = csv.text(r, scope);
    m.block = csv.integer(r, block);
    m.pass = csv.text(r, pass);
    m.calls = csv.number(r, calls);
    m.total_ms = csv.required_number(r, total);
    m.mean_ms = csv.number(r, mean);
    m.self_ms = csv.number(r, self);
    m.share_of_pass = csv.number(r, share);
    m.flops = csv.number(r, flops);
    m.mfu = csv.number(r, mfu);
    m.steps = csv.number(r, steps);
    m.gpu_ms = csv.number(r, gpu);
    if (m.pass != "forward" && m.pass != "backward") {
      throw DataError(fmt::format("{} line {}: column 'pass': '{}' (expected forward|backward)",
                                  path, csv.lines[r], m.pass));
    }
    rows.push_back(m);
  }
  return rows;
}

std::vector<OpRow> read_ops(const std::string& path, Warnings& warnings) {
  std::vector<OpRow> rows;
  std::optional<CsvFile> file = read_side_csv(path, warnings);
  if (!file) return rows;
  const CsvFile& csv = *file;
  int op = csv.require("op"), self = csv.require("self_ms"), views = csv.index("view_calls");
  int calls = csv.index("calls"), total = csv.index("total_ms"), share = csv.index("self_share");
  int flops = csv.index("flops");
  const RooflineIndex roofline(csv);
  int alloc = csv.index("alloc_bytes"), shapes = csv.index("input_shapes");
  int steps = csv.index("steps"), gpu = csv.index("gpu_ms");
  int during = csv.index("during"), evals = csv.index("evals");
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    OpRow o;
    const std::string when = csv.text(r, during);
    if (!when.empty() && when != "step" && when != "eval") {
      throw DataError(fmt::format("{} line {}: column 'during': '{}' (expected step|eval)", path,
                                  csv.lines[r], when));
    }
    o.eval = when == "eval";
    o.evals = csv.number(r, evals);
    o.op = csv.text(r, op);
    o.calls = csv.number(r, calls);
    o.self_ms = csv.number(r, self);  // empty for a view op counted without times
    o.view_calls = csv.number(r, views);
    o.total_ms = csv.number(r, total);
    o.self_share = csv.number(r, share);
    o.flops = csv.number(r, flops);
    o.roofline = roofline.read(csv, r);
    o.alloc_bytes = csv.number(r, alloc);
    o.input_shapes = csv.text(r, shapes);
    o.steps = csv.number(r, steps);
    o.gpu_ms = csv.number(r, gpu);
    rows.push_back(o);
  }
  return rows;
}

std::vector<MemoryRow> read_memory(const std::string& path, Warnings& warnings) {
  std::vector<MemoryRow> rows;
  std::optional<CsvFile> file = read_side_csv(path, warnings);
  if (!file) return rows;
  const CsvFile& csv = *file;
  int step = csv.require("step"), phase = csv.require("phase");
  int peak = csv.index("peak_allocated_bytes"), end = csv.index("end_allocated_bytes");
  int rss = csv.index("rss_bytes");
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    MemoryRow m;
    m.step = static_cast<int64_t>(csv.required_number(r, step));
    m.phase = csv.text(r, phase);
    m.peak_allocated_bytes = csv.number(r, peak);
    m.end_allocated_bytes = csv.number(r, end);
    m.rss_bytes = csv.number(r, rss);
    rows.push_back(m);
  }
  return rows;
}

std::vector<ActivationRow> read_activations(const std::string& path, Warnings& warnings) {
  std::vector<ActivationRow> rows;
  std::optional<CsvFile> file = read_side_csv(path, warnings);
  if (!file) return rows;
  const CsvFile& csv = *file;
  int scope = csv.require("scope"), block = csv.index("block");
  int saved = csv.require("saved_bytes"), alloc = csv.index("alloc_bytes");
  int steps = csv.index("steps");
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    rows.push_back({csv.text(r, scope), csv.integer(r, block), csv.number(r, saved),
                    csv.number(r, alloc), csv.number(r, steps)});
  }
  return rows;
}

void read_env(const std::string& path, Run& run) {
  std::optional<nlohmann::json> doc = read_side_json(path, run.warnings);
  if (!doc) return;
  const nlohmann::json& env = *doc;
  run.host_memory_bytes = detail::json_number(env, "host.memory_bytes");
  run.host_cores = detail::json_number(env, "host.cores");
  run.peak_flops_per_s = detail::json_number(env, "peak_flops.flops_per_s");
  run.peak_bytes_per_s = detail::json_number(env, "peak_bandwidth.bytes_per_s");
  run.peak_bf16_flops_per_s = detail::json_number(env, "peak_flops.bf16_flops_per_s");
  run.peak_busbw_bytes_per_s = detail::json_number(env, "peak_comm.busbw_bytes_per_s");
  if (env.contains("torch") && env["torch"].is_object() && env["torch"].contains("version") &&
      env["torch"]["version"].is_string()) {
    run.torch_version = env["torch"]["version"].get<std::string>();
  }
  const nlohmann::json* host = env.contains("host") ? &env["host"] : nullptr;
  for (const char* flag : {"avx512_bf16", "amx_bf16"}) {
    if (host != nullptr && host->is_object() && host->contains(flag) && (*host)[flag].is_boolean() &&
        (*host)[flag].get<bool>()) {
      run.native_bf16 = true;
    }
  }
}

// A summary.json field written through a name table, parsed once here: nullopt when absent or
// null; anything else outside the table is a DataError naming the file, the field and the value.
template <typename E>
std::optional<E> name_field(const nlohmann::json& s, const char* field, const std::string& path) {
  if (!s.contains(field) || s[field].is_null()) return std::nullopt;
  const nlohmann::json& v = s[field];
  return parse_name<E>(v.is_string() ? v.get<std::string>() : v.dump(), path, field);
}

void fill_from_summary(const std::string& path, Run& run) {
  std::optional<Summary> summary = read_summary(path, run.warnings);
  if (!summary) {
    run.incomplete = true;
    return;
  }
  run.has_summary = true;
  run.status = summary->status;
  run.profile_level = summary->profile_level;
  run.message = summary->message;
  run.summary_warmup_steps = summary->warmup_excluded;
  run.summary_max_steps = summary->max_steps;
  run.summary_peak_rss_bytes = summary->peak_rss_bytes;
  run.energy = summary->energy;
  run.plan = summary->plan;
  run.plan_peak_predicted = summary->plan_peak_predicted;
  run.plan_peak_measured = summary->plan_peak_measured;
}

}  // namespace

// summary.json "plan" (written by llmprof train): the components and the phase of the peak.
void read_plan(const nlohmann::json& s, Summary& out) {
  if (!s.contains("plan") || !s["plan"].is_object()) return;
  const nlohmann::json& p = s["plan"];
  if (p.contains("components") && p["components"].is_object()) {
    for (const auto& [name, c] : p["components"].items()) {
      if (!c.is_object()) continue;
      out.plan.push_back({name, detail::json_number(c, "predicted_bytes"),
                          detail::json_number(c, "measured_bytes"), detail::json_number(c, "ratio")});
    }
  }
  if (p.contains("peak_phase") && p["peak_phase"].is_object()) {
    const auto& ph = p["peak_phase"];
    auto text = [&](const char* k) {
      return ph.contains(k) && ph[k].is_string() ? ph[k].get<std::string>() : std::string();
    };
    out.plan_peak_predicted = text("predicted");
    if (!text("predicted_module").empty()) out.plan_peak_predicted += " / " + text("predicted_module");
    out.plan_peak_measured = text("measured");
  }
}

std::optional<Summary> read_summary(const std::string& path, Warnings& warnings) {
  std::optional<nlohmann::json> doc = read_side_json(path, warnings);
  if (!doc) return std::nullopt;
  const nlohmann::json& s = *doc;
  using detail::json_number;
  Summary out;
  out.status = name_field<config::RunStatus>(s, "status", path);
  out.profile_level = name_field<config::ProfileLevel>(s, "profile_level", path);
  if (s.contains("message") && s["message"].is_string()) out.message = s["message"];
  if (auto w = json_number(s, "steps.warmup_excluded")) out.warmup_excluded = whole_int64(*w);
  if (auto n = json_number(s, "steps.max_steps")) out.max_steps = whole_int64(*n);
  out.median_step_ms = json_number(s, "timing.step_ms.median");
  out.tokens_per_s = json_number(s, "throughput.tokens_per_s.median");
  out.mfu = json_number(s, "mfu.value.median");
  out.final_train_loss = json_number(s, "loss.final_train_loss");
  out.final_val_loss = json_number(s, "loss.final_val_loss");
  out.final_val_perplexity = json_number(s, "loss.final_val_perplexity");
  out.peak_rss_bytes = json_number(s, "memory.peak_rss_bytes");
  if (s.contains("energy") && s["energy"].is_object()) {
    const auto& e = s["energy"];
    EnergySummary en;
    en.total_j = json_number(e, "total_j");
    en.kwh = json_number(e, "kwh");
    en.tokens_per_j = json_number(e, "tokens_per_j");
    en.flops_per_j = json_number(e, "flops_per_j");
    en.mean_power_w = json_number(e, "mean_power_w");
    en.peak_power_w = json_number(e, "peak_power_w");
    en.co2_g = json_number(e, "co2_g");
    if (e.contains("source") && e["source"].is_string()) en.source = e["source"];
    en.estimated =
        e.contains("estimated") && e["estimated"].is_boolean() && e["estimated"].get<bool>();
    out.energy = en;
  }
  read_plan(s, out);
  return out;
}

void detail::throw_unknown_name(const std::string& where,
                                std::string_view field,
                                std::string_view text,
                                const std::string_view* names,
                                size_t count) {
  throw DataError(fmt::format("{}: {} '{}' is not one of {}", where, field, printable(text),
                              fmt::join(names, names + count, "|")));
}

std::string why_no_rows(const Run& run, config::ProfileLevel needed) {
  const bool ops = needed >= config::ProfileLevel::kOps;
  const bool empty = ops ? run.ops.empty() : run.modules.empty();
  if (!run.profile_level || !empty) return "";
  const std::string_view file = ops ? kOps : kModules;
  if (*run.profile_level < needed) {
    return fmt::format("recorded at profile.level={}; {} needs profile.level={}",
                       config::name(*run.profile_level), file, config::name(needed));
  }
  return fmt::format("profile.level={}, but {} holds no rows", config::name(*run.profile_level),
                     file);
}

std::string Run::status_text() const {
  if (status) return std::string(config::name(*status));
  return has_summary ? "unknown" : "incomplete";
}

std::optional<double> Run::config_number(const std::string& key) const {
  auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  return parse_number(it->second);
}

void disambiguate_labels(const std::vector<Run*>& runs) {
  std::vector<bool> shared;
  for (const Run* a : runs) {
    shared.push_back(std::count_if(runs.begin(), runs.end(),
                                   [&](const Run* b) { return b->label == a->label; }) > 1);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!shared[i]) continue;
    fs::path p = fs::path(runs[i]->dir).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();
    runs[i]->label = (p.parent_path().filename() / p.filename()).string();
  }
}

bool is_sweep_dir(const std::string& dir) { return fs::exists(path(dir, kSweepCsv)); }

Run load_run(const std::string& dir) {
  fs::path p(dir);
  if (!fs::is_directory(p)) throw DataError(detail::not_a_directory(dir));
  if (!fs::exists(path(dir, kSteps))) {
    throw DataError(
        fmt::format("'{}': not a run directory (no steps.csv) nor a sweep (no "
                    "sweep.csv)",
                    dir));
  }
  Run run;
  run.dir = dir;
  fs::path name = p.filename().empty() ? p.parent_path().filename() : p.filename();
  run.label = name.string();
  Warnings& w = run.warnings;
  run.config = read_config(path(dir, kConfig), w);
  read_env(path(dir, kEnv), run);
  fill_from_summary(path(dir, kSummary), run);
  run.steps = read_steps(path(dir, kSteps), w);
  run.evals = read_evals(path(dir, kEval), w);
  run.modules = read_modules(path(dir, kModules), w);
  for (OpRow& o : read_ops(path(dir, kOps), w)) (o.eval ? run.eval_ops : run.ops).push_back(std::move(o));
  run.memory = read_memory(path(dir, kMemory), w);
  run.activations = read_activations(path(dir, kActivations), w);
  if (!run.warnings.empty()) run.incomplete = true;
  return run;
}

}  // namespace llmprof::rundir
