// Energy from power and counter traces against hand-computed integrals. Tolerance 1e-9 J: the
// traces are piecewise linear, so trapezoids are exact up to rounding.
#include "llmprof/telemetry/energy_integrate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace llmprof::telemetry {
namespace {

constexpr int64_t kS = 1000000000;  // ns per second
constexpr double kTolJ = 1e-9;

struct Trace {
  std::vector<int64_t> t_ns;
  std::vector<double> values;
  TraceView view() const { return TraceView{t_ns.data(), values.data(), 1, t_ns.size()}; }
};

TEST(IntegratePower, ConstantHundredWattsForTwoSecondsIsTwoHundredJoules) {
  Trace p{{0, kS / 2, kS, 3 * kS / 2, 2 * kS}, {100, 100, 100, 100, 100}};
  Integral in = integrate_power_j(p.view(), 0, 2 * kS);
  EXPECT_NEAR(in.joules, 200.0, kTolJ);
  EXPECT_EQ(in.covered_ns, 2 * kS);
}

TEST(IntegratePower, RampIsTheAreaOfItsTriangleAndTrapezoids) {
  // P(t) = 50 t W, sampled at 0, 1, 2 s.
  Trace p{{0, kS, 2 * kS}, {0, 50, 100}};
  EXPECT_NEAR(integrate_power_j(p.view(), 0, 2 * kS).joules, 100.0, kTolJ);  // 1/2 * 2 s * 100 W
  // [0.5, 1.5] s: P = 25, 50, 75 -> 0.5 * (25 + 50) / 2 + 0.5 * (50 + 75) / 2 = 18.75 + 31.25.
  EXPECT_NEAR(integrate_power_j(p.view(), kS / 2, 3 * kS / 2).joules, 50.0, kTolJ);
}

TEST(IntegratePower, InterpolatesPowerAtTheIntervalEdges) {
  // A peak: 0 W, 100 W, 0 W at 0, 1, 2 s. [0.5, 1.5] s: P = 50, 100, 50 -> 2 * 0.5 * 75 = 75 J.
  Trace p{{0, kS, 2 * kS}, {0, 100, 0}};
  EXPECT_NEAR(integrate_power_j(p.view(), kS / 2, 3 * kS / 2).joules, 75.0, kTolJ);
  // Inside one segment: [0.25, 0.75] s: P = 25, 75 -> 0.5 * 50 = 25 J.
  EXPECT_NEAR(integrate_power_j(p.view(), kS / 4, 3 * kS / 4).joules, 25.0, kTolJ);
}

TEST(IntegratePower, ClipsTheIntervalToTheTrace) {
  Trace p{{0, kS, 2 * kS}, {100, 100, 100}};
  Integral in = integrate_power_j(p.view(), -kS, 3 * kS);
  EXPECT_NEAR(in.joules, 200.0, kTolJ);
  EXPECT_EQ(in.covered_ns, 2 * kS);
  EXPECT_EQ(in.first_valid_ns, 0);
  EXPECT_EQ(in.last_valid_ns, 2 * kS);
  EXPECT_EQ(integrate_power_j(p.view(), 3 * kS, 4 * kS).covered_ns, 0);
}

TEST(IntegratePower, NanSamplesAreGapsSpannedByTheirNeighbours) {
  Trace p{{0, kS, 2 * kS}, {100, std::nan(""), 100}};
  EXPECT_NEAR(integrate_power_j(p.view(), 0, 2 * kS).joules, 200.0, kTolJ);
  Trace none{{0, kS}, {std::nan(""), std::nan("")}};
  EXPECT_TRUE(integrate_power_j(none.view(), 0, kS).empty);
}

TEST(CounterDelta, DifferencesTheInterpolatedCounter) {
  // E = 0, 10, 30 J at 0, 1, 2 s. E(0.5) = 5, E(1.5) = 20 -> 15 J.
  Trace e{{0, kS, 2 * kS}, {0, 10, 30}};
  EXPECT_NEAR(counter_delta_j(e.view(), kS / 2, 3 * kS / 2).joules, 15.0, kTolJ);
  EXPECT_NEAR(counter_delta_j(e.view(), 0, 2 * kS).joules, 30.0, kTolJ);
  EXPECT_NEAR(counter_delta_j(e.view(), kS, kS).joules, 0.0, kTolJ);
}

TEST(CounterDelta, StridedViewReadsOneChannelOfInterleavedFrames) {
  // Two channels interleaved per frame: channel 1 is E = 0, 10, 30.
  std::vector<int64_t> t{0, kS, 2 * kS};
  std::vector<double> frames{7, 0, 7, 10, 7, 30};
  TraceView v{t.data(), frames.data() + 1, 2, 3};
  EXPECT_NEAR(counter_delta_j(v, kS / 2, 3 * kS / 2).joules, 15.0, kTolJ);
}

TEST(LastPower, IsTheLastValueOrTheLastCounterSlope) {
  Trace p{{0, kS, 2 * kS}, {90, 95, std::nan("")}};
  double w = 0;
  ASSERT_TRUE(last_power_w(p.view(), false, &w));
  EXPECT_DOUBLE_EQ(w, 95.0);
  Trace e{{0, kS, 2 * kS}, {0, 10, 30}};
  ASSERT_TRUE(last_power_w(e.view(), true, &w));
  EXPECT_DOUBLE_EQ(w, 20.0);  // (30 - 10) J / 1 s
  Trace one{{0}, {5}};
  EXPECT_FALSE(last_power_w(one.view(), true, &w));
}

}  // namespace
}  // namespace llmprof::telemetry
