// Energy as a participant of the step (energy_participant.h), on a scripted 100 W source: each
// step's row gets the energy of its span (the device's end where later than the host's), the
// run's figures come from the rows' phase intervals, and power.csv is written at the end.
#include "energy_participant.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "llmprof/base/clock.h"
#include "llmprof/rundir/files.h"
#include "support/test_support.h"
#include "telemetry/scripted_sources.h"

namespace llmprof::train {
namespace {

constexpr double kWatts = 100.0;
constexpr double kRelTol = 1e-6;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::unique_ptr<EnergyParticipant> constant_power() {
  std::vector<std::unique_ptr<telemetry::EnergySource>> sources;
  sources.push_back(
      std::make_unique<telemetry::test_sources::ConstantPower>("gpu-fake", "gpu0", kWatts));
  config::EnergyConfig cfg;
  cfg.sample_hz = 100;
  return std::make_unique<EnergyParticipant>(
      std::make_unique<telemetry::EnergyMonitor>(cfg, 60, std::move(sources)));
}

// A step over [t0, t2]: forward [t0, t1], backward [t1, t2].
profile::StepRecord step_record(int64_t number, int64_t t0, int64_t t1, int64_t t2) {
  profile::StepRecord r;
  r.step = number;
  r.start_ns = t0;
  r.end_ns = t2;
  r.intervals[0] = {t0, t1, profile::Phase::kForward};
  r.intervals[1] = {t1, t2, profile::Phase::kBackward};
  r.num_intervals = 2;
  return r;
}

double seconds(int64_t from_ns, int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) * 1e-9;
}

TEST(EnergyParticipant, RowsGetTheirStepsEnergyAndTheRunItsPhasesAndPowerCsv) {
  test::ScratchDir dir;
  const std::unique_ptr<EnergyParticipant> energy = constant_power();
  EXPECT_EQ(energy->availability().total_source, "gpu-fake");
  energy->start();
  const int64_t t0 = now_ns();
  sleep_ms(20);
  const int64_t t1 = now_ns();
  sleep_ms(30);
  const int64_t t2 = now_ns();
  sleep_ms(20);
  const int64_t t3 = now_ns();  // step 2's host end; the device finishes it at t4
  sleep_ms(20);
  const int64_t t4 = now_ns();

  rundir::StepRow one, two;
  energy->add_to_row(step_record(1, t0, t1, t2), t2, one);
  energy->add_to_row(step_record(2, t2, t3, t3), t4, two);
  ASSERT_TRUE(one.energy_j && one.avg_power_w && one.energy_estimated);
  EXPECT_NEAR(*one.energy_j, kWatts * seconds(t0, t2), kWatts * seconds(t0, t2) * kRelTol);
  EXPECT_NEAR(*one.avg_power_w, kWatts, kWatts * kRelTol);
  EXPECT_EQ(*one.energy_estimated, 0.0);  // measured, not a TDP estimate
  ASSERT_TRUE(two.energy_j);              // until the device's end, not the host's
  EXPECT_NEAR(*two.energy_j, kWatts * seconds(t2, t4), kWatts * seconds(t2, t4) * kRelTol);

  rundir::RunEnd end;
  end.run_dir = dir.path();
  end.steps = 2;
  end.tokens = 1000;
  end.flops = 3e12;
  end.start_ns = t0;
  end.end_ns = t4;
  const rundir::RunFigures f = energy->finish(end);
  EXPECT_FALSE(f.plan || f.distributed);  // energy's section only
  ASSERT_TRUE(f.energy && f.energy->total_j);
  const double j = kWatts * seconds(t0, t4);
  EXPECT_NEAR(*f.energy->total_j, j, j * kRelTol);
  EXPECT_NEAR(*f.energy->tokens_per_j, 1000 / j, 1000 / j * kRelTol);
  ASSERT_TRUE(f.energy->phases);
  const double forward = seconds(t0, t1) + seconds(t2, t3), backward = seconds(t1, t2);
  EXPECT_EQ(f.energy->phases->at("forward").intervals, 2);
  EXPECT_NEAR(*f.energy->phases->at("forward").energy_j, kWatts * forward, 1e-6);
  EXPECT_NEAR(*f.energy->phases->at("backward").energy_j, kWatts * backward, 1e-6);
  const std::string power = test::read_file(rundir::path(dir.path(), rundir::kPower));
  EXPECT_NE(power.find("gpu-fake"), std::string::npos) << power;
}

}  // namespace
}  // namespace llmprof::train
