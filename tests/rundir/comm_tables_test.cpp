// The communication tables: what the writers write, the readers read back; bad rows are errors
// naming the file and line.
#include "llmprof/rundir/comm_tables.h"

#include <gtest/gtest.h>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

TEST(CommTables, PhaseSpansAndCollectivesRoundTrip) {
  test::ScratchDir dir("comm_tables");
  {
    PhaseSpanWriter w(dir.file("phases.csv"));
    w.write({1, 3, profile::Phase::kBackward, 1234567890123, 1234567990123});
  }
  const auto spans = read_phase_spans(dir.file("phases.csv"));
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].phase, profile::Phase::kBackward);
  EXPECT_EQ(spans[0].start_ns, 1234567890123);  // ns stay exact
  EXPECT_EQ(spans[0].end_ns, 1234567990123);
  CollectiveRow c;
  c.step = 2;
  c.bucket = 1;
  c.rank = 1;
  c.bytes = 4096;
  c.elements = 1024;
  c.dtype = "f32";
  c.launch_aligned_ns = 77;
  c.duration_ms = 1.5;
  c.wait_ms = 0;
  c.last_rank = 1;
  c.world_size = 2;
  write_collectives(dir.file("collectives.csv"), {c});
  const auto back = read_collectives(dir.file("collectives.csv"));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].bytes, 4096);
  EXPECT_FALSE(back[0].end_aligned_ns.has_value());  // unknown stays null
  EXPECT_FALSE(back[0].latency_ms.has_value());
  EXPECT_DOUBLE_EQ(*back[0].duration_ms, 1.5);
  ClockRow k{1, 200, 10, -250000000, 18000, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  write_clocks(dir.file("clocks.csv"), {k});
  EXPECT_EQ(read_clocks(dir.file("clocks.csv"))[0].start_offset_ns, -250000000);
}

TEST(CommTables, CollectivesKeepHiddenAndExposedAndReadAFileWithoutThemAsNull) {
  test::ScratchDir dir("comm_tables_hidden");
  CollectiveRow c;
  c.step = 2;
  c.world_size = 2;
  c.duration_ms = 3;
  c.hidden_ms = 1.25;
  c.exposed_ms = 1.75;
  write_collectives(dir.file("collectives.csv"), {c});
  const auto back = read_collectives(dir.file("collectives.csv"));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_DOUBLE_EQ(*back[0].hidden_ms, 1.25);
  EXPECT_DOUBLE_EQ(*back[0].exposed_ms, 1.75);
  // A file from before the two columns: the rest reads, they are null (unknown, not 0).
  test::write_file(dir.file("old.csv"),
                   "step,bucket,rank,first_layout,bytes,elements,dtype,launch_aligned_ns,"
                   "end_aligned_ns,duration_ms,wait_ms,latency_ms,algbw_gb_per_s,busbw_gb_per_s,"
                   "last_rank,world_size\n3,0,1,0,4096,1024,f32,10,20,0.5,0,0.5,,,1,2\n");
  const auto old = read_collectives(dir.file("old.csv"));
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].step, 3);
  EXPECT_FALSE(old[0].hidden_ms.has_value());
  EXPECT_FALSE(old[0].exposed_ms.has_value());
}

TEST(CommTables, AnUnknownPhaseNamesTheFileAndLine) {
  test::ScratchDir dir("comm_tables_bad");
  test::write_file(dir.file("phases.csv"),
                   "rank,step,phase,start_ns,end_ns\n0,1,data,1,2\n0,1,warmup,2,3\n");
  try {
    read_phase_spans(dir.file("phases.csv"));
    FAIL() << "no error";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("phases.csv line 3"), std::string::npos) << what;
    EXPECT_NE(what.find("warmup"), std::string::npos) << what;
  }
  // profile::Phase names the phases; eval is one, but not a phase of the step.
  EXPECT_EQ(parse_step_phase("optimizer"), profile::Phase::kOptimizer);
  EXPECT_FALSE(parse_step_phase("eval").has_value());
}

TEST(CommTables, CommRowsAppendedAndWrittenWholeReadBackTheSame) {
  test::ScratchDir dir("comm_tables_comm");
  CommRow a{1,   2,  1, 0, 2, true, 4096, 1024, "f32", 1234567890123, 1234567890200, 1234567990123,
            0.1, 2.5};
  CommRow b = a;
  b.bucket = 1;
  b.end_ns.reset();  // a failed all-reduce: no end, no duration
  b.comm_ms.reset();
  b.backward_ms_at_launch.reset();
  {
    CommWriter w(dir.file("comm.csv"));
    w.write(a);
    w.write(b);
  }
  const std::vector<CommRow> back = read_comm(dir.file("comm.csv"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].launch_ns, 1234567890200);
  EXPECT_TRUE(back[0].first_layout);
  EXPECT_EQ(back[0].dtype, "f32");
  EXPECT_DOUBLE_EQ(*back[0].comm_ms, 0.1);
  EXPECT_FALSE(back[1].end_ns || back[1].comm_ms || back[1].backward_ms_at_launch);
  // The top directory's file, whole, from rows read back: the same bytes as the rank's.
  write_comm(dir.file("top.csv"), back);
  EXPECT_EQ(test::read_file(dir.file("top.csv")), test::read_file(dir.file("comm.csv")));
}

}  // namespace
}  // namespace llmprof::rundir
