// ProcCpuSource on a fake /proc: stat parsing, utilisation as a share of all cores, and the
// cpu_tdp_w estimate, which is always flagged estimated.
#include "llmprof/telemetry/proc_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "support/test_support.h"

namespace llmprof::telemetry {
namespace {

constexpr int64_t kS = 1000000000;

// /proc/<pid>/stat with utime and stime (fields 14, 15) and a comm holding blanks and parens.
std::string self_stat(uint64_t utime, uint64_t stime) {
  return "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1000 0 0 0 " + std::to_string(utime) +
         " " + std::to_string(stime) + " 0 0 20 0 3 0 100 1000000 500\n";
}

// /proc/stat whose "cpu" line sums to total ticks (all in idle but 100 user).
std::string machine_stat(uint64_t total) {
  return "cpu  100 0 0 " + std::to_string(total - 100) +
         " 0 0 0 0 0 0\ncpu0 50 0 0 1 0 0 0 0 0 0\nintr 1\n";
}

void write_proc(const std::string& root, uint64_t utime, uint64_t stime, uint64_t total) {
  test::write_file(root + "/self/stat", self_stat(utime, stime));
  test::write_file(root + "/stat", machine_stat(total));
}

TEST(ProcStat, ParsesUtimePlusStimeAfterAnAwkwardComm) {
  uint64_t ticks = 0;
  ASSERT_TRUE(parse_process_stat(self_stat(250, 50).c_str(), &ticks));
  EXPECT_EQ(ticks, 300u);
  EXPECT_FALSE(parse_process_stat("4242 (truncated", &ticks));
}

TEST(ProcStat, SumsTheAggregateCpuLine) {
  uint64_t ticks = 0;
  // user nice system idle iowait irq softirq steal (guest, guest_nice not added again).
  ASSERT_TRUE(parse_machine_stat("cpu  100 1 50 800 10 5 4 30 99 99\n", &ticks));
  EXPECT_EQ(ticks, 1000u);
  EXPECT_FALSE(parse_machine_stat("intr 5\n", &ticks));
}

TEST(ProcCpuSource, EstimateIsTdpTimesShareOfAllCores) {
  test::ScratchDir proc("proc");
  write_proc(proc.path(), 100, 0, 1000);
  ProcCpuSource cpu(proc.path(), 100.0);  // 100 W TDP
  Availability a = cpu.available();
  ASSERT_TRUE(a.available) << a.reason;
  ASSERT_EQ(cpu.channels().size(), 1u);
  const ChannelInfo& ch = cpu.channels()[0];
  EXPECT_EQ(ch.source, "estimate");
  EXPECT_TRUE(ch.estimated);
  EXPECT_TRUE(ch.in_total);
  EXPECT_EQ(ch.kind, ChannelKind::kCounter);

  cpu.start(0);
  Reading r[1];
  cpu.sample(0, r);  // the baseline: 0 J
  EXPECT_DOUBLE_EQ(r[0].energy_j, 0.0);
  EXPECT_TRUE(std::isnan(r[0].utilisation));
  // +100 process ticks of +400 machine ticks (e.g. 1 of 4 cores busy) over 2 s.
  write_proc(proc.path(), 150, 50, 1400);
  cpu.sample(2 * kS, r);
  EXPECT_DOUBLE_EQ(r[0].utilisation, 0.25);
  EXPECT_DOUBLE_EQ(r[0].power_w, 25.0);   // 100 W x 0.25
  EXPECT_DOUBLE_EQ(r[0].energy_j, 50.0);  // 25 W x 2 s
  // Idle for 1 s: 0 W, the sum stays.
  write_proc(proc.path(), 150, 50, 1600);
  cpu.sample(3 * kS, r);
  EXPECT_DOUBLE_EQ(r[0].power_w, 0.0);
  EXPECT_DOUBLE_EQ(r[0].energy_j, 50.0);
  // No machine tick since: a gap, not a claim of 0 W.
  cpu.sample(4 * kS, r);
  EXPECT_TRUE(std::isnan(r[0].energy_j));
}

TEST(ProcCpuSource, WithoutTdpReportsUtilisationOnly) {
  test::ScratchDir proc("proc");
  write_proc(proc.path(), 0, 0, 1000);
  ProcCpuSource cpu(proc.path(), 0.0);
  ASSERT_TRUE(cpu.available().available);
  const ChannelInfo& ch = cpu.channels()[0];
  EXPECT_EQ(ch.source, "proc");
  EXPECT_EQ(ch.kind, ChannelKind::kNone);
  EXPECT_FALSE(ch.in_total);
  cpu.start(0);
  Reading r[1];
  cpu.sample(0, r);
  write_proc(proc.path(), 100, 100, 2000);
  cpu.sample(kS, r);
  EXPECT_DOUBLE_EQ(r[0].utilisation, 0.2);
  EXPECT_TRUE(std::isnan(r[0].energy_j));
  EXPECT_TRUE(std::isnan(r[0].power_w));
}

TEST(ProcCpuSource, MissingProcIsUnavailableNamingTheFile) {
  test::ScratchDir proc("proc");
  ProcCpuSource cpu(proc.path(), 65.0);
  Availability a = cpu.available();
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason, proc.path() + "/self/stat: No such file or directory");
}

TEST(ProcCpuSource, RealProcIsReadable) {
  ProcCpuSource cpu;
  Availability a = cpu.available();
  EXPECT_TRUE(a.available) << a.reason;
}

}  // namespace
}  // namespace llmprof::telemetry
