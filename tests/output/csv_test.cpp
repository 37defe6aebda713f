#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/output/run_dir.h"
#include "support/test_support.h"

namespace llmprof::output {
namespace {

TEST(ParseCsvRecords, QuotesCrlfBlankLinesAndLineNumbers) {
  CsvRecords r = parse_csv_records("a,b\r\n\"x,1\",\"say \"\"hi\"\"\"\n\n\"two\nlines\",3\n");
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[1], (std::vector<std::string>{"x,1", "say \"hi\""}));
  EXPECT_EQ(r.rows[2], (std::vector<std::string>{"two\nlines", "3"}));
  EXPECT_EQ(r.lines, (std::vector<int64_t>{1, 2, 4})) << "the blank line 3 is skipped";
  EXPECT_EQ(r.unterminated_quote_line, 0);
  EXPECT_EQ(parse_csv_records("a\n\"open,1\n").unterminated_quote_line, 2);
  EXPECT_TRUE(r.last_terminated);
}

TEST(ParseCsvRecords, SaysWhenTheTextEndsInsideItsLastRecord) {
  EXPECT_TRUE(parse_csv_records("a,b\n1,2\n").last_terminated);
  EXPECT_TRUE(parse_csv_records("a,b\n1,2\r\n\n").last_terminated);
  EXPECT_TRUE(parse_csv_records("").last_terminated);
  EXPECT_FALSE(parse_csv_records("a,b\n1,2").last_terminated);
  EXPECT_FALSE(parse_csv_records("a,b\n1,").last_terminated);
  EXPECT_FALSE(parse_csv_records("a,b\n1,\"x\n").last_terminated);  // inside a quoted field
}

TEST(CsvWriter, WritesNullsAsEmptyQuotesTextAndRoundTrips) {
  test::ScratchDir dir;
  {
    CsvWriter csv(dir.file("t.csv"), {"name", "value", "missing"});
    csv.add(std::string_view("a,b")).add(0.25).add_null();
    csv.end_row();
    csv.add(std::string_view("nan")).add(NAN).add(std::optional<double>());
    csv.end_row();
  }
  auto rows = parse_csv(test::read_file(dir.file("t.csv")));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"a,b", "0.25", ""}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"nan", "nan", ""}));
}

TEST(CsvWriter, WrongFieldCountIsAnIoError) {
  test::ScratchDir dir;
  CsvWriter csv(dir.file("t.csv"), {"a", "b"});
  csv.add(int64_t{1});
  EXPECT_THROW(csv.end_row(), IoError);
}

TEST(RunDir, ExplicitNameIsNeverReusedAndAutoNamesAreUnique) {
  test::ScratchDir dir;
  std::string a = create_run_dir(dir.path(), "x", "stem");
  EXPECT_TRUE(std::filesystem::is_directory(a));
  EXPECT_THROW(create_run_dir(dir.path(), "x", "stem"), ConfigError);
  EXPECT_THROW(create_run_dir(dir.path(), "../x", "stem"), ConfigError);
  std::string b = create_run_dir(dir.path(), "", "stem");
  std::string c = create_run_dir(dir.path(), "", "stem");
  EXPECT_NE(b, c);
  write_file_atomic(dir.file("f.json"), "{}\n");
  EXPECT_EQ(test::read_file(dir.file("f.json")), "{}\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("f.json.tmp")));
}

TEST(WriteFileAtomic, FailedRenameKeepsTheOldFileAndLeavesNoTempFile) {
  test::ScratchDir dir;
  // A non-empty directory at the path: the rename fails after the temp file was written.
  test::write_file(dir.file("out/keep.txt"), "x");
  try {
    write_file_atomic(dir.file("out"), "new\n");
    ADD_FAILURE() << "no IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("out")), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read_file(dir.file("out/keep.txt")), "x");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.tmp"))) << "temp file left behind";
}

TEST(WriteFileAtomicParts, WritesThePiecesInOrderEmptyOnesIncluded) {
  test::ScratchDir dir;
  const std::string big(100000, 'b');
  const std::string_view tail("\0tail", 5);
  write_file_atomic_parts(dir.file("p.bin"), {"head", std::string_view(), big, tail});
  const std::string got = test::read_file(dir.file("p.bin"));
  ASSERT_EQ(got.size(), 4 + big.size() + 5);
  EXPECT_TRUE(got == "head" + big + std::string(tail)) << "bytes differ";
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.bin.tmp")));
  EXPECT_THROW(write_file_atomic_parts(dir.file("no/dir/p.bin"), {"x"}), IoError);
}

}  // namespace
}  // namespace llmprof::output
