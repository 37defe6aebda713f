// env.json's one writer and one reader (include/llmprof/rundir/env.h). schema_version is the one
// field every file must have (report fixtures and older tools write partial context blocks);
// later fields absent get a note; fields this version does not know are kept for a rewrite.
#include <fmt/format.h>

#include "json_doc.h"
#include "llmprof/base/printable_json.h"
#include "read_util.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/env.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::ObjectReader;
using detail::string_list;
using detail::opt;
using detail::read_section;

Json energy_json(const telemetry::EnergyAvailability& a) {
  Json j = {{"enabled", a.enabled}};
  if (!a.reason.empty()) j["reason"] = a.reason;
  if (!a.monitored) return j;
  Json sources = Json::array();
  for (const telemetry::SourceAvailability& s : a.sources) {
    Json src = {{"source", s.source}, {"available", s.available}};
    if (!s.reason.empty()) src["reason"] = s.reason;
    Json chans = Json::array();
    for (const telemetry::ChannelAvailability& c : s.channels) {
      chans.push_back({{"domain", c.domain}, {"label", c.label}, {"kind", c.kind},
                       {"estimated", c.estimated}, {"in_total", c.in_total}});
    }
    src["channels"] = std::move(chans);
    sources.push_back(std::move(src));
  }
  j["sources"] = std::move(sources);
  j["sample_hz"] = a.sample_hz;
  j["total_source"] = opt(a.total_source);
  return j;
}

Json host_json(const EnvHost& h) {
  Json j = {{"hostname", opt(h.hostname)},       {"kernel", opt(h.kernel)},
            {"arch", opt(h.arch)},               {"cpu_model", opt(h.cpu_model)},
            {"cores", opt(h.cores)},             {"avx512_bf16", opt(h.avx512_bf16)},
            {"memory_bytes", opt(h.memory_bytes)}};
  if (h.amx_bf16) j["amx_bf16"] = *h.amx_bf16;
  return j;
}

Json runtime_json(const EnvRuntime& r) {
  Json j = {{"malloc_tuning", opt(r.malloc_tuning)},
            {"malloc_mmap_threshold_bytes", opt(r.malloc_mmap_threshold_bytes)},
            {"malloc_trim_threshold_bytes", opt(r.malloc_trim_threshold_bytes)},
            {"OMP_WAIT_POLICY", opt(r.omp_wait_policy)},
            {"OMP_NUM_THREADS", opt(r.omp_num_threads)}};
  if (r.malloc_mmap_threshold_applied) {
    j["malloc_mmap_threshold_applied"] = *r.malloc_mmap_threshold_applied;
  }
  if (r.cuda_allocator_settings) j["cuda_allocator_settings"] = *r.cuda_allocator_settings;
  return j;
}

// Every field but schema_version (bench.json's context block is this without it).
Json env_body(const Env& e) {
  Json j;
  j["start_time"] = opt(e.start_time);
  j["command_line"] = e.command_line;
  if (e.llmprof) {
    j["llmprof"] = {{"version", e.llmprof->version}, {"git_sha", e.llmprof->git_sha},
                    {"build_type", e.llmprof->build_type}};
  }
  if (e.host) j["host"] = host_json(*e.host);
  if (e.torch) {
    j["torch"] = {{"version", opt(e.torch->version)},
                  {"cuda_available", opt(e.torch->cuda_available)},
                  {"parallel_info", opt(e.torch->parallel_info)}};
  }
  j["device"] = e.device ? Json(std::string(config::name(*e.device))) : Json(nullptr);
  j["threads"] = opt(e.threads);
  j["threads_configured"] = opt(e.threads_configured);
  if (e.blas) {
    j["blas"] = {{"openblas_config", opt(e.blas->openblas_config)},
                 {"parallel", e.blas->parallel},
                 {"mapped_libraries", e.blas->mapped_libraries}};
  }
  if (e.runtime) j["runtime"] = runtime_json(*e.runtime);
  if (const auto& p = e.peak_flops) {
    j["peak_flops"] = {{"flops_per_s", opt(p->flops_per_s)}, {"source", p->source},
                       {"method", p->method}, {"bf16_flops_per_s", opt(p->bf16_flops_per_s)}};
  }
  if (const auto& b = e.peak_bandwidth) {
    j["peak_bandwidth"] = {{"bytes_per_s", opt(b->bytes_per_s)},
                           {"copy_bytes_per_s", opt(b->copy_bytes_per_s)},
                           {"source", b->source}, {"method", b->method}};
  }
  if (const auto& c = e.peak_comm) {
    j["peak_comm"] = {{"busbw_bytes_per_s", opt(c->busbw_bytes_per_s)}, {"source", c->source}};
  }
  if (e.energy) j["energy"] = energy_json(*e.energy);
  return j;
}

