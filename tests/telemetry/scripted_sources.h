// EnergySources with exactly known output for sampler and monitor tests: whatever instants the
// sampler thread happens to pick, energy over [t0, t1] is watts x (t1 - t0).
#pragma once

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/telemetry/energy_source.h"

namespace llmprof::telemetry::test_sources {

// One power channel reporting a constant watts.
class ConstantPower final : public EnergySource {
 public:
  ConstantPower(std::string source, std::string domain, double watts) : watts_(watts) {
    channels_.push_back(
        {std::move(source), std::move(domain), "constant power", ChannelKind::kPower, false, true});
  }
  std::string_view name() const override { return channels_[0].source; }
  Availability available() override { return {true, ""}; }
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void start(int64_t) override {}
  void stop() override {}
  void sample(int64_t, Reading* out) override {
    out[0] = kEmptyReading;
    out[0].power_w = watts_;
  }

 private:
  double watts_;
  std::vector<ChannelInfo> channels_;
};

// One counter channel: energy_j = watts x (now - start), i.e. exactly linear in time. With
// energy_every = n > 1 the counter is read on every n-th sample only and power_w = watts is
// reported on all (NVML's pattern: a costly, coarse counter beside cheap power readings).
class LinearCounter final : public EnergySource {
 public:
  LinearCounter(std::string source,
                std::string domain,
                double watts,
                bool estimated = false,
                int energy_every = 1)
      : watts_(watts), energy_every_(energy_every) {
    channels_.push_back({std::move(source), std::move(domain), "linear counter",
                         ChannelKind::kCounter, estimated, true});
  }
  std::string_view name() const override { return channels_[0].source; }
  Availability available() override { return {true, ""}; }
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void start(int64_t now_ns) override {
    start_ns_ = now_ns;
    samples_ = 0;
  }
  void stop() override {}
  void sample(int64_t now_ns, Reading* out) override {
    out[0] = kEmptyReading;
    if (samples_++ % energy_every_ == 0) {
      out[0].energy_j = watts_ * static_cast<double>(now_ns - start_ns_) * 1e-9;
    }
    if (energy_every_ > 1) out[0].power_w = watts_;
  }

 private:
  double watts_;
  int energy_every_;
  int64_t start_ns_ = 0;
  int64_t samples_ = 0;
  std::vector<ChannelInfo> channels_;
};

// A source that says no.
class Unavailable final : public EnergySource {
 public:
  Unavailable(std::string name, std::string reason)
      : name_(std::move(name)), reason_(std::move(reason)) {}
  std::string_view name() const override { return name_; }
  Availability available() override { return {false, reason_}; }
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void start(int64_t) override {}
  void stop() override {}
  void sample(int64_t, Reading*) override {}

 private:
  std::string name_;
  std::string reason_;
  std::vector<ChannelInfo> channels_;
};

// Routes spdlog's default logger into a string for the scope's lifetime.
class CaptureLog {
 public:
  CaptureLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~CaptureLog() {
    spdlog::set_default_logger(previous_);
    spdlog::drop("capture");  // the registry must not outlive text_
  }
  std::string text() const { return text_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream text_;
};

}  // namespace llmprof::telemetry::test_sources
