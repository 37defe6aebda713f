// A finished step's steps.csv row (step_row.cpp): units converted, rates derived from the step's
// time (the device's on CUDA, the host's otherwise), and what was neither measured nor told left
// null rather than 0.
#include "step_row.h"

#include <gtest/gtest.h>

#include <cmath>

namespace llmprof::train {
namespace {

// A CPU step of 250 ms (host ticks), its four phases timed.
StepRow cpu_step() {
  StepRow r;
  r.timing.step = 7;
  r.timing.start_ns = 1'000'000'000;
  r.timing.end_ns = 1'250'000'000;
  r.timing.phase_ns = {10'000'000, 60'000'000, 150'000'000, 30'000'000};
  r.phases_timed = true;
  r.loss = 2.5;
  r.lr = 1e-3;
  r.grad_norm = 0.75;
  r.tokens = 1000;
  r.flops = 5e9;
  r.peak_flops_per_s = 1e11;
  r.rusage.cpu_user_ns = 200'000'000;
  r.rusage.cpu_system_ns = 20'000'000;
  r.rusage.max_rss_bytes = 1 << 20;
  return r;
}

TEST(StepRow, ACpuStepsRatesComeFromItsHostTime) {
  const rundir::StepRow f = file_row(cpu_step());
  EXPECT_EQ(f.step, 7);
  EXPECT_DOUBLE_EQ(*f.step_ms, 250.0);
  EXPECT_DOUBLE_EQ(*f.tokens_per_s, 4000.0);  // 1000 tokens in 0.25 s
  EXPECT_DOUBLE_EQ(*f.flops_per_s, 2e10);
  EXPECT_DOUBLE_EQ(*f.mfu, 0.2);  // 2e10 of a 1e11 roof
  EXPECT_DOUBLE_EQ(*f.data_ms, 10.0);
  EXPECT_DOUBLE_EQ(*f.forward_ms, 60.0);
  EXPECT_DOUBLE_EQ(*f.backward_ms, 150.0);
  EXPECT_DOUBLE_EQ(*f.optimizer_ms, 30.0);
  EXPECT_DOUBLE_EQ(*f.grad_norm, 0.75);
  EXPECT_DOUBLE_EQ(*f.cpu_ms, 220.0);
  // Off CUDA: no device columns.
  EXPECT_FALSE(f.host_step_ms.has_value());
  EXPECT_FALSE(f.gpu_step_ms.has_value());
  EXPECT_FALSE(f.device_peak_allocated_bytes.has_value());
  EXPECT_FALSE(f.loss_scale.has_value());
}

TEST(StepRow, WhatWasNotMeasuredOrToldIsNullNotZero) {
  StepRow r = cpu_step();
  r.tokens = 0;            // the loop did not say
  r.flops = 0;             // no analytic FLOPs given
  r.grad_norm = NAN;       // clipping off
  r.phases_timed = false;  // profile.level=off
  const rundir::StepRow f = file_row(r);
  EXPECT_DOUBLE_EQ(*f.step_ms, 250.0);
  EXPECT_FALSE(f.tokens.has_value());
  EXPECT_FALSE(f.tokens_per_s.has_value());
  EXPECT_FALSE(f.flops_per_s.has_value());
  EXPECT_FALSE(f.mfu.has_value());
  EXPECT_FALSE(f.grad_norm.has_value());
  EXPECT_FALSE(f.forward_ms.has_value());
  // A roof unknown: the FLOPs rate without an MFU.
  r = cpu_step();
  r.peak_flops_per_s = 0;
  EXPECT_TRUE(file_row(r).flops_per_s.has_value());
  EXPECT_FALSE(file_row(r).mfu.has_value());
  // A loop with no data phase: that phase alone is null.
  r.timing.phase_ns[0] = 0;
  EXPECT_FALSE(file_row(r).data_ms.has_value());
  EXPECT_TRUE(file_row(r).backward_ms.has_value());
}

TEST(StepRow, OnCudaTheDevicesSpanIsTheStepAndTheHostsIsKeptBeside) {
  StepRow r = cpu_step();  // the host enqueued the step in 250 ms
  gpu::GpuPhaseTimes g;
  g.step_ms = 400.0;  // the device ran it in 400
  g.phase_ms[2] = 300.0;
  r.gpu = g;
  r.device_memory = device::DeviceMemory{};
  r.device_memory->peak_allocated_bytes = 4096;
  r.loss_scale = 1024.0;
  r.step_skipped = true;
  const rundir::StepRow f = file_row(r);
  EXPECT_DOUBLE_EQ(*f.step_ms, 400.0);
  EXPECT_DOUBLE_EQ(*f.gpu_step_ms, 400.0);
  EXPECT_DOUBLE_EQ(*f.host_step_ms, 250.0);
  EXPECT_DOUBLE_EQ(*f.tokens_per_s, 2500.0);  // over the device's time
  EXPECT_DOUBLE_EQ(*f.gpu_backward_ms, 300.0);
  EXPECT_FALSE(f.gpu_forward_ms.has_value());
  EXPECT_DOUBLE_EQ(*f.device_peak_allocated_bytes, 4096.0);
  EXPECT_DOUBLE_EQ(*f.loss_scale, 1024.0);
  EXPECT_DOUBLE_EQ(*f.step_skipped, 1.0);
}

TEST(StepRow, WithoutTheStepSpanTheDevicesTimeRunsToItsLastPhasesEnd) {
  StepRow r = cpu_step();
  gpu::GpuPhaseTimes g;
  g.intervals.push_back({});
  g.intervals.back().start_ms = 0;
  g.intervals.back().duration_ms = 50;
  g.intervals.push_back({});
  g.intervals.back().start_ms = 60;
  g.intervals.back().duration_ms = 90;
  r.gpu = g;
  EXPECT_DOUBLE_EQ(*gpu_step_ms(r), 150.0);
  EXPECT_DOUBLE_EQ(step_ms(r), 150.0);
  r.gpu = gpu::GpuPhaseTimes{};  // nothing timed on the device: the host's time
  EXPECT_FALSE(gpu_step_ms(r).has_value());
  EXPECT_DOUBLE_EQ(step_ms(r), 250.0);
}

}  // namespace
}  // namespace llmprof::train
