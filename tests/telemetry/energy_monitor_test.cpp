// EnergyMonitor end to end: hand-computed energy from scripted sources, null energy with a reason
// when there is no sensor and no TDP, and the TDP estimate labelled estimated everywhere.
#include "llmprof/telemetry/energy_monitor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "llmprof/base/clock.h"
#include "support/test_support.h"
#include "telemetry/scripted_sources.h"

namespace llmprof::telemetry {
namespace {

using nlohmann::json;

constexpr double kRelTol = 1e-9;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Keeps this thread busy for ms milliseconds (process CPU utilisation > 0).
void spin_ms(int ms) {
  const int64_t end = now_ns() + static_cast<int64_t>(ms) * 1000000;
  volatile double x = 0;
  while (now_ns() < end) x = x + 1;
}

// Scripted sources: 100 W constant power ("gpu-fake") + a 50 W linear counter ("cpu-fake").
std::vector<std::unique_ptr<EnergySource>> scripted() {
  std::vector<std::unique_ptr<EnergySource>> s;
  s.push_back(std::make_unique<test_sources::ConstantPower>("gpu-fake", "gpu0", 100.0));
  s.push_back(std::make_unique<test_sources::LinearCounter>("cpu-fake", "package-0", 50.0));
  s.push_back(std::make_unique<test_sources::Unavailable>("nvml", "dlopen(x) failed"));
  return s;
}

config::EnergyConfig config_at(int64_t hz) {
  config::EnergyConfig cfg;
  cfg.sample_hz = hz;
  return cfg;
}

TEST(EnergyMonitor, ScriptedSourcesGiveHandComputedStepPhaseAndRunEnergy) {
  EnergyMonitor energy(config_at(100), 60, scripted());
  ASSERT_TRUE(energy.has_energy());
  EXPECT_EQ(energy.source_label(), "gpu-fake + cpu-fake");
  energy.start();
  const int64_t t0 = now_ns();
  sleep_ms(50);
  const int64_t t1 = now_ns();
  sleep_ms(50);
  const int64_t t2 = now_ns();
  sleep_ms(30);
  const int64_t t3 = now_ns();
  energy.stop();

  // 100 W + 50 W over [t0, t1]: 150 W x (t1 - t0).
  const double s01 = (t1 - t0) * 1e-9, s12 = (t2 - t1) * 1e-9, s23 = (t3 - t2) * 1e-9;
  IntervalEnergy e = energy.step_energy(t0, t1);
  ASSERT_TRUE(e.joules.has_value());
  EXPECT_NEAR(*e.joules, 150.0 * s01, 150.0 * s01 * kRelTol);
  EXPECT_NEAR(*e.avg_power_w, 150.0, 150.0 * kRelTol);
  EXPECT_FALSE(e.estimated);
  EXPECT_EQ(e.held_ns, 0);

  std::vector<DomainEnergy> d = energy.domain_energy(t0, t1);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].domain, "gpu0");
  EXPECT_NEAR(*d[0].joules, 100.0 * s01, 1e-6);
  EXPECT_EQ(d[1].domain, "package-0");
  EXPECT_NEAR(*d[1].joules, 50.0 * s01, 1e-6);

  // Per phase: forward = [t0, t1] + [t2, t3], backward = [t1, t2].
  std::vector<PhaseEnergy> p =
      energy.phase_energy({{"forward", t0, t1}, {"backward", t1, t2}, {"forward", t2, t3}});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].phase, "forward");
  EXPECT_EQ(p[0].intervals, 2);
  EXPECT_NEAR(*p[0].joules, 150.0 * (s01 + s23), 1e-6);
  EXPECT_NEAR(p[0].seconds, s01 + s23, 1e-12);
  EXPECT_EQ(p[1].phase, "backward");
  EXPECT_NEAR(*p[1].joules, 150.0 * s12, 1e-6);

  // The run block: 1000 tokens, 3e12 FLOP over [t0, t3].
  const double j = 150.0 * (t3 - t0) * 1e-9;
  const EnergyFigures s = energy.figures(1000, 3e12, t0, t3, {{"forward", t0, t1}, {"backward", t1, t2}});
  EXPECT_NEAR(*s.total_j, j, 1e-6);
  EXPECT_NEAR(*s.kwh, j / 3.6e6, 1e-12);
  EXPECT_NEAR(*s.tokens_per_j, 1000 / j, 1e-6);
  EXPECT_NEAR(*s.flops_per_j, 3e12 / j, 3e12 / j * 1e-6);
  EXPECT_NEAR(*s.mean_power_w, 150.0, 1e-6);
  EXPECT_NEAR(*s.peak_power_w, 150.0, 1e-6);
  EXPECT_NEAR(*s.co2_g, j / 3.6e6 * 475.0, 1e-9);
  EXPECT_EQ(s.grid_gco2_per_kwh, 475.0);
  EXPECT_NE(s.grid_source.find("IEA"), std::string::npos);
  EXPECT_EQ(s.source, "gpu-fake + cpu-fake");
  EXPECT_FALSE(s.estimated);
  ASSERT_TRUE(s.sampler.has_value());
  EXPECT_GT(s.sampler->cpu_ms, 0.0);
  EXPECT_GT(*s.sampler->cpu_fraction, 0.0);
  EXPECT_LT(*s.sampler->cpu_fraction, 1.0);
  ASSERT_EQ(s.sampler->unavailable.size(), 1u);
  EXPECT_EQ(s.sampler->unavailable[0].source, "nvml");
  EXPECT_NEAR(*s.phases->at("forward").energy_j, 150.0 * s01, 1e-6);
  EXPECT_EQ(s.domains.size(), 2u);
}

