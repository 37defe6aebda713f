// The one reader of the run directory's CSV tables: a column table (name -> field of the row
// struct, and whether the column and its values must be there) read into typed rows. Columns are
// found by name, so their order in the file does not matter and an older file without a later
// column leaves that field unknown. Every error names the file, the line and the column
// (CsvFile's). Private to src/rundir.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/error.h"
#include "read_util.h"

namespace llmprof::rundir::detail {

// What a table needs of a column.
enum class Need {
  kOptional,  // the column may be absent (a file from before it) and its values empty
  kColumn,    // the header must have it (DataError naming file and column); values may be empty
  kValue,     // the header must have it and every row a value (DataError naming file and line)
};

// One column read into a field of Row.
template <typename Row>
struct ColumnRead {
  std::string_view name;
  Need need = Need::kOptional;
  std::string_view old_name;  // read under this name when the header lacks `name` (a rename)
  std::function<void(Row&, const CsvFile&, size_t row, int col)> read;
};

// A cell into a field, by the field's type. col < 0 (an absent optional column): unknown.
inline void read_cell(std::optional<double>& out, const CsvFile& c, size_t r, int col, Need n) {
  out = n == Need::kValue ? std::optional<double>(c.required_number(r, col)) : c.number(r, col);
}
inline void read_cell(double& out, const CsvFile& c, size_t r, int col, Need) {
  out = c.required_number(r, col);
}
inline void read_cell(std::optional<int64_t>& out, const CsvFile& c, size_t r, int col, Need n) {
  out = n == Need::kValue ? std::optional<int64_t>(c.required_integer(r, col)) : c.integer(r, col);
}
inline void read_cell(int64_t& out, const CsvFile& c, size_t r, int col, Need) {
  out = c.required_integer(r, col);
}
inline void read_cell(std::string& out, const CsvFile& c, size_t r, int col, Need) {
  out = c.text(r, col);
}

// The column `name` into row.*member, parsed by the member's type.
template <typename Row, typename M>
ColumnRead<Row> field(std::string_view name, M Row::*member, Need need = Need::kOptional,
                      std::string_view old_name = {}) {
  return {name, need, old_name, [member, need](Row& row, const CsvFile& c, size_t r, int col) {
            read_cell(row.*member, c, r, col, need);
          }};
}

// A column read by fn(row, text of the cell, csv, r, col): a value with a meaning of its own.
template <typename Row, typename Fn>
ColumnRead<Row> custom(std::string_view name, Need need, Fn fn) {
  return {name, need, {}, std::function<void(Row&, const CsvFile&, size_t, int)>(fn)};
}

// A text column whose values are one of `allowed` (or empty, when empty_ok): any other is a
// DataError "<file> line <n>: column '<name>': '<value>' (expected a|b)".
template <typename Row>
ColumnRead<Row> one_of(std::string_view name, std::string Row::*member, Need need,
                       std::vector<std::string_view> allowed, bool empty_ok) {
  return {name, need, {},
          [name, member, allowed, empty_ok](Row& row, const CsvFile& c, size_t r, int col) {
            const std::string& v = c.text(r, col);
            bool ok = empty_ok && v.empty();
            for (std::string_view a : allowed) ok = ok || v == a;
            if (!ok) {
              throw DataError(fmt::format("{} line {}: column '{}': '{}' (expected {})", c.path,
                                          c.lines[r], name, v, fmt::join(allowed, "|")));
            }
            row.*member = v;
          }};
}

// The columns of a struct held in Row (the roofline columns of modules.csv and ops.csv).
template <typename Row, typename Sub>
std::vector<ColumnRead<Row>> nested(Sub Row::*member, const std::vector<ColumnRead<Sub>>& inner) {
  std::vector<ColumnRead<Row>> out;
  for (const ColumnRead<Sub>& c : inner) {
    out.push_back({c.name, c.need, c.old_name,
                   [member, read = c.read](Row& row, const CsvFile& csv, size_t r, int col) {
                     read(row.*member, csv, r, col);
                   }});
  }
  return out;
}

// Every row of csv through the column table: columns looked up (and the required ones checked,
// in table order) once, then each row's cells read in table order.
template <typename Row>
std::vector<Row> read_rows(const CsvFile& csv, const std::vector<ColumnRead<Row>>& columns) {
  std::vector<int> index;
  index.reserve(columns.size());
  for (const ColumnRead<Row>& c : columns) {
    const std::string name(c.name);
    int i = c.need == Need::kOptional ? csv.index(name) : csv.require(name);
    if (i < 0 && !c.old_name.empty()) i = csv.index(std::string(c.old_name));
    index.push_back(i);
  }
  std::vector<Row> rows(csv.rows.size());
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    for (size_t k = 0; k < columns.size(); ++k) columns[k].read(rows[r], csv, r, index[k]);
  }
  return rows;
}

}  // namespace llmprof::rundir::detail
