// env.json's one writer and one reader (include/llmprof/rundir/env.h). schema_version is the one
// field every file must have (report fixtures and older tools write partial context blocks);
// later fields absent get a note; fields this version does not know are kept for a rewrite.
#include <fmt/format.h>

#include "doc_tables.h"
#include "json_fields.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/env.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::JsonField;
using detail::JsonFields;
using detail::member;
using detail::ObjectReader;
using detail::Presence;
using telemetry::ChannelAvailability;
using telemetry::EnergyAvailability;
using telemetry::SourceAvailability;

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
const JsonFields<EnvBuild>& build_fields() {
  static const JsonFields<EnvBuild> f = {member("version", &EnvBuild::version),
                                         member("git_sha", &EnvBuild::git_sha),
                                         member("build_type", &EnvBuild::build_type)};
  return f;
}

const JsonFields<EnvHost>& host_fields() {
  static const JsonFields<EnvHost> f = {
      member("hostname", &EnvHost::hostname),
      member("kernel", &EnvHost::kernel),
      member("arch", &EnvHost::arch),
      member("cpu_model", &EnvHost::cpu_model),
      member("cores", &EnvHost::cores),
      member("avx512_bf16", &EnvHost::avx512_bf16),
      detail::member_if_set("amx_bf16", &EnvHost::amx_bf16, Presence::kLater),
      member("memory_bytes", &EnvHost::memory_bytes)};
  return f;
}

const JsonFields<EnvTorch>& torch_fields() {
  static const JsonFields<EnvTorch> f = {member("version", &EnvTorch::version),
                                         member("cuda_available", &EnvTorch::cuda_available),
                                         member("parallel_info", &EnvTorch::parallel_info)};
  return f;
}

const JsonFields<EnvBlas>& blas_fields() {
  static const JsonFields<EnvBlas> f = {member("openblas_config", &EnvBlas::openblas_config),
                                        member("parallel", &EnvBlas::parallel),
                                        member("mapped_libraries", &EnvBlas::mapped_libraries)};
  return f;
}

const JsonFields<EnvRuntime>& runtime_fields() {
  using R = EnvRuntime;
  static const JsonFields<R> f = {
      member("malloc_tuning", &R::malloc_tuning),
      detail::member_if_set("malloc_mmap_threshold_applied", &R::malloc_mmap_threshold_applied,
                            Presence::kLater),
      member("malloc_mmap_threshold_bytes", &R::malloc_mmap_threshold_bytes),
      member("malloc_trim_threshold_bytes", &R::malloc_trim_threshold_bytes),
      member("OMP_WAIT_POLICY", &R::omp_wait_policy),
      member("OMP_NUM_THREADS", &R::omp_num_threads),
      detail::member_if_set("cuda_allocator_settings", &R::cuda_allocator_settings,
                            Presence::kOptional)};  // CUDA runs only
  return f;
}

const JsonFields<EnvPeakFlops>& peak_flops_fields() {
  static const JsonFields<EnvPeakFlops> f = {
      member("flops_per_s", &EnvPeakFlops::flops_per_s), member("source", &EnvPeakFlops::source),
      member("method", &EnvPeakFlops::method),
      member("bf16_flops_per_s", &EnvPeakFlops::bf16_flops_per_s, Presence::kLater)};
  return f;
}

const JsonFields<EnvPeakBandwidth>& peak_bandwidth_fields() {
  static const JsonFields<EnvPeakBandwidth> f = {
      member("bytes_per_s", &EnvPeakBandwidth::bytes_per_s),
      member("copy_bytes_per_s", &EnvPeakBandwidth::copy_bytes_per_s),
      member("source", &EnvPeakBandwidth::source), member("method", &EnvPeakBandwidth::method)};
  return f;
}

const JsonFields<EnvPeakComm>& peak_comm_fields() {
  static const JsonFields<EnvPeakComm> f = {
      member("busbw_bytes_per_s", &EnvPeakComm::busbw_bytes_per_s),
      member("source", &EnvPeakComm::source)};
  return f;
}

const JsonFields<ChannelAvailability>& channel_fields() {
  static const JsonFields<ChannelAvailability> f = {
      member("domain", &ChannelAvailability::domain), member("label", &ChannelAvailability::label),
      member("kind", &ChannelAvailability::kind),
      member("estimated", &ChannelAvailability::estimated),
      member("in_total", &ChannelAvailability::in_total)};
  return f;
}

