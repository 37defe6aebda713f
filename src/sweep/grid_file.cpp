// The `sweep:` section of a config file, read with yaml-cpp (which reads JSON too): the grid with
// the value generators it offers (lists, {range: [start, stop, step]}, {log: [start, stop, count]})
// and the launcher keys (sweep.launcher, sweep.slurm.*).
// load_config skips this section, so one file serves both `llmprof train` and `llmprof sweep`.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "llmprof/config/schema.h"
#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "llmprof/sweep/grid.h"
#include "llmprof/sweep/slurm.h"

namespace llmprof::sweep {
namespace {

// Most values one range or log axis may generate.
constexpr int64_t kMaxAxisValues = 10000;

// The integer in s (all of it), or false.
bool parse_int(const std::string& s, int64_t& out) {
  const char* b = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(b, s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && b != end;
}

// The finite number in s (all of it); throws ConfigError naming what it is.
double parse_number(const std::string& s, const char* what) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
    throw ConfigError(fmt::format("{}: '{}' is not a number", what, printable(s)));
  }
  return v;
}

// "FILE line L, col C" of a yaml-cpp node (its marks are 0-based).
std::string where(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return file;
  return fmt::format("{} line {}, col {}", file, m.line + 1, m.column + 1);
}

// The whole file (YAML or JSON); throws ConfigError naming it.
YAML::Node load_file(const std::string& config_path) {
  try {
    return YAML::LoadFile(config_path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: cannot read the sweep section: {}", config_path,
                                  printable(e.what(), 200)),
                      config_path);
  }
}

// True when the schema types key as an integer (log values are then rounded to whole numbers).
bool is_int_key(const std::string& key) {
  for (const config::KeyInfo& k : config::list_keys()) {
    if (k.path == key) return k.type == "int";
  }
  return false;
}

// The three scalars of `range: [a, b, c]` / `log: [a, b, c]`; throws naming the form.
std::vector<std::string> three_scalars(const YAML::Node& seq, const std::string& form) {
  const char* shape = form == "range" ? "[start, stop, step]" : "[start, stop, count]";
  if (!seq.IsSequence() || seq.size() != 3) {
    throw ConfigError(fmt::format("{}: expected {}: {}", form, form, shape));
  }
  std::vector<std::string> out;
  for (const YAML::Node& item : seq) {
    if (!item.IsScalar()) throw ConfigError(fmt::format("{}: expected {}: {}", form, form, shape));
    out.push_back(item.Scalar());
  }
  return out;
}

// The values of one `key: <spec>` entry of sweep.grid.
std::vector<std::string> axis_values(const std::string& key, const YAML::Node& spec) {
  const char* forms =
      "expected a list [a, b, ...], {range: [start, stop, step]} or "
      "{log: [start, stop, count]}";
  std::vector<std::string> values;
  if (spec.IsScalar()) return {spec.Scalar()};
  if (spec.IsSequence()) {
    for (const YAML::Node& item : spec) {
      if (!item.IsScalar()) throw ConfigError(std::string("list items must be values; ") + forms);
      values.push_back(item.Scalar());
    }
    if (values.empty()) throw ConfigError("empty list: give at least one value");
    return values;
  }
  if (!spec.IsMap() || spec.size() != 1) throw ConfigError(forms);
  const std::string form = spec.begin()->first.Scalar();
  // A copy (a Node is a handle): `->second` lives in the temporary iterator's proxy, so a
  // reference would dangle once this statement ends (AddressSanitizer: stack-use-after-scope).
  const YAML::Node args = spec.begin()->second;
  if (form == "range") {
    auto a = three_scalars(args, form);
    return expand_range(a[0], a[1], a[2]);
  }
  if (form == "log") {
    auto a = three_scalars(args, form);
    int64_t count = 0;
    if (!parse_int(a[2], count)) throw ConfigError("log: count '" + a[2] + "' is not an integer");
    return expand_log(parse_number(a[0], "log start"), parse_number(a[1], "log stop"), count,
                      is_int_key(key));
  }
  throw ConfigError("unknown form '" + form + "'; " + forms);
}

}  // namespace

