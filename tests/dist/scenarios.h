// The scenarios a rank runs (scenarios_test.cpp's DistWorker), by name.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace llmprof::test {

const std::map<std::string, std::function<void()>>& dist_scenarios();

}  // namespace llmprof::test