const JsonFields<SourceAvailability>& source_fields() {
  static const JsonFields<SourceAvailability> f = {
      member("source", &SourceAvailability::source),
      member("available", &SourceAvailability::available),
      detail::text_if_set("reason", &SourceAvailability::reason),
      detail::list("channels", &SourceAvailability::channels, channel_fields())};
  return f;
}

// Written only when a monitor ran.
template <typename M>
JsonField<EnergyAvailability> monitored_member(std::string key, M EnergyAvailability::*m) {
  JsonField<EnergyAvailability> f = member(std::move(key), m);
  f.write = [m](const EnergyAvailability& a) {
    return a.monitored ? detail::value_json(a.*m) : detail::not_written();
  };
  return f;
}

// The energy sources: their presence says a monitor ran; each item an object.
JsonField<EnergyAvailability> sources_field() {
  JsonField<EnergyAvailability> f =
      detail::list("sources", &EnergyAvailability::sources, source_fields());
  f.write = [](const EnergyAvailability& a) {
    return a.monitored ? detail::write_object_list(a.sources, source_fields())
                       : detail::not_written();
  };
  f.read = [](EnergyAvailability& a, ObjectReader& o, DocContext& ctx, const std::string& key) {
    a.monitored = o.has(key);
    const Json* sources = o.raw(key);
    if (sources == nullptr || sources->is_null()) return;
    if (!sources->is_array()) o.fail(key, "an array of objects");
    for (size_t i = 0; i < sources->size(); ++i) {
      const std::string pointer = fmt::format("{}/{}/{}", o.pointer(), key, i);
      const Json& v = (*sources)[i];
      if (!v.is_object())
        throw DataError(fmt::format("{}: {} is not an object", ctx.file, pointer));
      ObjectReader item(v, ctx, pointer);
      read_object(a.sources.emplace_back(), item, ctx, source_fields());
      item.keep_unknown();
    }
  };
  return f;
}

const JsonFields<EnergyAvailability>& energy_fields() {
  static const JsonFields<EnergyAvailability> f = {
      member("enabled", &EnergyAvailability::enabled),
      detail::text_if_set("reason", &EnergyAvailability::reason), sources_field(),
      monitored_member("sample_hz", &EnergyAvailability::sample_hz),
      monitored_member("total_source", &EnergyAvailability::total_source)};
  return f;
}

// The device's name; null when unknown.
JsonField<Env> device_field() {
  return detail::converted<Env>(
      "device", Presence::kOptional,
      [](const Env& e) {
        return e.device ? Json(std::string(config::name(*e.device))) : Json(nullptr);
      },
      [](Env& e, ObjectReader& doc, DocContext& ctx, const std::string& key) {
        if (const Json* d = doc.raw(key); d != nullptr && !d->is_null()) {
          const std::string name = d->is_string() ? d->get<std::string>() : printable_json(*d);
          e.device = parse_name<config::DeviceKind>(name, ctx.file, doc.field(key));
        }
      });
}

// Every field but schema_version (bench.json's context block is this without it).
const JsonFields<Env>& env_body_fields() {
  using detail::section_if_set;
  static const JsonFields<Env> f = {
      member("start_time", &Env::start_time),
      member("command_line", &Env::command_line),
      device_field(),
      member("threads", &Env::threads),
      member("threads_configured", &Env::threads_configured),
      section_if_set("llmprof", &Env::llmprof, build_fields()),
      section_if_set("host", &Env::host, host_fields()),
      section_if_set("torch", &Env::torch, torch_fields()),
      section_if_set("blas", &Env::blas, blas_fields()),
      section_if_set("runtime", &Env::runtime, runtime_fields()),
      section_if_set("peak_flops", &Env::peak_flops, peak_flops_fields()),
      section_if_set("peak_bandwidth", &Env::peak_bandwidth, peak_bandwidth_fields(),
                     Presence::kLater),
      section_if_set("peak_comm", &Env::peak_comm, peak_comm_fields(), Presence::kLater),
      section_if_set("energy", &Env::energy, energy_fields(), Presence::kLater)};
  return f;
}

}  // namespace

namespace detail {

const JsonFields<Env>& env_fields() { return env_body_fields(); }

Json env_body_json(const Env& e) { return write_object(e, env_body_fields()); }

void read_env_body(ObjectReader& doc, DocContext& ctx, Env& e) {
  read_object(e, doc, ctx, env_body_fields());
}

}  // namespace detail

std::string env_text(const Env& e) {
  return detail::write_doc(e, kEnvSchemaVersion, env_body_fields()).dump(2) + "\n";
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
