// The CSV reader every run-directory table goes through (output::parse_csv_records). Properties:
// one line number per record, increasing from 1; and the records written back field by field with
// csv_field (the writer's quoting) parse to the same records. A record of one empty field is left
// out of the round trip: it writes as a blank line, which the reader skips by design.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llmprof/output/csv.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const output::CsvRecords records = output::parse_csv_records(fuzz::as_text(data, size));
  fuzz::check(records.rows.size() == records.lines.size(), "rows and line numbers differ in count");
  int64_t previous = 0;
  for (int64_t line : records.lines) {
    fuzz::check(line > previous, "record line numbers do not increase from 1");
    previous = line;
  }
  std::vector<std::vector<std::string>> kept;
  std::string written;
  for (const auto& row : records.rows) {
    if (row.size() == 1 && row[0].empty()) continue;
    kept.push_back(row);
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) written += ',';
      output::append_csv_field(written, row[i]);
    }
    written += '\n';
  }
  fuzz::check(output::parse_csv(written) == kept, "records written back parse differently");
  return 0;
}