std::vector<std::string> expand_range(const std::string& start,
                                      const std::string& stop,
                                      const std::string& step) {
  const std::string shown = fmt::format("range [{}, {}, {}]", start, stop, step);
  std::vector<std::string> out;
  int64_t i0 = 0, i1 = 0, di = 0;
  if (parse_int(start, i0) && parse_int(stop, i1) && parse_int(step, di)) {
    if (di == 0) throw ConfigError(shown + ": step is 0");
    if ((i1 - i0) / di < 0) throw ConfigError(shown + ": step moves away from stop");
    if ((i1 - i0) / di >= kMaxAxisValues) throw ConfigError(shown + ": too many values");
    for (int64_t v = i0; di > 0 ? v <= i1 : v >= i1; v += di) out.push_back(std::to_string(v));
    return out;
  }
  const double a = parse_number(start, "range start"), b = parse_number(stop, "range stop"),
               d = parse_number(step, "range step");
  if (d == 0) throw ConfigError(shown + ": step is 0");
  // Values a + i*d for i = 0..n-1; the 1e-9 slack keeps stop when (b-a)/d rounds just below n-1.
  const double span = (b - a) / d;
  if (span < -1e-9) throw ConfigError(shown + ": step moves away from stop");
  if (span >= kMaxAxisValues) throw ConfigError(shown + ": too many values");
  const auto n = static_cast<int64_t>(std::floor(span + 1e-9)) + 1;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(fmt::format("{:.12g}", a + static_cast<double>(i) * d));
  return out;
}

std::vector<std::string> expand_log(double start, double stop, int64_t count, bool integral) {
  const std::string shown = fmt::format("log [{}, {}, {}]", start, stop, count);
  if (!(start > 0) || !(stop > 0)) throw ConfigError(shown + ": start and stop must be > 0");
  if (count < 1 || count > kMaxAxisValues) {
    throw ConfigError(fmt::format("{}: count must be in [1, {}]", shown, kMaxAxisValues));
  }
  // v_i = exp(ln start + i * (ln stop - ln start) / (count - 1)): equal ratios between neighbours.
  std::vector<std::string> out;
  const double ln_a = std::log(start), ln_b = std::log(stop);
  for (int64_t i = 0; i < count; ++i) {
    double v = count == 1 ? start
                          : std::exp(ln_a + static_cast<double>(i) * (ln_b - ln_a) /
                                                static_cast<double>(count - 1));
    if (i == count - 1 && count > 1) v = stop;
    std::string text = integral ? std::to_string(std::llround(v)) : fmt::format("{:.12g}", v);
    if (out.empty() || out.back() != text) out.push_back(text);
  }
  return out;
}

Grid read_sweep_section(const std::string& config_path) {
  const YAML::Node root = load_file(config_path);
  if (!root.IsMap()) return {};
  const YAML::Node sweep = root["sweep"];
  if (!sweep || sweep.IsNull()) return {};
  if (!sweep.IsMap()) {
    throw ConfigError("sweep: expected a mapping like sweep: {grid: {optim.lr: [1e-4, 1e-3]}} (" +
                          where(config_path, sweep) + ")",
                      config_path, "sweep");
  }
  for (const auto& entry : sweep) {
    const std::string key = entry.first.Scalar();
    if (key != "grid" && key != "launcher" && key != "slurm") {
      throw ConfigError("unknown key 'sweep." + key + "' (" + where(config_path, entry.first) +
                            "); the sweep section holds 'grid', 'launcher' and 'slurm'",
                        config_path, "sweep." + key);
    }
  }
  const YAML::Node grid = sweep["grid"];
  if (!grid || grid.IsNull()) return {};
  if (!grid.IsMap()) {
    throw ConfigError("sweep.grid: expected a mapping of config keys to values (" +
                          where(config_path, grid) + ")",
                      config_path, "sweep.grid");
  }
  Grid out;
  for (const auto& entry : grid) {
    GridAxis axis;
    axis.key = entry.first.Scalar();
    axis.origin = "sweep.grid." + axis.key + " (" + where(config_path, entry.first) + ")";
    for (const GridAxis& seen : out) {
      if (seen.key == axis.key)
        throw ConfigError(axis.origin + ": key given twice", config_path, axis.key);
    }
    try {
      axis.values = axis_values(axis.key, entry.second);
    } catch (const ConfigError& e) {
      throw ConfigError(axis.origin + ": " + e.what(), config_path, axis.key);
    }
    out.push_back(std::move(axis));
  }
  return out;
}

