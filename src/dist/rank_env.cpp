// Rank environment of a torchrun-style launch or a Slurm step (include/llmprof/dist/rank_env.h).
#include "llmprof/dist/rank_env.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "llmprof/error.h"

namespace llmprof::dist {
namespace {

using Getter = std::function<const char*(const char*)>;

ConfigError env_error(std::string_view name, std::string_view value, std::string_view expected) {
  return ConfigError(fmt::format("environment variable {}={:?}: expected {}", name, value, expected),
                     {}, std::string(name));
}

// A whole decimal integer in [lo, hi], or ConfigError naming the variable.
int64_t parse_int(std::string_view name, const char* text, int64_t lo, int64_t hi) {
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    throw env_error(name, s, fmt::format("an integer in [{}, {}]", lo, hi));
  }
  return v;
}

const char* non_empty(const Getter& get, const char* name) {
  const char* v = get(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

void check_ranks(RankEnv& env, std::string_view rank_var, std::string_view size_var) {
  if (env.rank >= env.world_size) {
    throw ConfigError(fmt::format("environment: {}={} is not below {}={}", rank_var, env.rank,
                                  size_var, env.world_size),
                      {}, std::string(rank_var));
  }
}

int parse_port(const char* name, const char* text) {
  return static_cast<int>(parse_int(name, text, 1, 65535));
}

RankEnv from_torchrun(const Getter& get) {
  RankEnv env;
  env.source = EnvSource::kTorchrun;
  const char* rank = non_empty(get, "RANK");
  const char* size = non_empty(get, "WORLD_SIZE");
  if (rank == nullptr || size == nullptr) {
    throw ConfigError(fmt::format("environment: RANK and WORLD_SIZE must be set together (RANK {}, "
                                  "WORLD_SIZE {})", rank ? "set" : "unset", size ? "set" : "unset"),
                      {}, rank ? "WORLD_SIZE" : "RANK");
  }
  env.world_size = static_cast<int>(parse_int("WORLD_SIZE", size, 1, 1 << 20));
  env.rank = static_cast<int>(parse_int("RANK", rank, 0, 1 << 20));
  check_ranks(env, "RANK", "WORLD_SIZE");
  if (const char* local = non_empty(get, "LOCAL_RANK")) {
    env.local_rank = static_cast<int>(parse_int("LOCAL_RANK", local, 0, 1 << 20));
  } else {
    env.local_rank = env.rank;
  }
  if (const char* addr = non_empty(get, "MASTER_ADDR")) env.master_addr = addr;
  if (const char* port = non_empty(get, "MASTER_PORT")) {
    env.master_port = parse_port("MASTER_PORT", port);
    env.port_origin = "MASTER_PORT";
  }
  return env;
}

RankEnv from_slurm(const Getter& get) {
  RankEnv env;
  env.source = EnvSource::kSlurm;
  const char* ntasks = non_empty(get, "SLURM_NTASKS");
  if (ntasks == nullptr) ntasks = non_empty(get, "SLURM_NPROCS");
  if (ntasks == nullptr) {
    throw ConfigError("environment: SLURM_PROCID is set but SLURM_NTASKS is not (run under srun)",
                      {}, "SLURM_NTASKS");
  }
  env.world_size = static_cast<int>(parse_int("SLURM_NTASKS", ntasks, 1, 1 << 20));
  env.rank = static_cast<int>(parse_int("SLURM_PROCID", get("SLURM_PROCID"), 0, 1 << 20));
  check_ranks(env, "SLURM_PROCID", "SLURM_NTASKS");
  if (const char* local = non_empty(get, "SLURM_LOCALID")) {
    env.local_rank = static_cast<int>(parse_int("SLURM_LOCALID", local, 0, 1 << 20));
  }
  if (const char* addr = non_empty(get, "MASTER_ADDR")) {
    env.master_addr = addr;
  } else {
    const char* var = "SLURM_STEP_NODELIST";
    const char* list = non_empty(get, var);
    if (list == nullptr) list = non_empty(get, var = "SLURM_JOB_NODELIST");
    if (list == nullptr) list = non_empty(get, var = "SLURM_NODELIST");
    if (list != nullptr) {
      auto hosts = expand_nodelist(list);
      if (hosts.empty()) throw env_error(var, list, "at least one host");
      env.master_addr = hosts.front();
    }
  }
  if (const char* port = non_empty(get, "MASTER_PORT")) {
    env.master_port = parse_port("MASTER_PORT", port);
    env.port_origin = "MASTER_PORT";
  } else if (const char* job = non_empty(get, "SLURM_JOB_ID")) {
    env.master_port = slurm_port_for_job(
        parse_int("SLURM_JOB_ID", job, 0, std::numeric_limits<int64_t>::max()));
    env.port_origin = "SLURM_JOB_ID";
  }
  return env;
}

// One bracket range list "01-03,7" appended to prefix, onto out.
void expand_ranges(std::string_view list, std::string_view prefix, std::string_view suffix,
                   std::string_view whole, std::vector<std::string>& out) {
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    std::string_view item = list.substr(at, comma == std::string_view::npos ? comma : comma - at);
    size_t dash = item.find('-');
    std::string_view lo = item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    auto digits = [](std::string_view s) {
      return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos &&
             s.size() <= 9;
    };
    if (!digits(lo) || !digits(hi)) {
      throw ConfigError(fmt::format("Slurm node list {:?}: bad range {:?}", whole, item));
    }
    long a = std::stol(std::string(lo)), b = std::stol(std::string(hi));
    if (b < a || b - a > 100000) {
      throw ConfigError(fmt::format("Slurm node list {:?}: bad range {:?}", whole, item));
    }
    for (long v = a; v <= b; ++v) {
      out.push_back(fmt::format("{}{:0{}}{}", prefix, v, lo.size(), suffix));
    }
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
}

}  // namespace

std::string_view env_source_name(EnvSource source) {
  switch (source) {
    case EnvSource::kNone: return "none";
    case EnvSource::kTorchrun: return "torchrun";
    case EnvSource::kSlurm: return "slurm";
  }
  return "none";
}

int slurm_port_for_job(int64_t job_id) { return 20000 + static_cast<int>(job_id % 10000); }

std::vector<std::string> expand_nodelist(std::string_view nodelist) {
  std::vector<std::string> hosts;
  size_t at = 0;
  while (at < nodelist.size()) {
    // One host expression runs to the next comma outside brackets.
    size_t end = at;
    int depth = 0;
    while (end < nodelist.size() && (depth > 0 || nodelist[end] != ',')) {
      if (nodelist[end] == '[') ++depth;
      if (nodelist[end] == ']') --depth;
      if (depth < 0 || depth > 1) {
        throw ConfigError(fmt::format("Slurm node list {:?}: unbalanced brackets", nodelist));
      }
      ++end;
    }
    if (depth != 0) throw ConfigError(fmt::format("Slurm node list {:?}: unclosed '['", nodelist));
    std::string_view expr = nodelist.substr(at, end - at);
    size_t open = expr.find('[');
    if (expr.empty()) throw ConfigError(fmt::format("Slurm node list {:?}: empty host", nodelist));
    if (open == std::string_view::npos) {
      hosts.emplace_back(expr);
    } else {
      size_t close = expr.find(']', open);
      expand_ranges(expr.substr(open + 1, close - open - 1), expr.substr(0, open),
                    expr.substr(close + 1), nodelist, hosts);
    }
    at = end + 1;
  }
  return hosts;
}

RankEnv rank_env_from(const Getter& get) {
  if (non_empty(get, "RANK") != nullptr || non_empty(get, "WORLD_SIZE") != nullptr) {
    return from_torchrun(get);
  }
  // Only inside an srun step (SLURM_STEP_ID set): a batch script also carries SLURM_PROCID=0 and
  // the job's SLURM_NTASKS, but it is one process, not rank 0 of a group.
  if (non_empty(get, "SLURM_PROCID") != nullptr && non_empty(get, "SLURM_STEP_ID") != nullptr) {
    return from_slurm(get);
  }
  return RankEnv{};
}

RankEnv rank_env_from_environment() {
  return rank_env_from([](const char* name) { return std::getenv(name); });
}

}  // namespace llmprof::dist
