#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
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


// Files may grow to limit_bytes while it lives (RLIMIT_FSIZE; SIGXFSZ ignored, so a write past it
// fails with EFBIG as one on a full disk fails with ENOSPC). Restores both on destruction.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t limit_bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = old_;
    lim.rlim_cur = limit_bytes;
    ok_ = ::setrlimit(RLIMIT_FSIZE, &lim) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  bool ok() const { return ok_; }

 private:
  struct rlimit old_ {};
  void (*old_handler_)(int) = nullptr;
  bool ok_ = false;
};

TEST(CsvWriter, FailedAppendCutsTheFileBackToItsLastWholeRowAndRefusesMore) {
  test::ScratchDir dir;
  const std::string path = dir.file("steps.csv");
  CsvWriter csv(path, {"step", "text"});
  const std::string text(40, 'x');  // each row: "<n>," + 40 + "\n", 44 or 45 bytes
  int64_t written = 0;
  {
    FileSizeLimit limit(1000);  // the header and ~22 rows fit, the next row is cut by the limit
    ASSERT_TRUE(limit.ok());
    try {
      for (int64_t i = 1; i <= 100; ++i) {
        csv.add(i).add(std::string_view(text));
        csv.end_row();
        written = i;
      }
      ADD_FAILURE() << "no IoError at the size limit";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::strerror(EFBIG)), std::string::npos) << e.what();
    }
  }
  ASSERT_GT(written, 10);
  const std::string got = test::read_file(path);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), '\n') << "a torn row was left at the end";
  const auto rows = parse_csv(got);
  ASSERT_EQ(rows.size(), static_cast<size_t>(written + 1)) << "header and every whole row";
  EXPECT_EQ(rows.back(), (std::vector<std::string>{std::to_string(written), text}));
  csv.add(int64_t{0}).add(std::string_view("late"));
  EXPECT_THROW(csv.end_row(), IoError) << "a row after a failed one would follow a gap";
  EXPECT_EQ(test::read_file(path), got);
}

TEST(CsvWriter, WholeModeShowsTheFileOnlyWhenCommitted) {
  test::ScratchDir dir;
  const std::string path = dir.file("ops.csv");
  {
    CsvWriter csv(path, {"op", "calls"}, CsvMode::kWhole);
    csv.add(std::string_view("mm")).add(int64_t{3});
    csv.end_row();
    EXPECT_FALSE(std::filesystem::exists(path)) << "visible before commit";
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "an uncommitted table must not appear";
  EXPECT_FALSE(std::filesystem::exists(temporary_path(path))) << "temporary left behind";
  {
    CsvWriter csv(path, {"op", "calls"}, CsvMode::kWhole);
    csv.add(std::string_view("mm")).add(int64_t{3});
    csv.end_row();
    csv.commit();
    EXPECT_THROW(csv.end_row(), IoError) << "no row after the commit";
  }
  EXPECT_EQ(test::read_file(path), "op,calls\nmm,3\n");
  EXPECT_FALSE(std::filesystem::exists(temporary_path(path)));
}

TEST(WriteFileAtomic, AWriteThatMeetsTheSizeLimitKeepsTheOldFileAndNamesTheReason) {
  test::ScratchDir dir;
  const std::string path = dir.file("summary.json");
  write_file_atomic(path, "{\"status\": \"old\"}\n");
  {
    FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.ok());
    try {
      write_file_atomic(path, std::string(10000, ' '));
      ADD_FAILURE() << "no IoError";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(temporary_path(path)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::strerror(EFBIG)), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(test::read_file(path), "{\"status\": \"old\"}\n") << "the old file must survive";
  EXPECT_FALSE(std::filesystem::exists(temporary_path(path))) << "temporary left behind";
}

}  // namespace
}  // namespace llmprof::output
