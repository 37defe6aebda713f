// printable(): the one way user text enters an error message (base, tested here with the config
// loader, its main client).
#include "llmprof/base/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace llmprof {
namespace {

TEST(Printable, PlainTextIsUnchanged) {
  EXPECT_EQ(printable("model.n_layer: 4 (a path\\with backslash)"),
            "model.n_layer: 4 (a path\\with backslash)");
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, ControlAndHighBytesAreEscaped) {
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(printable(std::string("\x7f" "ELF\x02", 5) + std::string(1, '\0')),
            "\\x7fELF\\x02\\x00");
  EXPECT_EQ(printable("\x1b[31m"), "\\x1b[31m");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\\xc3\\xa9");
}

TEST(Printable, LongTextIsCutWithItsLength) {
  const std::string text(12345, 'x');
  EXPECT_EQ(printable(text), std::string(80, 'x') + "... (12345 bytes)");
  EXPECT_EQ(printable(text, 3), "xxx... (12345 bytes)");
  EXPECT_EQ(printable(std::string(80, 'y')), std::string(80, 'y'));  // exactly max: not cut
}

TEST(Printable, CutCountsInputBytesBeforeEscaping) {
  EXPECT_EQ(printable("\n\n\n\n", 2), "\\n\\n... (4 bytes)");
}

TEST(Printable, ZeroMaxKeepsEverything) {
  const std::string text(5000, 'z');
  EXPECT_EQ(printable(text, 0), text);
  EXPECT_EQ(printable("a\x01", 0), "a\\x01");
}

}  // namespace
}  // namespace llmprof
