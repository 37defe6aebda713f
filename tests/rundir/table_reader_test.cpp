// The generic table reader (src/rundir/table_reader.h): columns found by name into typed fields,
// required columns and values, value lists, renamed and nested columns, errors naming the file,
// line and column.
#include "table_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "read_util.h"
#include "support/test_support.h"

namespace llmprof::rundir::detail {
namespace {

struct Inner {
  std::optional<double> gflops;
  std::string bound;
};

struct Row {
  int64_t step = 0;
  std::string name;
  double loss = 0;
  std::optional<double> ms;
  std::optional<int64_t> block;
  Inner inner;
};

std::vector<ColumnRead<Row>> table() {
  std::vector<ColumnRead<Row>> c = {field("step", &Row::step, Need::kValue),
                                    field("name", &Row::name, Need::kColumn),
                                    field("loss", &Row::loss, Need::kValue),
                                    field("ms", &Row::ms), field("block", &Row::block)};
  const std::vector<ColumnRead<Inner>> inner = {
      field("achieved_gflops", &Inner::gflops, Need::kOptional, "gflops"),
      one_of("bound", &Inner::bound, Need::kOptional, {"compute", "memory"}, true)};
  for (auto& n : nested(&Row::inner, inner)) c.push_back(n);
  return c;
}

CsvFile csv_of(const test::ScratchDir& dir, const std::string& text) {
  const std::string path = dir.file("t.csv");
  test::write_file(path, text);
  return read_csv(path);
}

TEST(TableReader, ReadsColumnsByNameInAnyOrderIntoTypedFields) {
  test::ScratchDir dir;
  const std::vector<Row> rows = read_rows(
      csv_of(dir, "loss,block,name,step,achieved_gflops,bound\n2.5,3,a,7,12.5,memory\n1,,b,8,,\n"),
      table());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, 7);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_DOUBLE_EQ(rows[0].loss, 2.5);
  EXPECT_FALSE(rows[0].ms.has_value());  // no ms column: unknown, not 0
  EXPECT_EQ(rows[0].block, 3);
  EXPECT_EQ(rows[0].inner.gflops, 12.5);
  EXPECT_EQ(rows[0].inner.bound, "memory");
  EXPECT_FALSE(rows[1].block.has_value());
  EXPECT_FALSE(rows[1].inner.gflops.has_value());
  EXPECT_EQ(rows[1].inner.bound, "");
}

TEST(TableReader, ReadsARenamedColumnUnderItsOldName) {
  test::ScratchDir dir;
  const auto rows = read_rows(csv_of(dir, "step,name,loss,gflops\n1,a,0.5,3\n"), table());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].inner.gflops, 3.0);
}

TEST(TableReader, MissingRequiredColumnNamesFileAndColumn) {
  test::ScratchDir dir;
  const CsvFile csv = csv_of(dir, "step,loss\n1,0.5\n");
  const std::string what = test::data_error_of([&] { read_rows(csv, table()); });
  EXPECT_NE(what.find(csv.path), std::string::npos) << what;
  EXPECT_NE(what.find("name"), std::string::npos) << what;
}

TEST(TableReader, EmptyRequiredValueNamesFileLineAndColumn) {
  test::ScratchDir dir;
  const CsvFile csv = csv_of(dir, "step,name,loss\n1,a,0.5\n2,b,\n");
  const std::string what = test::data_error_of([&] { read_rows(csv, table()); });
  EXPECT_NE(what.find(csv.path + " line 3"), std::string::npos) << what;
  EXPECT_NE(what.find("'loss'"), std::string::npos) << what;
}

TEST(TableReader, ValueOutsideItsListNamesLineColumnAndTheList) {
  test::ScratchDir dir;
  const CsvFile csv = csv_of(dir, "step,name,loss,bound\n1,a,0.5,disk\n");
  const std::string what = test::data_error_of([&] { read_rows(csv, table()); });
  EXPECT_EQ(what, csv.path + " line 2: column 'bound': 'disk' (expected compute|memory)");
}

TEST(TableReader, NonIntegerInAnIntegerFieldNamesTheColumn) {
  test::ScratchDir dir;
  const CsvFile csv = csv_of(dir, "step,name,loss,block\n1,a,0.5,1.5\n");
  const std::string what = test::data_error_of([&] { read_rows(csv, table()); });
  EXPECT_NE(what.find(csv.path + " line 2: column 'block': '1.5' is not an integer"),
            std::string::npos)
      << what;
}

}  // namespace
}  // namespace llmprof::rundir::detail
