#include "llmprof/data/text_dataset.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <iostream>
#include <string>

#include "llmprof/data/wordpiece.h"
#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::data {
namespace {

using Clock = std::chrono::steady_clock;

using test::data_error_of;

// Writes text gzip-compressed (zlib's gzwrite, as gzip(1) would).
void write_gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// "line: reason" of every bad-row example, for whole-list comparisons.
std::vector<std::string> bad_rows(const TextDataset& ds) {
  std::vector<std::string> out;
  for (const BadRow& b : ds.bad_row_examples)
    out.push_back(std::to_string(b.line) + ": " + b.reason);
  return out;
}

using Strings = std::vector<std::string>;

// An IMDB-like CSV: the header, then the given (label, text) rows, text always quoted.
constexpr const char* kCsv =
    "label,rating,id,text\n"
    "0,1,10,\"plain\"\n"                              // line 2
    "1,9,11,\"has \"\"quotes\"\", and, commas\"\r\n"  // 3, CRLF
    "1,8,12,\"spans\ntwo lines\"\n"                   // 4-5
    "2,3,13,\"label out of range\"\n"                 // 6
    "x,3,14,\"label not a number\"\n"                 // 7
    "\n"                                              // 8: blank, skipped
    "1,3,15\n"                                        // 9: three fields
    "0,2,16,bad\"quote\n"                             // 10
    "0,2,17,\"closed\" then text\n"                   // 11
    "1,7,18,unquoted text is fine\n"                  // 12
    "0,2,19,\"bad \xC3\x28 utf8\"\n";                 // 13

TextReadOptions csv_options() {
  TextReadOptions opt;
  opt.label_column = "label";
  opt.num_labels = 2;
  return opt;
}

TEST(ReadTextDataset, ReadsNonBlankLinesWhenFormatIsText) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("a.txt"), "first line\n\n   \nsecond line\r\n\tthird \n \xFF bad\n");
  const TextDataset ds = read_text_dataset(dir.file("a.txt"), {});
  EXPECT_EQ(config::name(ds.format), "text");
  ASSERT_EQ(ds.records.size(), 3u);
  EXPECT_EQ(ds.records[0].text, "first line");
  EXPECT_EQ(ds.records[0].line, 1);
  EXPECT_EQ(ds.records[1].text, "second line");  // CR of CRLF dropped
  EXPECT_EQ(ds.records[1].line, 4);
  EXPECT_EQ(ds.records[2].text, "\tthird ");  // kept verbatim
  EXPECT_EQ(ds.records[2].line, 5);
  EXPECT_EQ(ds.records[2].label, -1);
  EXPECT_EQ(ds.rows_read, 4);  // the two blank lines are not rows
  EXPECT_EQ(ds.bad_rows, 1);
  EXPECT_EQ(bad_rows(ds), Strings{"6: invalid UTF-8 at byte 1 of the line"});
}

TEST(ReadTextDataset, JoinsFieldsAndReportsBadRowsWhenFormatIsJsonl) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("gsm.jsonl"),
                   "{\"question\": \"q1\", \"answer\": \"a1\", \"extra\": 3}\n"
                   "\n"
                   "{\"question\": \"q2\"}\n"
                   "{\"question\": \"q3\", \"answer\": 5}\n"
                   "{oops\n"
                   "[1, 2]\n"
                   "{\"question\": \"q\\u00e9\", \"answer\": \"line\\nbreak\"}\n");
  TextReadOptions opt;
  opt.jsonl_fields = {"question", "answer"};
  const TextDataset ds = read_text_dataset(dir.file("gsm.jsonl"), opt);
  EXPECT_EQ(config::name(ds.format), "jsonl");
  ASSERT_EQ(ds.records.size(), 2u);
  EXPECT_EQ(ds.records[0].text, "q1\na1");
  EXPECT_EQ(ds.records[0].line, 1);
  EXPECT_EQ(ds.records[1].text, "q\xC3\xA9\nline\nbreak");
  EXPECT_EQ(ds.records[1].line, 7);
  EXPECT_EQ(ds.rows_read, 6);
  EXPECT_EQ(ds.bad_rows, 4);
  ASSERT_EQ(ds.bad_row_examples.size(), 4u);
  EXPECT_EQ(bad_rows(ds)[0], "3: missing field 'answer'");
  EXPECT_EQ(bad_rows(ds)[1], "4: field 'answer' is not a string (got number)");
  EXPECT_EQ(bad_rows(ds)[2].rfind("5: malformed JSON: ", 0), 0u) << bad_rows(ds)[2];
  EXPECT_EQ(bad_rows(ds)[3], "6: not a JSON object (got array)");
}

