// printable(): the one way user text enters an error message (base/printable.h), and its JSON
// form (base/printable_json.h).
#include "llmprof/base/printable.h"

#include <gtest/gtest.h>

#include <string>

#include "llmprof/base/printable_json.h"

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

TEST(PrintableJson, ScalarsAndShallowValuesAreTheirJsonTextCut) {
  EXPECT_EQ(printable_json(nlohmann::json("F\n32")), "\"F\\n32\"");  // dump escapes, then kept
  EXPECT_EQ(printable_json(nlohmann::json::parse("[1, [2, {\"a\": null}]]")),
            "[1,[2,{\"a\":null}]]");
  EXPECT_EQ(printable_json(nlohmann::json(std::string(100, 'x')), 5), "\"xxxx... (102 bytes)");
  EXPECT_EQ(printable_json(nlohmann::json("\xc3\xa9")), "\"\\xc3\\xa9\"");
}

// 100,000 nested arrays: dump() would recurse 100,000 times (a stack overflow in the fuzz build).
TEST(PrintableJson, DeeplyNestedValueIsDescribedNotDumped) {
  const size_t depth = 100000;
  const auto deep = nlohmann::json::parse(std::string(depth, '[') + std::string(depth, ']'));
  EXPECT_EQ(printable_json(deep), "an array of 1 items nested over 32 levels deep");
  const auto obj =
      nlohmann::json::parse("{\"a\": " + std::string(40, '[') + std::string(40, ']') + "}");
  EXPECT_EQ(printable_json(obj), "an object of 1 keys nested over 32 levels deep");
  // 32 levels exactly still print.
  const auto edge = nlohmann::json::parse(std::string(32, '[') + std::string(32, ']'));
  EXPECT_EQ(printable_json(edge, 0), std::string(32, '[') + std::string(32, ']'));
}

}  // namespace
}  // namespace llmprof
