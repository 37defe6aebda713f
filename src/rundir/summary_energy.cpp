// summary.json "energy": telemetry::EnergyFigures written and read (the monitor returns figures).
#include <utility>

#include "summary_sections.h"
#include "llmprof/telemetry/energy_figures.h"

namespace llmprof::rundir::detail {

namespace {

using telemetry::DomainFigures;
using telemetry::EnergyFigures;

Json sampler_unavailable(const telemetry::SamplerCost& c) {
  Json list = Json::array();
  for (const auto& u : c.unavailable) list.push_back({{"source", u.source}, {"reason", u.reason}});
  return list;
}

Json domain_json(const DomainFigures& d) {
  Json j = {{"source", d.source},       {"domain", d.domain},
            {"label", d.label},         {"kind", d.kind},
            {"estimated", d.estimated}, {"in_total", d.in_total},
            {"energy_j", opt(d.energy_j)}};
  if (d.matched) j["mean_power_w"] = opt(d.mean_power_w);
  if (d.kind != "none") j["peak_power_w"] = opt(d.peak_power_w);
  if (d.mean_utilisation) j["mean_utilisation"] = *d.mean_utilisation;
  if (d.peak_temperature_c) j["peak_temperature_c"] = *d.peak_temperature_c;
  if (d.peak_memory_used_bytes) j["peak_memory_used_bytes"] = *d.peak_memory_used_bytes;
  if (d.mean_sm_clock_mhz) j["mean_sm_clock_mhz"] = *d.mean_sm_clock_mhz;
  return j;
}

DomainFigures read_domain(ObjectReader& o) {
  DomainFigures d;
  d.source = o.text("source").value_or("");
  d.domain = o.text("domain").value_or("");
  d.label = o.text("label").value_or("");
  d.kind = o.text("kind").value_or("none");
  d.estimated = o.boolean("estimated").value_or(false);
  d.in_total = o.boolean("in_total").value_or(false);
  d.energy_j = o.number("energy_j");
  d.matched = o.has("mean_power_w");
  d.mean_power_w = o.number("mean_power_w");
  d.peak_power_w = o.number("peak_power_w");
  d.mean_utilisation = o.number("mean_utilisation");
  d.peak_temperature_c = o.number("peak_temperature_c");
  d.peak_memory_used_bytes = o.number("peak_memory_used_bytes");
  d.mean_sm_clock_mhz = o.number("mean_sm_clock_mhz");
  o.keep_unknown();
  return d;
}

// The elements of an array of objects; anything else is a DataError naming the field.
template <typename F>
void each_object(ObjectReader& parent, const std::string& key, F&& f) {
  const Json* list = parent.raw(key);
  if (list == nullptr || list->is_null()) return;
  if (!list->is_array()) parent.fail(key, "an array");
  DocContext ctx{parent.file(), nullptr, nullptr};  // array elements keep no unknown keys
  for (const Json& item : *list) {
    if (!item.is_object()) parent.fail(key, "an array of objects");
    ObjectReader o(item, ctx, parent.pointer() + "/" + key);
    f(o);
  }
}

}  // namespace

Json energy_json(const EnergyFigures& e) {
  Json j;
  j["total_j"] = opt(e.total_j);
  if (!e.total_j) {
    j["reason"] = e.reason;
    if (e.sampler) {
      j["unavailable"] = sampler_unavailable(*e.sampler);
      j["sampler_cpu_ms"] = e.sampler->cpu_ms;
      j["sampler_cpu_fraction"] = opt(e.sampler->cpu_fraction);
    }
    return j;
  }
  j["kwh"] = opt(e.kwh);
  j["tokens_per_j"] = opt(e.tokens_per_j);
  j["flops_per_j"] = opt(e.flops_per_j);
  j["mean_power_w"] = opt(e.mean_power_w);
  j["peak_power_w"] = opt(e.peak_power_w);
  j["co2_g"] = opt(e.co2_g);
  j["grid_gco2_per_kwh"] = e.grid_gco2_per_kwh;
  j["grid_source"] = e.grid_source;
  j["source"] = e.source;
  j["estimated"] = e.estimated;
  const telemetry::SamplerCost cost = e.sampler.value_or(telemetry::SamplerCost{});
  j["sampler_cpu_ms"] = cost.cpu_ms;
  j["sampler_cpu_fraction"] = opt(cost.cpu_fraction);
  j["unavailable"] = sampler_unavailable(cost);
  j["interval_s"] = e.interval_s;
  j["sample_hz"] = e.sample_hz;
  j["samples"] = e.samples;
  j["ring_full"] = e.ring_full;
  Json domains = Json::array();
  for (const DomainFigures& d : e.domains) domains.push_back(domain_json(d));
  j["domains"] = std::move(domains);
  if (e.phases) {
    Json by_phase = Json::object();
    for (const auto& [name, p] : *e.phases) {
      by_phase[name] = {{"energy_j", opt(p.energy_j)},
                        {"seconds", p.seconds},
                        {"mean_power_w", opt(p.mean_power_w)},
                        {"estimated", p.estimated},
                        {"intervals", p.intervals}};
    }
    j["phases"] = std::move(by_phase);
  }
  return j;
}

EnergyFigures read_energy(ObjectReader& o) {
  EnergyFigures e;
  e.total_j = o.number("total_j");
  e.reason = o.text("reason").value_or("");
  if (o.has("sampler_cpu_ms")) {
    telemetry::SamplerCost c;
    c.cpu_ms = o.number("sampler_cpu_ms").value_or(0);
    c.cpu_fraction = o.number("sampler_cpu_fraction");
    each_object(o, "unavailable", [&](ObjectReader& u) {
      c.unavailable.push_back({u.text("source").value_or(""), u.text("reason").value_or("")});
    });
    e.sampler = c;
  }
  e.kwh = o.number("kwh");
  e.tokens_per_j = o.number("tokens_per_j");
  e.flops_per_j = o.number("flops_per_j");
  e.mean_power_w = o.number("mean_power_w");
  e.peak_power_w = o.number("peak_power_w");
  e.co2_g = o.number("co2_g");
  e.grid_gco2_per_kwh = o.number("grid_gco2_per_kwh").value_or(0);
  e.grid_source = o.text("grid_source").value_or("");
  e.source = o.text("source").value_or("");
  e.estimated = o.boolean("estimated").value_or(false);
  e.interval_s = o.number("interval_s").value_or(0);
  e.sample_hz = o.integer("sample_hz").value_or(0);
  e.samples = o.integer("samples").value_or(0);
  e.ring_full = o.boolean("ring_full").value_or(false);
  each_object(o, "domains", [&](ObjectReader& d) { e.domains.push_back(read_domain(d)); });
  if (std::optional<ObjectReader> phases = o.object("phases")) {
    e.phases.emplace();
    for (const auto& [name, value] : phases->raw_object().items()) {
      std::optional<ObjectReader> p = phases->object(name);
      if (!p) continue;
      telemetry::PhaseEnergyFigures f;
      f.energy_j = p->number("energy_j");
      f.seconds = p->number("seconds").value_or(0);
      f.mean_power_w = p->number("mean_power_w");
      f.estimated = p->boolean("estimated").value_or(false);
      f.intervals = p->integer("intervals").value_or(0);
      p->keep_unknown();
      (*e.phases)[name] = f;
    }
  }
  o.keep_unknown();
  return e;
}

}  // namespace llmprof::rundir::detail