namespace {

// The sweep section's map, or an undefined node when the file has none.
YAML::Node sweep_map(const std::string& config_path) {
  const YAML::Node root = load_file(config_path);
  if (!root.IsMap() || !root["sweep"] || !root["sweep"].IsMap()) return YAML::Node();
  return root["sweep"];
}

// Where a launcher key was given: a file's line and column, or a --set argument.
struct Place {
  std::string file;  // "" for --set
  std::string text;  // "FILE line L, col C" or "--set ARG"
  int64_t line = 0, column = 0;
};

Place in_file(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return {file, where(file, node), m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1};
}

[[noreturn]] void bad_value(const std::string& key, const std::string& what, const Place& at) {
  throw ConfigError(fmt::format("{}: {} ({})", key, what, at.text), at.file, key, at.line,
                    at.column);
}

// The scalar of node as text; throws ConfigError naming key and place when it is not one.
std::string scalar(const std::string& key, const YAML::Node& node, const Place& at) {
  if (!node.IsScalar()) bad_value(key, "expected a value", at);
  return node.Scalar();
}

// As scalar, with an empty value (`partition:`, `--set sweep.slurm.partition=`) as "": the
// cluster's default.
std::string text_or_empty(const std::string& key, const YAML::Node& node, const Place& at) {
  return node.IsNull() ? std::string() : scalar(key, node, at);
}

int64_t int_in(const std::string& key, const YAML::Node& node, const Place& at, int64_t lo,
               int64_t hi) {
  const std::string text = scalar(key, node, at);
  int64_t v = 0;
  if (!parse_int(text, v) || v < lo || v > hi) {
    bad_value(key, fmt::format("'{}' is not an integer in [{}, {}]", text, lo, hi), at);
  }
  return v;
}

// The keys of sweep.slurm, in the order `llmprof config keys` lists them.
constexpr const char* kSlurmFields[] = {"partition", "time",       "cpus_per_task",
                                        "mem",       "gres",       "max_concurrent_tasks",
                                        "extra_args"};

bool is_slurm_field(const std::string& field) {
  return std::find(std::begin(kSlurmFields), std::end(kSlurmFields), field) !=
         std::end(kSlurmFields);
}

// Sets sweep.launcher (name "launcher") or one sweep.slurm key (name "slurm.<key>") from node;
// throws ConfigError naming the key and where it was given.
void set_launch_key(LaunchSettings& out, const std::string& name, const YAML::Node& v,
                    const Place& at) {
  const std::string key = "sweep." + name;
  if (name == "launcher") {
    const std::string text = scalar(key, v, at);
    try {
      out.launcher = config::parse_enum<config::Launcher>(text);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string(e.what()) + " (" + at.text + ")", at.file, key, at.line,
                        at.column);
    }
    return;
  }
  SlurmSettings& s = out.slurm;
  const std::string field = name.substr(name.find('.') + 1);
  if (field == "partition") {
    s.partition = text_or_empty(key, v, at);
  } else if (field == "time") {
    s.time = text_or_empty(key, v, at);
  } else if (field == "mem") {
    s.mem = text_or_empty(key, v, at);
  } else if (field == "gres") {
    s.gres = text_or_empty(key, v, at);
  } else if (field == "cpus_per_task") {
    s.cpus_per_task = int_in(key, v, at, 1, 4096);
  } else if (field == "max_concurrent_tasks") {
    s.max_concurrent_tasks = int_in(key, v, at, 0, 1000000);
  } else if (field == "extra_args") {
    if (!v.IsSequence()) {
      bad_value(key, "expected a list of sbatch arguments, e.g. [--account=proj]", at);
    }
    s.extra_args.clear();  // a later source replaces the list, as for every other key
    for (const YAML::Node& item : v) s.extra_args.push_back(scalar(key, item, at));
  } else {
    throw ConfigError("unknown key '" + printable(key) + "' (" + at.text +
                          "); sweep.slurm holds partition, time, cpus_per_task, mem, gres, "
                          "max_concurrent_tasks and extra_args",
                      at.file, key, at.line, at.column);
  }
}

}  // namespace