TEST(ReadTextDataset, ParsesRfc4180AndReportsBadRowsWhenFormatIsCsv) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("reviews.csv"), kCsv);
  const TextDataset ds = read_text_dataset(dir.file("reviews.csv"), csv_options());
  EXPECT_EQ(config::name(ds.format), "csv");
  ASSERT_EQ(ds.records.size(), 4u);
  EXPECT_EQ(ds.records[0].text, "plain");
  EXPECT_EQ(ds.records[0].label, 0);
  EXPECT_EQ(ds.records[0].line, 2);
  EXPECT_EQ(ds.records[1].text, "has \"quotes\", and, commas");
  EXPECT_EQ(ds.records[1].label, 1);
  EXPECT_EQ(ds.records[1].line, 3);
  EXPECT_EQ(ds.records[2].text, "spans\ntwo lines");
  EXPECT_EQ(ds.records[2].line, 4);
  EXPECT_EQ(ds.records[3].text, "unquoted text is fine");
  EXPECT_EQ(ds.records[3].line, 12);
  EXPECT_EQ(ds.rows_read, 10);  // the blank line 8 and the header are not rows
  EXPECT_EQ(ds.bad_rows, 6);
  EXPECT_EQ(bad_rows(ds),
            (Strings{"6: label '2' is not an integer in [0, 2)",
                     "7: label 'x' is not an integer in [0, 2)",
                     "9: expected 4 fields as the header, got 3",
                     "10: malformed CSV: quote inside unquoted field 4 (RFC 4180: quote the field "
                     "and double the quote)",
                     "11: malformed CSV: unexpected character after a closing quote in field 4",
                     "13: invalid UTF-8 at byte 4 of column 'text'"}));
}

TEST(ReadTextDataset, ReportsAnUnclosedQuoteRunningToTheEnd) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("q.csv"), "text\n\"ok\"\n\"never closed\nmore\n");
  const TextDataset ds = read_text_dataset(dir.file("q.csv"), {});
  ASSERT_EQ(ds.records.size(), 1u);
  EXPECT_EQ(bad_rows(ds), Strings{"3: malformed CSV: unclosed quoted field (opened on line 3, "
                                  "runs to the end of the file)"});
}

TEST(ReadTextDataset, ThrowsNamingTheHeaderWhenColumnIsMissing) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("r.csv"), "label,review\n1,\"good\"\n");
  std::string msg = data_error_of([&] { read_text_dataset(dir.file("r.csv"), csv_options()); });
  EXPECT_NE(msg.find(dir.file("r.csv") + ":1: no text column 'text' in the header 'label,review'"),
            std::string::npos)
      << msg;
  TextReadOptions opt = csv_options();
  opt.text_column = "review";
  opt.label_column = "stars";
  msg = data_error_of([&] { read_text_dataset(dir.file("r.csv"), opt); });
  EXPECT_NE(msg.find("no label column 'stars' in the header 'label,review'"), std::string::npos)
      << msg;
}

TEST(ReadTextDataset, SplitsOnTabsWithoutQuotingWhenFormatIsTsv) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("d.tsv"), "text\tlabel\nsay \"hi\"\t1\nthree\tfields\t0\nok\t0\n");
  TextReadOptions opt = csv_options();
  const TextDataset ds = read_text_dataset(dir.file("d.tsv"), opt);
  EXPECT_EQ(config::name(ds.format), "tsv");
  ASSERT_EQ(ds.records.size(), 2u);
  EXPECT_EQ(ds.records[0].text, "say \"hi\"");  // quotes are literal in TSV
  EXPECT_EQ(ds.records[0].label, 1);
  EXPECT_EQ(ds.records[1].line, 4);
  EXPECT_EQ(bad_rows(ds), Strings{"3: expected 2 fields as the header, got 3"});
}