TEST(EnergyMonitor, HoldsTheLastPowerBrieflyPastTheNewestSampleButNoLonger) {
  EnergyMonitor energy(config_at(10), 60, scripted());
  energy.start();
  sleep_ms(250);  // >= 2 frames: a counter's last power is the slope of its last two samples
  const int64_t t = now_ns();  // [t, t + 5 ms] lies after the newest frame
  IntervalEnergy e = energy.step_energy(t, t + 5000000);
  ASSERT_TRUE(e.joules.has_value());
  EXPECT_GT(e.held_ns, 0);
  EXPECT_NEAR(*e.joules, 150.0 * 0.005, 1e-6);  // constant sources: the hold is exact
  EXPECT_FALSE(energy.step_energy(t, t + 10 * 1000000000LL).joules.has_value());  // too far
  EXPECT_FALSE(energy.step_energy(t - 1000000000, t).joules.has_value());         // before start()
  energy.stop();
}

TEST(EnergyMonitor, BridgesSparseCounterReadsWithPowerReadings) {
  // A 150 W counter read every 10th frame (every 100 ms at 100 Hz), power on every frame.
  std::vector<std::unique_ptr<EnergySource>> s;
  s.push_back(std::make_unique<test_sources::LinearCounter>("gpu-fake", "gpu0", 150.0, false, 10));
  EnergyMonitor energy(config_at(100), 60, std::move(s));
  energy.start();
  sleep_ms(330);
  const int64_t t_end = now_ns();
  energy.stop();  // the final frame has power but (likely) no counter read
  for (int64_t back_ms : {5, 20, 40, 80, 150}) {
    const int64_t t0 = t_end - back_ms * 1000000;
    IntervalEnergy e = energy.step_energy(t0, t_end);
    ASSERT_TRUE(e.joules.has_value()) << back_ms << " ms";
    EXPECT_NEAR(*e.joules, 150.0 * back_ms * 1e-3, 1e-6) << back_ms << " ms";
    EXPECT_EQ(e.held_ns, 0) << "the power readings cover it: nothing held";
  }
  // Peak power comes from the power readings, not from the coarse counter's slopes.
  const EnergyFigures sum = energy.figures(0, 0, t_end - 300000000, t_end);
  EXPECT_NEAR(*sum.peak_power_w, 150.0, 1e-9);
}

