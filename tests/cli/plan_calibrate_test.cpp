// `llmprof plan --calibrate RUN` as a user runs it: the plan of a run's own config, calibrated on
// that run, predicts exactly the run's median step (the ratio measured / roofline times the
// roofline); a directory without a measured step and a device without peaks exit 2 naming them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace llmprof {
namespace {

using test::expect_contains;
using test::run_llmprof;
using test::ScratchDir;

nlohmann::json plan_json(const std::vector<std::string>& extra, const std::string& config) {
  // The run's vocabulary came from its tokenizer (model.vocab_size 0): plan builds it as train
  // does (the generated corpus's characters).
  std::vector<std::string> args{"plan", "--config", config, "--device", "cpu", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_llmprof(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? nlohmann::json::parse(r.output) : nlohmann::json::object();
}

TEST(PlanCalibrate, ARunsOwnPlanCalibratedOnItPredictsItsMedianStep) {
  ScratchDir dir("plan-calibrate");
  // A known CPU peak (no bandwidth): the roofline is the compute term 1e3 x FLOPs / 1e11 ms.
  const auto t = run_llmprof(
      {"train", "--config", test::kTinyConfig, "--set", "output.dir=" + dir.path(), "--set",
       "output.name=run", "--set", "schedule.max_steps=6", "--set", "train.eval_interval=0",
       "--set", "profile.peak_flops_per_s=1e11", "--set", "profile.peak_bytes_per_s=0", "--quiet"});
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const std::string run = dir.file("run");
  const auto summary = nlohmann::json::parse(test::read_file(run + "/summary.json"));
  const double measured_ms = summary.at("timing").at("step_ms").at("median").get<double>();
  const std::string config = run + "/config.yaml";

  const nlohmann::json bound = plan_json({}, config);
  ASSERT_TRUE(bound.at("step_ms").is_number()) << bound.dump(1);
  const double roofline_ms = bound.at("step_ms").get<double>();
  EXPECT_NEAR(roofline_ms, 1e3 * bound.at("flops_per_step").get<double>() / 1e11,
              1e-9 * roofline_ms);
  EXPECT_TRUE(bound.at("calibration_ratio").is_null());

  const nlohmann::json cal = plan_json({"--calibrate", run}, config);
  ASSERT_TRUE(cal.at("calibration_ratio").is_number()) << cal.dump(1);
  const double ratio = cal.at("calibration_ratio").get<double>();
  EXPECT_NEAR(ratio, measured_ms / roofline_ms, 1e-9 * ratio);
  EXPECT_NEAR(cal.at("step_ms").get<double>(), measured_ms, 1e-9 * measured_ms);
  expect_contains(cal.at("step_ms_label").get<std::string>(), "calibrated on " + run);
}

TEST(PlanCalibrate, NoMeasuredStepOrNoPeaksExitTwoNamingIt) {
  ScratchDir dir("plan-calibrate");
  auto r = run_llmprof({"plan", "--config", test::kTinyConfig, "--device", "cpu", "--set",
                        "model.vocab_size=65", "--calibrate", dir.path()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "--calibrate " + dir.path() + ": no summary.json with a median step");
  const auto t =
      run_llmprof({"train", "--config", test::kTinyConfig, "--set", "output.dir=" + dir.path(),
                   "--set", "output.name=run", "--set", "schedule.max_steps=3", "--set",
                   "train.eval_interval=0", "--set", "profile.peak_flops_per_s=0", "--quiet"});
  ASSERT_EQ(t.exit_code, 0) << t.output;
  r = run_llmprof({"plan", "--config", test::kTinyConfig, "--device", "cpu", "--set",
                   "model.vocab_size=65", "--set", "profile.peak_flops_per_s=0", "--calibrate",
                   dir.file("run")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "the device has no peaks to bound the step with");
}

}  // namespace
}  // namespace llmprof
