// Append-only CSV writer: the header once, then each row written and flushed as it completes,
// so a killed run keeps every finished row. Values print in shortest round-trip form; a null
// (unknown) value is an empty field, never 0.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::output {

// One CSV field: as is, or quoted (RFC 4180, quotes doubled) when it holds , " CR or LF.
std::string csv_field(std::string_view value);
void append_csv_field(std::string& out, std::string_view value);

class CsvWriter {
 public:
  // Creates (truncates) path and writes the header row. Throws IoError.
  CsvWriter(const std::string& path, const std::vector<std::string>& columns);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  CsvWriter& add(int64_t value);
  CsvWriter& add(double value);
  CsvWriter& add(std::optional<double> value);  // nullopt -> empty field
  CsvWriter& add(std::string_view value);        // quoted when it holds , " or newline
  CsvWriter& add_null();
  // Ends the row: writes it and flushes to the OS. Throws IoError if the field count is wrong.
  void end_row();

  const std::string& path() const { return path_; }
  size_t num_columns() const { return num_columns_; }

 private:
  void separator();
  std::string path_;
  std::FILE* file_ = nullptr;
  size_t num_columns_ = 0;
  size_t fields_in_row_ = 0;
  std::string row_;  // reused buffer
};

// CSV records with the 1-based line each starts on, for errors that name the line.
struct CsvRecords {
  std::vector<std::vector<std::string>> rows;
  std::vector<int64_t> lines;
  int64_t unterminated_quote_line = 0;  // > 0: a quoted field opened on this line never closed
  bool last_terminated = true;  // false: the text ends inside its last record (no final newline)
};

// Parses one CSV document (RFC 4180 quoting, CRLF or LF, blank lines skipped).
CsvRecords parse_csv_records(std::string_view text);

// The rows of parse_csv_records. For tests and quick reads.
std::vector<std::vector<std::string>> parse_csv(std::string_view text);

}  // namespace llmprof::output
