// Grid axes from the command line and the default, checked against the base config, and their
// expansion into points. Values are checked with the config's own rules (config::apply_override)
// and kept in the form the config prints them, so "1e-4" and "0.0001" name the same point.
#include "llmprof/sweep/grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"

namespace llmprof::sweep {
namespace {

// Keys llmprof sweep sets itself for every point.
const char* const kManagedKeys[] = {"output.dir", "output.name"};

// Most points one sweep may hold; beyond this a grid is almost surely a mistake.
constexpr int64_t kMaxPoints = 100000;

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The message of a config error from apply_override without its " (from --set k=v)" tail: the
// value came from a grid, whose origin the caller names instead.
std::string without_set_origin(const std::string& what, const std::string& assignment) {
  std::string tail = " (from --set " + assignment + ")";
  if (what.size() >= tail.size() && what.compare(what.size() - tail.size(), tail.size(), tail) == 0)
    return what.substr(0, what.size() - tail.size());
  return what;
}

// "train.batch_size=16, optim.lr=0.0003" for messages.
std::string values_text(const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out;
  for (const auto& [key, value] : values) out += (out.empty() ? "" : ", ") + key + "=" + value;
  return out;
}

}  // namespace

GridAxis parse_grid_arg(const std::string& arg) {
  auto eq = arg.find('=');
  GridAxis axis;
  axis.key = eq == std::string::npos ? std::string() : trim(arg.substr(0, eq));
  axis.origin = "--grid " + arg;
  if (axis.key.empty()) {
    throw UsageError("--grid " + arg + ": expected key=v1,v2,... e.g. --grid optim.lr=1e-4,3e-4");
  }
  std::string rest = arg.substr(eq + 1);
  size_t begin = 0;
  while (true) {
    size_t comma = rest.find(',', begin);
    std::string value =
        trim(rest.substr(begin, comma == std::string::npos ? comma : comma - begin));
    if (value.empty()) {
      throw UsageError(fmt::format("--grid {}: value {} of {} is empty; expected key=v1,v2,...",
                                   arg, axis.values.size() + 1, axis.key));
    }
    axis.values.push_back(value);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return axis;
}

Grid default_grid() {
  return {GridAxis{"train.batch_size", {"8", "16", "32"}, "default grid"},
          GridAxis{"optim.lr", {"1e-4", "3e-4", "1e-3"}, "default grid"}};
}

Grid merge_grids(const Grid& file_grid, const Grid& cli_grid) {
  for (size_t i = 0; i < cli_grid.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (cli_grid[i].key == cli_grid[j].key) {
        throw UsageError(fmt::format("--grid {} given twice ('{}' and '{}'); give each key once",
                                     cli_grid[i].key, cli_grid[j].origin, cli_grid[i].origin));
      }
    }
  }
  if (file_grid.empty() && cli_grid.empty()) return default_grid();
  Grid merged = file_grid;
  for (const GridAxis& cli : cli_grid) {
    auto same = std::find_if(merged.begin(), merged.end(),
                             [&](const GridAxis& a) { return a.key == cli.key; });
    if (same != merged.end()) {
      *same = cli;
    } else {
      merged.push_back(cli);
    }
  }
  return merged;
}

int64_t point_nproc(const Point& p) {
  for (const auto& [key, value] : p.values) {
    if (key == kNprocKey) return std::stoll(value);  // canonical: resolve_nproc checked it
  }
  return 1;
}

namespace {

// The nproc axis: whole numbers from 1 to 1024, canonical without sign or leading zeros.
GridAxis resolve_nproc(const GridAxis& axis) {
  GridAxis resolved{axis.key, {}, axis.origin};
  for (const std::string& value : axis.values) {
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size() || n < 1 || n > 1024) {
      throw ConfigError(fmt::format("{}: nproc={} is not a number of ranks (1 to 1024)",
                                    axis.origin, value), "", axis.key);
    }
    const std::string canonical = std::to_string(n);
    if (std::find(resolved.values.begin(), resolved.values.end(), canonical) !=
        resolved.values.end()) {
      throw ConfigError(fmt::format("{}: nproc={} is given twice", axis.origin, canonical), "",
                        axis.key);
    }
    resolved.values.push_back(canonical);
  }
  return resolved;
}

}  // namespace

