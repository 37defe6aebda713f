// trace.json of a data-parallel rank, as HTA reads per-rank traces: "distributedInfo" (backend,
// rank with the space after the colon that HTA's regex needs, world_size, pg_config) before
// "traceEvents", every host event on pid = rank, absolute times on rank 0's clock (local time +
// offset), and each collective a record_param_comms slice with Kineto's argument names. Also
// comm_peak.csv written and read back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "llmprof/profile/tracer.h"
#include "llmprof/rundir/comm_peak.h"
#include "llmprof/rundir/tables.h"
#include "support/test_support.h"

namespace llmprof::test {
namespace {

rundir::TraceOptions rank_options(int rank, int64_t offset_ns) {
  rundir::TraceOptions o;
  o.distributed = rundir::TraceDistributed{rank, 2, config::DdpBackend::kGloo, offset_ns};
  rundir::CollectiveSlice c;
  c.start_ns = 1'500'000;  // 1.5 ms on this rank's clock
  c.issued_ns = 1'510'000;
  c.end_ns = 2'250'000;
  c.in_nelems = c.out_nelems = 1000;
  c.group_size = 2;
  c.seq = 7;
  c.step = 3;
  c.bucket = 1;
  c.bytes = 4000;
  o.collectives.push_back(c);
  return o;
}

std::vector<profile::StepRecord> one_step() {
  profile::StepRecord s;
  s.step = 3;
  s.start_ns = 1'000'000;
  s.end_ns = 3'000'000;
  return {s};
}

TEST(DistributedTrace, RankTraceMeetsHtaContract) {
  ScratchDir dir("llmprof_trace_dist");
  profile::TraceData data;
  data.num_threads = 1;
  const int64_t offset_ns = 250'000;  // rank 0's clock is 0.25 ms ahead of rank 1's
  rundir::write_trace(dir.file("trace.json"), data, one_step(), rank_options(1, offset_ns));
  const std::string text = read_file(dir.file("trace.json"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"("rank": (\d+))")));  // HTA's pattern
  EXPECT_EQ(m[1], "1");
  const size_t events_at = text.find("\"traceEvents\"");
  EXPECT_LT(text.find("\"distributedInfo\""), events_at);
  const auto trace = nlohmann::json::parse(text);
  const auto& info = trace["distributedInfo"];
  EXPECT_EQ(info["backend"], "gloo");
  EXPECT_EQ(info["rank"], 1);
  EXPECT_EQ(info["world_size"], 2);
  ASSERT_EQ(info["pg_config"].size(), 1u);
  EXPECT_EQ(info["pg_config"][0]["pg_size"], 2);
  EXPECT_EQ(info["pg_config"][0]["ranks"], nlohmann::json::parse("[0, 1]"));
  int collectives = 0, steps = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.contains("pid")) EXPECT_EQ(e["pid"], 1) << e.dump();  // one process per rank
    if (e.value("ph", "") != "X") continue;
    if (e["name"] == "ProfilerStep#3") {
      ++steps;
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1250.0);  // (1 ms + 0.25 ms) in us, absolute
    }
    if (e["name"] != "record_param_comms") continue;
    ++collectives;
    EXPECT_EQ(e["cat"], "cpu_op");
    EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1750.0);  // 1.5 ms + 0.25 ms
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 750.0);
    const auto& a = e["args"];
    EXPECT_EQ(a["Collective name"], "allreduce");
    EXPECT_EQ(a["In msg nelems"], 1000);
    EXPECT_EQ(a["Out msg nelems"], 1000);
    EXPECT_EQ(a["dtype"], "Float");
    EXPECT_EQ(a["Group size"], 2);
    EXPECT_EQ(a["Process Group Name"], "0");
    EXPECT_EQ(a["Seq"], 7);
    EXPECT_EQ(a["bytes"], 4000);
  }
  EXPECT_EQ(steps, 1);
  EXPECT_EQ(collectives, 1);
}

// At profile.level=ops the op tracer also records c10d's own record_param_comms op on the issuing
// thread: inside a collective's issue (1.5 to 1.51 ms) it is that collective, written once, on the
// c10d track with Kineto's args and the op's External id; one outside every issue stays an op.
TEST(DistributedTrace, TheTracedCollectiveOpIsWrittenOnceWithKinetosArgs) {
  ScratchDir dir("llmprof_trace_dist_op");
  profile::TraceData data;
  data.num_threads = 1;
  data.names = {"aten::mm", "record_param_comms"};
  auto op = [](uint32_t name, int64_t start, int64_t end) {
    profile::OpEvent e;
    e.name_id = name;
    e.start_ns = start;
    e.end_ns = end;
    e.step = 3;
    return e;
  };
  data.ops = {op(0, 1'100'000, 1'200'000), op(1, 1'502'000, 1'508'000),
              op(1, 2'600'000, 2'700'000)};
  rundir::write_trace(dir.file("trace.json"), data, one_step(), rank_options(0, 0));
  const auto trace = nlohmann::json::parse(read_file(dir.file("trace.json")));
  int with_args = 0, without = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") != "record_param_comms") continue;
    if (e["args"].contains("Collective name")) {
      ++with_args;
      EXPECT_EQ(e["args"]["External id"], 2);  // the second op's (index + 1)
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1500.0);
    } else {
      ++without;
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2600.0);  // outside every issue
      EXPECT_EQ(e["args"]["External id"], 3);
    }
  }
  EXPECT_EQ(with_args, 1);
  EXPECT_EQ(without, 1);
}

TEST(DistributedTrace, SingleProcessTraceKeepsRankZeroAndRelativeTimes) {
  ScratchDir dir("llmprof_trace_one");
  profile::TraceData data;
  data.num_threads = 1;
  rundir::TraceOptions o;
  o.cpu_pid = 4242;
  rundir::write_trace(dir.file("trace.json"), data, one_step(), o);
  const auto trace = nlohmann::json::parse(read_file(dir.file("trace.json")));
  EXPECT_EQ(trace["distributedInfo"]["rank"], 0);
  EXPECT_FALSE(trace["distributedInfo"].contains("backend"));
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") == "ProfilerStep#3") {
      EXPECT_EQ(e["pid"], 4242);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.0);  // relative to the first step
    }
  }
}

TEST(CommPeakTable, WrittenAndReadBack) {
  ScratchDir dir("llmprof_comm_peak");
  rundir::CommPeakRow r;
  r.bytes = 4096;
  r.elements = 1024;
  r.world_size = 2;
  r.backend = "gloo";
  r.warmup_iters = 5;
  r.iters = 20;
  r.time_us = 12.5;
  r.min_rank_time_us = 12.0;
  r.max_rank_time_us = 13.0;
  r.algbw_gb_per_s = 0.32768;
  r.busbw_gb_per_s = 0.32768;
  rundir::write_comm_peak(dir.file("comm_peak.csv"), {r, r});
  const auto back = rundir::read_comm_peak(dir.file("comm_peak.csv"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].bytes, 4096);
  EXPECT_EQ(back[1].backend, "gloo");
  EXPECT_EQ(back[1].dtype, "float32");
  EXPECT_DOUBLE_EQ(back[1].time_us, 12.5);
  EXPECT_DOUBLE_EQ(back[1].busbw_gb_per_s, 0.32768);
}

}  // namespace
}  // namespace llmprof::test
