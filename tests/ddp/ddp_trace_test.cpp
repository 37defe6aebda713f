// A data-parallel run's per-rank trace, end to end: `llmprof train --nproc 2` at
// profile.level=modules, then rank 1's trace.json read as HTA reads it: "rank": 1 in
// distributedInfo before traceEvents, every host event on pid 1, and each of the recorded steps'
// gradient all-reduces a record_param_comms slice with Kineto's args, inside its step's
// ProfilerStep slice (one clock for both).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "support/test_support.h"

namespace llmprof::test {
namespace {

TEST(DdpTrace, RankTraceNamesTheRankAndHoldsItsCollectives) {
  ScratchDir dir("llmprof_ddp_trace");
  const CommandResult r = run_llmprof(
      {"train", "--config", kTinyConfig, "--nproc", "2", "--quiet", "--set", "schedule.max_steps=4",
       "--set", "profile.level=modules", "--set",
       "profile.schedule_wait=1", "--set", "profile.schedule_warmup=0", "--set",
       "profile.schedule_active=2", "--set", "profile.schedule_repeat=1", "--set",
       "ddp.timeout_s=60", "--set", "output.dir=" + dir.path(), "--set", "output.name=run"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string text = read_file(dir.file("run/rank1/trace.json"));
  ASSERT_FALSE(text.empty()) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"("rank": (\d+))")));
  EXPECT_EQ(m[1], "1");
  EXPECT_LT(text.find("\"distributedInfo\""), text.find("\"traceEvents\""));
  const auto trace = nlohmann::json::parse(text);
  EXPECT_EQ(trace["distributedInfo"]["world_size"], 2);
  EXPECT_EQ(trace["distributedInfo"]["backend"], "gloo");
  std::map<int64_t, std::pair<double, double>> steps;  // ProfilerStep#n -> [ts, ts + dur]
  std::vector<nlohmann::json> comms;
  for (const auto& e : trace["traceEvents"]) {
    if (e.contains("pid")) EXPECT_EQ(e["pid"], 1) << e.dump();
    if (e.value("ph", "") != "X") continue;
    const std::string name = e["name"];
    if (name.rfind("ProfilerStep#", 0) == 0) {
      const double ts = e["ts"];
      steps[std::stoll(name.substr(13))] = {ts, ts + e["dur"].get<double>()};
    } else if (name == "record_param_comms") {
      comms.push_back(e);
    }
  }
  ASSERT_EQ(steps.size(), 2u) << "recorded steps";
  ASSERT_FALSE(comms.empty());
  for (const auto& c : comms) {
    const auto& a = c["args"];
    EXPECT_EQ(a["Collective name"], "allreduce");
    EXPECT_EQ(a["Group size"], 2);
    EXPECT_EQ(a["dtype"], "Float");
    EXPECT_EQ(a["In msg nelems"], a["Out msg nelems"]);
    EXPECT_EQ(a["bytes"].get<int64_t>(), 4 * a["In msg nelems"].get<int64_t>());
    EXPECT_TRUE(a.contains("Process Group Name") && a.contains("Seq"));
    const auto it = steps.find(a["step"].get<int64_t>());
    ASSERT_NE(it, steps.end()) << c.dump();
    EXPECT_GE(c["ts"].get<double>(), it->second.first) << c.dump();  // launched within its step
    EXPECT_LE(c["ts"].get<double>(), it->second.second) << c.dump();
  }
}

}  // namespace
}  // namespace llmprof::test
