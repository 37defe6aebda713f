// The progress text: done/total, running point ids and the ETA, as the status line shows them.
#include "progress.h"

#include <gtest/gtest.h>

namespace llmprof::sweep::detail {
namespace {

TEST(FormatEta, RoundsToSecondsAndGrowsUnits) {
  EXPECT_EQ(format_eta(std::nullopt), "?");
  EXPECT_EQ(format_eta(12.4), "12s");
  EXPECT_EQ(format_eta(59.6), "1m00s");
  EXPECT_EQ(format_eta(185), "3m05s");
  EXPECT_EQ(format_eta(3725), "1h02m");
  EXPECT_EQ(format_eta(-3), "0s");
}

TEST(ProgressText, NamesRunningPointsAndOmitsEtaWhenDone) {
  EXPECT_EQ(progress_text({3, 0, 0, 0}, 9, {"p004-a=1-r1", "p005-a=2-r1"}, 42.0),
            "3/9 done; running p004-a=1-r1, p005-a=2-r1; ETA 42s");
  EXPECT_EQ(progress_text({}, 4, {}, std::nullopt), "0/4 done; ETA ?");
  EXPECT_EQ(progress_text({3, 1, 0, 0}, 4, {}, 0.0), "4/4 done");
}

TEST(ProgressText, CountsOnlyFinishedPointsAsDoneAndShowsTheOthersApart) {
  // 2 completed + 1 diverged are done (final outcomes); failed and interrupted ones are not.
  EXPECT_EQ(progress_text({2, 1, 1, 1}, 9, {"p006-a=3-r1"}, 12.0),
            "3/9 done, 1 failed, 1 interrupted; running p006-a=3-r1; ETA 12s");
  // Every point has an outcome: nothing left to wait for, so no ETA.
  EXPECT_EQ(progress_text({2, 0, 1, 1}, 4, {}, std::nullopt), "2/4 done, 1 failed, 1 interrupted");
}

}  // namespace
}  // namespace llmprof::sweep::detail