TEST(ReadTextDataset, ReadsGzipLikeThePlainFile) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("reviews.csv"), kCsv);
  write_gzip(dir.file("reviews.csv.gz"), kCsv);
  EXPECT_EQ(read_file_maybe_gzip(dir.file("reviews.csv.gz")), kCsv);
  const TextDataset plain = read_text_dataset(dir.file("reviews.csv"), csv_options());
  const TextDataset gz = read_text_dataset(dir.file("reviews.csv.gz"), csv_options());
  EXPECT_EQ(config::name(gz.format), "csv");  // .gz stripped before the extension decides
  ASSERT_EQ(gz.records.size(), plain.records.size());
  for (size_t i = 0; i < gz.records.size(); ++i) {
    EXPECT_EQ(gz.records[i].text, plain.records[i].text);
    EXPECT_EQ(gz.records[i].line, plain.records[i].line);
  }
  EXPECT_EQ(bad_rows(gz), bad_rows(plain));
}

TEST(ReadFileMaybeGzip, ThrowsWhenGzipIsTruncatedOrNotGzip) {
  test::ScratchDir dir("textds");
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i * 7919 % 10007) + "\n";
  write_gzip(dir.file("t.txt.gz"), big);
  const std::string whole = test::read_file(dir.file("t.txt.gz"));
  test::write_file(dir.file("cut.txt.gz"), whole.substr(0, whole.size() / 2));
  std::string msg = data_error_of([&] { read_file_maybe_gzip(dir.file("cut.txt.gz")); });
  EXPECT_NE(msg.find("ends early"), std::string::npos) << msg;
  EXPECT_NE(msg.find(dir.file("cut.txt.gz")), std::string::npos) << msg;
  test::write_file(dir.file("plain.txt.gz"), "not compressed\n");
  msg = data_error_of([&] { read_file_maybe_gzip(dir.file("plain.txt.gz")); });
  EXPECT_NE(msg.find("not gzip data"), std::string::npos) << msg;
  msg = data_error_of([&] { read_file_maybe_gzip(dir.file("absent.gz")); });
  EXPECT_NE(msg.find("file not found: " + dir.file("absent.gz")), std::string::npos) << msg;
}

TEST(ReadTextDataset, ThrowsWithTheFirstReasonWhenEveryRowIsBad) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("bad.csv"), "label,text\n7,\"a\"\n9,\"b\"\n");
  std::string msg = data_error_of([&] { read_text_dataset(dir.file("bad.csv"), csv_options()); });
  EXPECT_NE(msg.find(dir.file("bad.csv") + ": no usable rows: all 2 csv rows are bad; the first, "
                                           "line 2: label '7' is not an integer in [0, 2)"),
            std::string::npos)
      << msg;
  test::write_file(dir.file("header_only.csv"), "label,text\n\n");
  msg = data_error_of([&] { read_text_dataset(dir.file("header_only.csv"), csv_options()); });
  EXPECT_NE(msg.find("no data rows"), std::string::npos) << msg;
}

TEST(ReadTextDataset, ThrowsWhenOptionsDoNotFit) {
  test::ScratchDir dir("textds");
  test::write_file(dir.file("a.txt"), "x\n");
  // The format is an enum: an unknown name stops at the config boundary, naming the key.
  try {
    config::parse_enum<config::DataFormat>("parquet");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'parquet' is not one of auto|text|jsonl|csv|tsv"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.key(), "data.format");
  }
  TextReadOptions opt = csv_options();
  EXPECT_NE(data_error_of([&] {
              read_text_dataset(dir.file("a.txt"), opt);
            }).find("labels are read from csv/tsv files only"),
            std::string::npos);
  opt.format = config::DataFormat::kCsv;
  opt.num_labels = 0;
  EXPECT_NE(data_error_of([&] {
              read_text_dataset(dir.file("a.txt"), opt);
            }).find("needs num_labels >= 1"),
            std::string::npos);
  EXPECT_NE(data_error_of([&] {
              read_text_dataset(dir.file("missing.txt"), {});
            }).find("file not found: " + dir.file("missing.txt")),
            std::string::npos);
}