TEST(EnergyMonitor, NoSensorAndNoTdpReportsNullEnergyWithReason) {
  test::ScratchDir dir("energy");
  config::EnergyConfig cfg = config_at(50);
  cfg.sysfs_root = dir.path();                       // no powercap tree
  cfg.nvml_library = dir.file("libnvidia-ml.so.1");  // no such library
  cfg.cpu_tdp_w = 0;
  EnergyMonitor energy(cfg, 60);
  EXPECT_FALSE(energy.has_energy());
  EXPECT_NE(energy.no_energy_reason().find("no energy sensor available (rapl: no "),
            std::string::npos)
      << energy.no_energy_reason();
  EXPECT_NE(energy.no_energy_reason().find("energy.cpu_tdp_w = 0"), std::string::npos);
  energy.start();
  const int64_t t0 = now_ns();
  sleep_ms(60);
  const int64_t t1 = now_ns();
  energy.stop();
  IntervalEnergy e = energy.step_energy(t0, t1);
  EXPECT_FALSE(e.joules.has_value());  // null, never 0
  EXPECT_FALSE(e.avg_power_w.has_value());

  const EnergyFigures s = energy.figures(1000, 1e9, t0, t1);
  EXPECT_FALSE(s.total_j.has_value());
  EXPECT_EQ(s.reason, energy.no_energy_reason());
  EXPECT_FALSE(s.kwh.has_value());
  ASSERT_TRUE(s.sampler.has_value());
  ASSERT_EQ(s.sampler->unavailable.size(), 2u);
  EXPECT_EQ(s.sampler->unavailable[0].source, "rapl");
  EXPECT_EQ(s.sampler->unavailable[1].source, "nvml");

  std::vector<std::string> lines = energy.availability_lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("energy: rapl unavailable: no " + dir.path(), 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("energy: nvml unavailable: dlopen(", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("energy: proc available: cpu", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3], "energy: total null: " + energy.no_energy_reason());
  EXPECT_FALSE(energy.availability().total_source.has_value());
  EXPECT_EQ(energy.availability().reason, energy.no_energy_reason());

  // power.csv still carries the process utilisation, with no watts and estimated 0.
  const std::vector<PowerRow> rows = energy.power_rows();
  ASSERT_GE(rows.size(), 1u);
  for (const PowerRow& r : rows) {
    EXPECT_EQ(r.source, "proc");
    EXPECT_TRUE(std::isnan(r.watts));
    EXPECT_TRUE(std::isnan(r.joules_cum));
    EXPECT_FALSE(std::isnan(r.utilisation));
    EXPECT_FALSE(r.estimated);
  }
}

TEST(EnergyMonitor, TdpEstimateIsLabelledEstimatedEverywhere) {
  test::ScratchDir dir("energy");
  config::EnergyConfig cfg = config_at(20);
  cfg.sysfs_root = dir.path();
  cfg.nvml_library = dir.file("libnvidia-ml.so.1");
  cfg.cpu_tdp_w = 65;
  EnergyMonitor energy(cfg, 60);
  ASSERT_TRUE(energy.has_energy());
  EXPECT_EQ(energy.source_label(), "estimate: cpu_tdp_w x utilisation");
  energy.start();
  const int64_t t0 = now_ns();
  spin_ms(300);
  const int64_t t1 = now_ns();
  energy.stop();

  IntervalEnergy e = energy.step_energy(t0, t1);
  ASSERT_TRUE(e.joules.has_value());
  EXPECT_TRUE(e.estimated);
  EXPECT_GE(*e.joules, 0.0);
  EXPECT_LE(*e.avg_power_w, 65.0 + 1e-9);  // never above the TDP

  const EnergyFigures s = energy.figures(100, 1e9, t0, t1);
  EXPECT_TRUE(s.total_j.has_value());
  EXPECT_TRUE(s.estimated);
  EXPECT_EQ(s.source, "estimate: cpu_tdp_w x utilisation");
  EXPECT_TRUE(s.domains[0].estimated);

  std::vector<std::string> lines = energy.availability_lines();
  EXPECT_NE(lines.back().find("(estimated, not measured)"), std::string::npos) << lines.back();

  const std::vector<PowerRow> rows = energy.power_rows();
  ASSERT_GE(rows.size(), 2u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].source, "estimate");
    EXPECT_TRUE(rows[i].estimated) << "row " << i;
  }
}

TEST(EnergyMonitor, DisabledReportsNullWithReason) {
  config::EnergyConfig cfg;
  cfg.enabled = false;
  EnergyMonitor energy(cfg, 60);
  energy.start();
  energy.stop();
  EXPECT_FALSE(energy.step_energy(0, 1).joules.has_value());
  const EnergyFigures s = energy.figures(1, 1, 0, 1);
  EXPECT_FALSE(s.total_j.has_value());
  EXPECT_EQ(s.reason, "energy.enabled = false");
  EXPECT_EQ(energy.availability_lines(),
            std::vector<std::string>{"energy: disabled (energy.enabled = false)"});
}

// Not a hand-computed check: prints what this machine offers (the lines env.json and the log
// get) and, where a sensor exists, that it reads a positive power.
TEST(EnergyMonitor, ReportsWhatThisMachineOffers) {
  config::EnergyConfig cfg = config_at(20);
  EnergyMonitor energy(cfg, 60);
  for (const std::string& line : energy.availability_lines()) std::cout << line << "\n";
  energy.start();
  const int64_t t0 = now_ns();
  spin_ms(500);
  const int64_t t1 = now_ns();
  energy.stop();
  IntervalEnergy e = energy.step_energy(t0, t1);
  EXPECT_EQ(e.joules.has_value(), energy.has_energy());
  const EnergyFigures s = energy.figures(0, 0, t0, t1);
  std::cout << "energy: " << (s.total_j ? std::to_string(*s.total_j) + " J" : s.reason) << "\n";
  if (e.joules && !e.estimated) {
    EXPECT_GT(*e.avg_power_w, 0.0);
  }
}

}  // namespace
}  // namespace llmprof::telemetry