EnvHost read_host(ObjectReader& o) {
  EnvHost h;
  h.hostname = o.text("hostname");
  h.kernel = o.text("kernel");
  h.arch = o.text("arch");
  h.cpu_model = o.text("cpu_model");
  h.cores = o.integer("cores");
  h.avx512_bf16 = o.boolean("avx512_bf16");
  o.later("amx_bf16");
  h.amx_bf16 = o.boolean("amx_bf16");
  h.memory_bytes = o.integer("memory_bytes");
  return h;
}

EnvRuntime read_runtime(ObjectReader& o) {
  EnvRuntime r;
  r.malloc_tuning = o.boolean("malloc_tuning");
  o.later("malloc_mmap_threshold_applied");
  r.malloc_mmap_threshold_applied = o.boolean("malloc_mmap_threshold_applied");
  r.malloc_mmap_threshold_bytes = o.integer("malloc_mmap_threshold_bytes");
  r.malloc_trim_threshold_bytes = o.integer("malloc_trim_threshold_bytes");
  r.omp_wait_policy = o.text("OMP_WAIT_POLICY");
  r.omp_num_threads = o.text("OMP_NUM_THREADS");
  r.cuda_allocator_settings = o.text("cuda_allocator_settings");  // CUDA runs only
  return r;
}

telemetry::SourceAvailability read_source(const Json& v, detail::DocContext& ctx,
                                          const std::string& pointer) {
  if (!v.is_object()) throw DataError(fmt::format("{}: {} is not an object", ctx.file, pointer));
  ObjectReader o(v, ctx, pointer);
  telemetry::SourceAvailability s;
  s.source = o.text("source").value_or("");
  s.available = o.boolean("available").value_or(false);
  s.reason = o.text("reason").value_or("");
  const Json* chans = o.raw("channels");
  if (chans != nullptr && !chans->is_null()) {
    if (!chans->is_array()) o.fail("channels", "an array of objects");
    for (size_t i = 0; i < chans->size(); ++i) {
      if (!(*chans)[i].is_object()) o.fail("channels", "an array of objects");
      ObjectReader c((*chans)[i], ctx, fmt::format("{}/channels/{}", pointer, i));
      s.channels.push_back({c.text("domain").value_or(""), c.text("label").value_or(""),
                            c.text("kind").value_or(""), c.boolean("estimated").value_or(false),
                            c.boolean("in_total").value_or(false)});
      c.keep_unknown();
    }
  }
  o.keep_unknown();
  return s;
}

telemetry::EnergyAvailability read_energy_availability(ObjectReader& o, detail::DocContext& ctx) {
  telemetry::EnergyAvailability a;
  a.enabled = o.boolean("enabled").value_or(false);
  a.reason = o.text("reason").value_or("");
  a.monitored = o.has("sources");
  if (const Json* sources = o.raw("sources"); sources != nullptr && !sources->is_null()) {
    if (!sources->is_array()) o.fail("sources", "an array of objects");
    for (size_t i = 0; i < sources->size(); ++i) {
      a.sources.push_back(read_source((*sources)[i], ctx, fmt::format("{}/sources/{}", o.pointer(), i)));
    }
  }
  a.sample_hz = o.integer("sample_hz").value_or(0);
  a.total_source = o.text("total_source");
  return a;
}

void read_sections(ObjectReader& doc, detail::DocContext& ctx, Env& e) {
  e.llmprof = read_section<EnvBuild>(doc, "llmprof", [](ObjectReader& o) {
    return EnvBuild{o.text("version").value_or(""), o.text("git_sha").value_or(""),
                    o.text("build_type").value_or("")};
  });
  e.host = read_section<EnvHost>(doc, "host", read_host);
  e.torch = read_section<EnvTorch>(doc, "torch", [](ObjectReader& o) {
    return EnvTorch{o.text("version"), o.boolean("cuda_available"), o.text("parallel_info")};
  });
  e.blas = read_section<EnvBlas>(doc, "blas", [](ObjectReader& o) {
    return EnvBlas{o.text("openblas_config"), o.text("parallel").value_or(""),
                   string_list(o, "mapped_libraries")};
  });
  e.runtime = read_section<EnvRuntime>(doc, "runtime", read_runtime);
  e.peak_flops = read_section<EnvPeakFlops>(doc, "peak_flops", [](ObjectReader& o) {
    o.later("bf16_flops_per_s");
    return EnvPeakFlops{o.number("flops_per_s"), o.text("source").value_or(""),
                        o.text("method").value_or(""), o.number("bf16_flops_per_s")};
  });
  doc.later("peak_bandwidth");
  e.peak_bandwidth = read_section<EnvPeakBandwidth>(doc, "peak_bandwidth", [](ObjectReader& o) {
    return EnvPeakBandwidth{o.number("bytes_per_s"), o.number("copy_bytes_per_s"),
                            o.text("source").value_or(""), o.text("method").value_or("")};
  });
  doc.later("peak_comm");
  e.peak_comm = read_section<EnvPeakComm>(doc, "peak_comm", [](ObjectReader& o) {
    return EnvPeakComm{o.number("busbw_bytes_per_s"), o.text("source").value_or("")};
  });
  doc.later("energy");
  e.energy = read_section<telemetry::EnergyAvailability>(
      doc, "energy", [&ctx](ObjectReader& o) { return read_energy_availability(o, ctx); });
}

}  // namespace

