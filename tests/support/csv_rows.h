// A CSV file's data rows as header -> field maps, for tests that link llmprof_output.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "llmprof/output/csv.h"
#include "support/test_support.h"

namespace llmprof::test {

using CsvRow = std::map<std::string, std::string>;

// The rows after the header of the CSV file at path; none when it is absent or empty.
inline std::vector<CsvRow> csv_rows(const std::string& path) {
  auto rows = output::parse_csv(read_file(path));
  std::vector<CsvRow> out;
  for (size_t i = 1; i < rows.size(); ++i) {
    CsvRow r;
    for (size_t c = 0; c < rows[0].size() && c < rows[i].size(); ++c) r[rows[0][c]] = rows[i][c];
    out.push_back(r);
  }
  return out;
}

}  // namespace llmprof::test