LaunchSettings read_launch_section(const std::string& config_path) {
  LaunchSettings out;
  const YAML::Node sweep = sweep_map(config_path);
  if (!sweep) return out;
  if (const YAML::Node l = sweep["launcher"]; l && !l.IsNull()) {
    set_launch_key(out, "launcher", l, in_file(config_path, l));
  }
  const YAML::Node slurm = sweep["slurm"];
  if (!slurm || slurm.IsNull()) return out;
  if (!slurm.IsMap()) {
    throw ConfigError("sweep.slurm: expected a mapping like {partition: debug, time: 00:30:00} (" +
                          where(config_path, slurm) + ")",
                      config_path, "sweep.slurm");
  }
  for (const auto& entry : slurm) {
    const std::string field = entry.first.Scalar();
    // A bad value is shown at the value, an unknown key at the key.
    const Place at = in_file(config_path, is_slurm_field(field) ? entry.second : entry.first);
    set_launch_key(out, "slurm." + field, entry.second, at);
  }
  return out;
}

void apply_launch_sets(LaunchSettings& settings, std::vector<std::string>& overrides) {
  std::vector<std::string> rest;
  for (const std::string& set : overrides) {
    const std::string key = set.substr(0, set.find('='));
    if (key != "sweep" && key.rfind("sweep.", 0) != 0) {
      rest.push_back(set);
      continue;
    }
    const Place at{"", "--set " + printable(set)};
    if (set.find('=') == std::string::npos) {
      throw ConfigError("malformed override '" + printable(set) +
                            "': expected --set key=value, e.g. --set sweep.slurm.partition=debug",
                        "", key);
    }
    if (key == "sweep.grid" || key.rfind("sweep.grid.", 0) == 0) {
      throw ConfigError(at.text + ": the grid is not set with --set: give each axis with --grid "
                                  "KEY=V1,V2,... (or in the file's sweep.grid)",
                        "", key);
    }
    if (key != "sweep.launcher" && key.rfind("sweep.slurm.", 0) != 0) {
      throw ConfigError("unknown key '" + printable(key) + "' in " + at.text +
                            "; the sweep section holds sweep.grid, sweep.launcher and "
                            "sweep.slurm.*",
                        "", key);
    }
    // The value as YAML reads it, so `--set sweep.slurm.extra_args=[--account=x]` is a list.
    YAML::Node value;
    try {
      value = YAML::Load(set.substr(set.find('=') + 1));
    } catch (const YAML::Exception& e) {
      bad_value(key, std::string("cannot read the value: ") + printable(e.what(), 200), at);
    }
    set_launch_key(settings, key.substr(6), value, at);
  }
  overrides = std::move(rest);
}

std::vector<config::KeyInfo> sweep_section_keys() {
  const LaunchSettings d;
  std::string launchers;
  for (std::string_view n : config::EnumTable<config::Launcher>::names) {
    launchers += (launchers.empty() ? "" : "|") + std::string(n);
  }
  return {
      {"sweep.grid", "map", "{}", "",
       "swept keys and values: lists, {range: [start, stop, step]}, {log: [start, stop, count]}"},
      {"sweep.launcher", "enum", std::string(config::name(d.launcher)), launchers,
       "where points run: here (local) or as one Slurm job array (slurm); --launcher overrides"},
      {"sweep.slurm.partition", "string", "", "", "sbatch --partition; empty: the default one"},
      {"sweep.slurm.time", "string", "", "", "sbatch --time per task, e.g. 00:30:00"},
      {"sweep.slurm.cpus_per_task", "int", std::to_string(d.slurm.cpus_per_task), "[1, 4096]",
       "sbatch --cpus-per-task: the threads of each point"},
      {"sweep.slurm.mem", "string", "", "", "sbatch --mem per task, e.g. 4G"},
      {"sweep.slurm.gres", "string", "", "", "sbatch --gres per task, e.g. gpu:1"},
      {"sweep.slurm.max_concurrent_tasks", "int", std::to_string(d.slurm.max_concurrent_tasks),
       "[0, 1000000]", "the array's %K: tasks running at once; 0: no limit; --jobs overrides"},
      {"sweep.slurm.extra_args", "list", "[]", "",
       "more sbatch arguments for both jobs, e.g. [--account=proj]; --slurm-arg adds to them"},
  };
}

}  // namespace llmprof::sweep