namespace detail {

Json env_body_json(const Env& e) { return env_body(e); }

void read_env_body(ObjectReader& doc, DocContext& ctx, Env& e) {
  e.start_time = doc.text("start_time");
  e.command_line = string_list(doc, "command_line");
  if (const Json* d = doc.raw("device"); d != nullptr && !d->is_null()) {
    const std::string name = d->is_string() ? d->get<std::string>() : printable_json(*d);
    e.device = parse_name<config::DeviceKind>(name, ctx.file, doc.field("device"));
  }
  e.threads = doc.integer("threads");
  e.threads_configured = doc.integer("threads_configured");
  read_sections(doc, ctx, e);
}

}  // namespace detail

std::string env_text(const Env& e) {
  Json j = env_body(e);
  j["schema_version"] = kEnvSchemaVersion;
  detail::put_unknown(j, e.unknown);
  return j.dump(2) + "\n";
}

void write_env(const std::string& path, const Env& e) {
  output::write_file_atomic(path, env_text(e));
}

Env parse_env(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  Env e;
  detail::DocContext ctx{file, &e.unknown, &e.read_notes};
  ObjectReader doc(j, ctx, "");
  e.schema_version = detail::check_version(doc, kEnvSchemaVersion);
  detail::read_env_body(doc, ctx, e);
  doc.keep_unknown();
  return e;
}

Env read_env(const std::string& path) { return parse_env(detail::read_text(path), path); }

namespace {

// Every field set, for the generated field list.
Env every_field() {
  Env e;
  e.start_time = "text";
  e.command_line = {"text"};
  e.llmprof = EnvBuild{"text", "text", "text"};
  e.host = EnvHost{"text", "text", "text", "text", 1, true, true, 1};
  e.torch = EnvTorch{"text", true, "text"};
  e.device = config::DeviceKind::kCpu;
  e.threads = e.threads_configured = 1;
  e.blas = EnvBlas{"text", "text", {"text"}};
  e.runtime = EnvRuntime{true, true, 1, 1, "text", "text", "text"};
  e.peak_flops = EnvPeakFlops{1.5, "text", "text", 1.5};
  e.peak_bandwidth = EnvPeakBandwidth{1.5, 1.5, "text", "text"};
  e.peak_comm = EnvPeakComm{1.5, "text"};
  telemetry::EnergyAvailability& a = e.energy.emplace();
  a.enabled = a.monitored = true;
  a.reason = "text";
  a.sources = {{"text", false, "text", {{"text", "text", "text", false, false}}}};
  a.sample_hz = 1;
  a.total_source = "text";
  return e;
}

}  // namespace

std::string env_fields_doc() {
  const Json full = Json::parse(env_text(every_field()));
  const Json none = Json::parse(env_text(Env{}));
  const std::string heading = fmt::format(
      "# env.json fields (schema_version {})\n\n"
      "Generated from `rundir::Env` (include/llmprof/rundir/env.h) through its writer; "
      "`tests/rundir/env_test.cpp` checks that this file matches. Keys are written in this "
      "(sorted) order. \"with its figure\": written only when the run has that section or "
      "field; \"null when unknown\": never 0 for an unknown figure. `energy` is shown as a run "
      "with energy.enabled=true writes it; with energy off it holds `enabled` and `reason` only. "
      "bench.json's `context` holds the same fields but `schema_version`, `peak_flops` and "
      "`energy`.\n\n",
      kEnvSchemaVersion);
  return detail::field_table_page(heading, full, none);
}

}  // namespace llmprof::rundir
