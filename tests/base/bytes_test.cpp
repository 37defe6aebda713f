// bytes_text and bytes_text_exact: binary units, the count beside them where it matters.
#include "llmprof/base/bytes.h"

#include <gtest/gtest.h>

namespace llmprof {
namespace {

TEST(BytesText, UsesTheLargestBinaryUnitReached) {
  EXPECT_EQ(bytes_text(0), "0 B");
  EXPECT_EQ(bytes_text(1023), "1023 B");
  EXPECT_EQ(bytes_text(1536), "1.5 KiB");         // 1536 / 1024
  EXPECT_EQ(bytes_text(182321152), "173.9 MiB");  // / 1048576 = 173.875
  EXPECT_EQ(bytes_text(1073741824.0 * 1.5), "1.50 GiB");
}

TEST(BytesText, ExactFormGivesTheWholeCountInParentheses) {
  EXPECT_EQ(bytes_text_exact(182321152), "173.9 MiB (182321152 bytes)");
  EXPECT_EQ(bytes_text_exact(200553267.2), "191.3 MiB (200553267 bytes)");
  EXPECT_EQ(bytes_text_exact(512), "512 bytes");  // below 1 KiB the count says it all
}

}  // namespace
}  // namespace llmprof
