// The default random generators of a process on its device, as a checkpoint saves and restores
// them (train.resume_from's rng-rank<k>.pt): the CPU's, and on a CUDA device that device's (torch).
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <string_view>
#include <vector>

namespace llmprof::device {

struct NamedGenerator {
  std::string_view key;    // its name in a saved state: "cpu", "cuda"
  std::string_view label;  // for messages: "CPU", "CUDA"
  at::Generator generator;
};

// The CPU's default generator first, then device's own when it is a CUDA device. Throws Error in
// a build without CUDA asked for a CUDA device's.
std::vector<NamedGenerator> default_generators(const c10::Device& device);

}  // namespace llmprof::device