Grid resolve_grid(const config::Config& base, const Grid& grid) {
  Grid out;
  for (const GridAxis& axis : grid) {
    if (axis.key == kNprocKey) {
      out.push_back(resolve_nproc(axis));
      continue;
    }
    for (const char* managed : kManagedKeys) {
      if (axis.key == managed) {
        throw ConfigError(axis.origin + ": " + axis.key +
                              " is set by llmprof sweep (each point "
                              "runs in <sweep dir>/runs/<point id>); use --out or --name instead",
                          "", axis.key);
      }
    }
    try {
      config::get_value(base, axis.key);  // unknown key: "...; did you mean 'optim.lr'?"
    } catch (const ConfigError& e) {
      throw ConfigError(axis.origin + ": " + e.what(), "", axis.key);
    }
    if (axis.values.empty()) throw ConfigError(axis.origin + ": no values", "", axis.key);
    GridAxis resolved{axis.key, {}, axis.origin};
    for (const std::string& value : axis.values) {
      config::Config cfg = base;
      std::string assignment = axis.key + "=" + value;
      try {
        config::apply_override(cfg, assignment);
      } catch (const ConfigError& e) {
        throw ConfigError(axis.origin + ": " + without_set_origin(e.what(), assignment), "",
                          axis.key);
      }
      std::string canonical = config::get_value(cfg, axis.key);
      if (std::find(resolved.values.begin(), resolved.values.end(), canonical) !=
          resolved.values.end()) {
        throw ConfigError(
            fmt::format("{}: {}={} is given twice (as '{}'); each value runs once per "
                        "repeat, use --repeat for more",
                        axis.origin, axis.key, canonical, value),
            "", axis.key);
      }
      resolved.values.push_back(canonical);
    }
    out.push_back(std::move(resolved));
  }
  return out;
}

std::string point_id(int64_t index,
                     int64_t num_points,
                     const std::vector<std::pair<std::string, std::string>>& values,
                     int64_t repeat) {
  // Each value adds at most this many characters, keeping ids (file names) under 255 bytes.
  constexpr size_t kMaxValuesChars = 200;
  int width = std::max<int>(3, static_cast<int>(std::to_string(num_points).size()));
  std::string middle;
  for (const auto& [key, value] : values) middle += "-" + key + "=" + value;
  if (middle.size() > kMaxValuesChars) middle.resize(kMaxValuesChars);  // the index stays unique
  std::string id = fmt::format("p{:0{}}{}-r{}", index, width, middle, repeat);
  for (char& c : id) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '.' && c != '_' && c != '=' && c != '-') c = '_';
  }
  return id;
}

std::vector<Point> expand_points(const Grid& grid, int64_t repeats) {
  int64_t combos = 1;
  for (const GridAxis& axis : grid) {
    combos *= static_cast<int64_t>(axis.values.size());
    if (combos * repeats > kMaxPoints) {
      throw UsageError(
          fmt::format("the grid has more than {} points (x {} repeats); split the "
                      "sweep",
                      kMaxPoints, repeats));
    }
  }
  std::vector<Point> points;
  std::vector<size_t> digit(grid.size(), 0);  // mixed-radix counter, last axis fastest
  for (int64_t index = 1; index <= combos; ++index) {
    std::vector<std::pair<std::string, std::string>> values;
    for (size_t a = 0; a < grid.size(); ++a)
      values.emplace_back(grid[a].key, grid[a].values[digit[a]]);
    for (int64_t r = 1; r <= repeats; ++r) {
      points.push_back(Point{index, r, values, point_id(index, combos, values, r)});
    }
    for (size_t a = grid.size(); a-- > 0;) {
      if (++digit[a] < grid[a].values.size()) break;
      digit[a] = 0;
    }
  }
  return points;
}

void validate_points(const config::Config& base, const std::vector<Point>& points) {
  for (const Point& p : points) {
    if (p.repeat != 1) continue;  // repeats share their values
    config::Config cfg = base;
    try {
      for (const auto& [key, value] : p.values) {
        if (key != kNprocKey) config::apply_override(cfg, key + "=" + value);  // a launch count
      }
      config::validate(cfg);
    } catch (const ConfigError& e) {
      throw ConfigError(
          fmt::format("grid point {} ({}): {}", p.id, values_text(p.values), e.what()),
          base.source_file, e.key());
    }
  }
}

}  // namespace llmprof::sweep
