// summary.json "energy": telemetry::EnergyFigures as a field table (the monitor returns figures).
// Two forms: with total_j, every figure; without, the reason and the sampler's cost where it ran.
#include <map>
#include <string>
#include <utility>

#include "json_forms.h"
#include "llmprof/telemetry/energy_figures.h"
#include "summary_sections.h"

namespace llmprof::rundir::detail {

namespace {

using telemetry::DomainFigures;
using telemetry::EnergyFigures;
using telemetry::PhaseEnergyFigures;
using telemetry::SamplerCost;
using telemetry::UnavailableSource;

const JsonFields<UnavailableSource>& unavailable_fields() {
  static const JsonFields<UnavailableSource> f = {member("source", &UnavailableSource::source),
                                                  member("reason", &UnavailableSource::reason)};
  return f;
}

// The sampler's cost, written into energy itself.
const JsonFields<SamplerCost>& sampler_fields() {
  static const JsonFields<SamplerCost> f = {
      member("sampler_cpu_ms", &SamplerCost::cpu_ms),
      member("sampler_cpu_fraction", &SamplerCost::cpu_fraction),
      list("unavailable", &SamplerCost::unavailable, unavailable_fields())};
  return f;
}

// A channel's kind; a file without one reads as "none".
JsonField<DomainFigures> domain_kind_field() {
  JsonField<DomainFigures> f = member("kind", &DomainFigures::kind);
  f.read = [](DomainFigures& d, ObjectReader& o, DocContext&, const std::string& key) {
    d.kind = o.text(key).value_or("none");
  };
  return f;
}

// Written when the channel had energy over the run, which its presence says.
JsonField<DomainFigures> domain_mean_power_field() {
  JsonField<DomainFigures> f = only_when(member("mean_power_w", &DomainFigures::mean_power_w),
                                         [](const DomainFigures& d) { return d.matched; });
  f.read = [](DomainFigures& d, ObjectReader& o, DocContext&, const std::string& key) {
    d.matched = o.has(key);
    d.mean_power_w = o.number(key);
  };
  return f;
}

const JsonFields<DomainFigures>& domain_fields() {
  using D = DomainFigures;
  static const JsonFields<D> f = {
      member("source", &D::source),
      member("domain", &D::domain),
      member("label", &D::label),
      domain_kind_field(),
      member("estimated", &D::estimated),
      member("in_total", &D::in_total),
      member("energy_j", &D::energy_j),
      domain_mean_power_field(),
      only_when(member("peak_power_w", &D::peak_power_w),
                [](const D& d) { return d.kind != "none"; }),
      member_if_set("mean_utilisation", &D::mean_utilisation),
      member_if_set("peak_temperature_c", &D::peak_temperature_c),
      member_if_set("peak_memory_used_bytes", &D::peak_memory_used_bytes),
      member_if_set("mean_sm_clock_mhz", &D::mean_sm_clock_mhz)};
  return f;
}

const JsonFields<PhaseEnergyFigures>& phase_energy_fields() {
  using P = PhaseEnergyFigures;
  static const JsonFields<P> f = {member("energy_j", &P::energy_j), member("seconds", &P::seconds),
                                  member("mean_power_w", &P::mean_power_w),
                                  member("estimated", &P::estimated),
                                  member("intervals", &P::intervals)};
  return f;
}

// The energy by phase name: an object of the phases' objects (their names are open).
JsonField<EnergyFigures> phases_field() {
  return converted<EnergyFigures>(
      "phases", Presence::kOptional,
      [](const EnergyFigures& e) {
        if (!e.phases) return not_written();
        Json by_phase = Json::object();
        for (const auto& [name, p] : *e.phases) {
          by_phase[name] = write_object(p, phase_energy_fields());
        }
        return by_phase;
      },
      [](EnergyFigures& e, ObjectReader& o, DocContext& ctx, const std::string& key) {
        std::optional<ObjectReader> phases = o.object(key);
        if (!phases) return;
        e.phases.emplace();
        for (const auto& [name, value] : phases->raw_object().items()) {
          std::optional<ObjectReader> p = phases->object(name);
          if (!p) continue;
          PhaseEnergyFigures f;
          read_object(f, *p, ctx, phase_energy_fields());
          p->keep_unknown();
          (*e.phases)[name] = f;
        }
      });
}

// The sampler's cost: where it ran, and in the totals' form always (zero when it did not).
const SamplerCost* written_sampler(const EnergyFigures& e) {
  static const SamplerCost none{};
  if (e.sampler) return &*e.sampler;
  return e.total_j ? &none : nullptr;
}

}  // namespace

const JsonFields<EnergyFigures>& summary_energy_fields() {
  using E = EnergyFigures;
  const auto total = [](const E& e) { return e.total_j.has_value(); };
  const auto no_total = [](const E& e) { return !e.total_j; };
  static const JsonFields<E> f = joined<E>(
      {{member("total_j", &E::total_j), only_when(member("reason", &E::reason), no_total)},
       inlined(&E::sampler, sampler_fields(), written_sampler),
       {only_when(member("kwh", &E::kwh), total),
        only_when(member("tokens_per_j", &E::tokens_per_j), total),
        only_when(member("flops_per_j", &E::flops_per_j), total),
        only_when(member("mean_power_w", &E::mean_power_w), total),
        only_when(member("peak_power_w", &E::peak_power_w), total),
        only_when(member("co2_g", &E::co2_g), total),
        only_when(member("grid_gco2_per_kwh", &E::grid_gco2_per_kwh), total),
        only_when(member("grid_source", &E::grid_source), total),
        only_when(member("source", &E::source), total),
        only_when(member("estimated", &E::estimated), total),
        only_when(member("interval_s", &E::interval_s), total),
        only_when(member("sample_hz", &E::sample_hz), total),
        only_when(member("samples", &E::samples), total),
        only_when(member("ring_full", &E::ring_full), total),
        only_when(list("domains", &E::domains, domain_fields()), total),
        only_when(phases_field(), total)}});
  return f;
}

}  // namespace llmprof::rundir::detail
