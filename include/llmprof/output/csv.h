// CSV writer: the header once, then each row handed to the OS as it completes, so a killed run
// keeps every finished row (or, for tables written at the end, a temporary renamed when whole).
// Values print in shortest round-trip form; a null (unknown) value is an empty field, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::output {

// One CSV field: as is, or quoted (RFC 4180, quotes doubled) when it holds , " CR or LF.
std::string csv_field(std::string_view value);
void append_csv_field(std::string& out, std::string_view value);

// How a CsvWriter's file reaches its path.
enum class CsvMode {
  kAppend,  // rows land in the file as they end: a killed run keeps every finished row
  kWhole,   // rows go to a temporary file, renamed over path by commit(): all rows or none
};

class CsvWriter {
 public:
  // Creates (truncates) path, or its temporary (kWhole), and writes the header row. Throws IoError.
  CsvWriter(const std::string& path,
            const std::vector<std::string>& columns,
            CsvMode mode = CsvMode::kAppend);
  ~CsvWriter();  // kWhole without commit(): the temporary is removed, path is left as it was
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  CsvWriter& add(int64_t value);
  CsvWriter& add(double value);
  CsvWriter& add(std::optional<double> value);  // nullopt -> empty field
  CsvWriter& add(std::string_view value);        // quoted when it holds , " or newline
  CsvWriter& add_null();
  // Ends the row: writes it to the OS at once (write(2), no user-space buffer). Throws IoError if
  // the field count is wrong or the write fails (disk full): then the file is cut back to its
  // last whole row and the writer refuses further rows, so no torn row is ever left behind.
  void end_row();
  // kWhole: flushes the temporary to disk and renames it over path. Throws IoError.
  void commit();

  const std::string& path() const { return path_; }
  size_t num_columns() const { return num_columns_; }

 private:
  void separator();
  std::string path_;
  std::string file_path_;  // path, or its temporary (kWhole)
  CsvMode mode_;
  int fd_ = -1;
  int64_t whole_bytes_ = 0;  // bytes of whole rows in the file
  bool failed_ = false;      // a write failed: no further row
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
