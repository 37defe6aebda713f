// Reading run files with positions: CSV records keep their line numbers and JSON errors their
// line and column, so every malformed-input error names the file and line. Private to src/rundir.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/rundir/read.h"

namespace llmprof::rundir::detail {

// The whole file; a missing or unreadable file throws DataError naming it.
std::string read_text(const std::string& path);

// Why `path`, given as a run or sweep directory, is not one: it does not exist, or it is a file
// (say `runs/x/steps.csv` for `runs/x`), with what to give instead.
std::string not_a_directory(const std::string& path);

// A CSV file: the header and the records, each with the 1-based line it starts on.
struct CsvFile {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int64_t> lines;  // lines[r]: the line row r starts on

  // Index of a column, or -1 when the header has none of that name.
  int index(const std::string& name) const;
  // Index of a column that must exist; throws DataError naming the file and column.
  int require(const std::string& name) const;
  // Field text; an absent column (col < 0) gives "".
  const std::string& text(size_t row, int col) const;
  // Field as a number: empty or absent column -> nullopt; not a number -> DataError (file:line).
  std::optional<double> number(size_t row, int col) const;
  // Field as a number that must be present; empty or not a number -> DataError (file:line).
  double required_number(size_t row, int col) const;
  // Field as an integer (block index, step); empty -> nullopt; bad -> DataError (file:line).
  std::optional<int64_t> integer(size_t row, int col) const;
  // The same, present: empty -> DataError (file:line).
  int64_t required_integer(size_t row, int col) const;
};

// Parses a CSV file (RFC 4180 quoting). Every record must have as many fields as the header;
// a short or long row throws DataError naming the file and line. Blank lines are skipped.
CsvFile read_csv(const std::string& path);

// read_csv for a file of a run, which a killed run or a full disk may have cut short: the last
// row when cut (fewer fields than the header, no newline at its end, or a quote left open on the
// last line) is left out and noted in warnings. An empty file (or a header cut short) gives
// nullopt and a warning, or throws DataError when required. Any other bad row still throws.
std::optional<CsvFile> read_run_csv(const std::string& path,
                                    std::vector<InputWarning>& warnings,
                                    bool required);

// Parses a JSON file; invalid JSON throws DataError naming the file, line and column.
nlohmann::json read_json(const std::string& path);
// The same for text read from path.
nlohmann::json parse_json(const std::string& text, const std::string& path);

// The number at a JSON pointer-like dotted path ("steps.warmup_excluded"), or nullopt when a
// step is missing, null or not a number.
std::optional<double> json_number(const nlohmann::json& doc, const std::string& dotted);

}  // namespace llmprof::rundir::detail