TEST(ReadTextDataset, KeepsASeededSubsetInFileOrderWhenMaxRecordsIsSet) {
  test::ScratchDir dir("textds");
  std::string csv = "label,text\n";  // 50 negatives, then 50 positives, as IMDB is sorted
  for (int i = 0; i < 100; ++i)
    csv += std::to_string(i / 50) + ",\"review " + std::to_string(i) + "\"\n";
  test::write_file(dir.file("sorted.csv"), csv);
  TextReadOptions opt = csv_options();
  opt.max_records = 10;
  opt.seed = 7;
  const TextDataset a = read_text_dataset(dir.file("sorted.csv"), opt);
  const TextDataset b = read_text_dataset(dir.file("sorted.csv"), opt);
  ASSERT_EQ(a.records.size(), 10u);
  EXPECT_EQ(a.rows_read, 100);
  int positives = 0;
  for (size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(a.records[i].line, b.records[i].line);                 // deterministic given the seed
    if (i > 0) EXPECT_LT(a.records[i - 1].line, a.records[i].line);  // file order
    EXPECT_EQ(a.records[i].text, "review " + std::to_string(a.records[i].line - 2));
    positives += a.records[i].label;
  }
  EXPECT_GT(positives, 0);  // a prefix would hold negatives only
  EXPECT_LT(positives, 10);
  opt.seed = 8;
  const TextDataset c = read_text_dataset(dir.file("sorted.csv"), opt);
  bool differ = false;
  for (size_t i = 0; i < c.records.size(); ++i) differ |= c.records[i].line != a.records[i].line;
  EXPECT_TRUE(differ);
  opt.max_records = 1000;  // more than there are: all of them
  EXPECT_EQ(read_text_dataset(dir.file("sorted.csv"), opt).records.size(), 100u);
}

// ---------------------------------------------------------------------------------------------
// Real data.

TEST(ReadTextDataset, ReadsWikiText2ValidOneParagraphPerLine) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const TextDataset ds = read_text_dataset(test::shared_data("wikitext-2/wiki.valid.tokens"), {});
  EXPECT_EQ(config::name(ds.format), "text");
  // grep -cv '^[[:space:]]*$' wiki.valid.tokens: 2461 of its 3760 lines are not blank.
  EXPECT_EQ(ds.records.size(), 2461u);
  EXPECT_EQ(ds.bad_rows, 0);
  EXPECT_EQ(ds.records[0].text, " = Homarus gammarus = ");
  EXPECT_EQ(ds.records[0].line, 2);
}

TEST(ReadTextDataset, ReadsGsm8kTestQuestionsAndAnswers) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  TextReadOptions opt;
  opt.jsonl_fields = {"question", "answer"};
  const TextDataset ds = read_text_dataset(test::shared_data("gsm8k/test.jsonl"), opt);
  EXPECT_EQ(ds.records.size(), 1319u);
  EXPECT_EQ(ds.bad_rows, 0);
  for (const TextRecord& r : ds.records) {
    ASSERT_NE(r.text.find("\n"), std::string::npos) << "line " << r.line;
    ASSERT_NE(r.text.find("#### "), std::string::npos) << "line " << r.line;
  }
}

TEST(ReadTextDataset, ReadsImdbTestCsvGzWithBalancedLabels) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const auto t0 = Clock::now();
  const TextDataset ds =
      read_text_dataset(test::shared_data("sentiment/imdb_test.csv.gz"), csv_options());
  const double read_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_EQ(config::name(ds.format), "csv");
  ASSERT_EQ(ds.records.size(), 25000u);
  EXPECT_EQ(ds.bad_rows, 0);
  int64_t positives = 0;
  for (const TextRecord& r : ds.records) positives += r.label;
  EXPECT_EQ(positives, 12500);
  EXPECT_EQ(ds.records[0].text.rfind("Once again Mr. Costner has dragged out a movie", 0), 0u);
  EXPECT_EQ(ds.records.back().line, 25001);  // one review per line after the header
  std::cout << "[ timing   ] gunzip + parse of imdb_test.csv.gz (32.7 MB): " << read_ms << " ms\n";
  EXPECT_LT(read_ms, 10000.0);  // ~0.3 s in Release; generous for Debug and slow CI
}

}  // namespace
}  // namespace llmprof::data
