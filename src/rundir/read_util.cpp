#include "read_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llmprof/base/numbers.h"
#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/rundir/files.h"

namespace llmprof::rundir {

std::string InputWarning::text() const {
  if (line <= 0) return fmt::format("{}: {}", file, message);
  return fmt::format("{} line {}: {}", file, line, message);
}

}  // namespace llmprof::rundir

namespace llmprof::rundir::detail {

std::string not_a_directory(const std::string& path) {
  const std::filesystem::path p(path);
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return fmt::format("'{}': no such directory", path);
  const std::string parent = p.parent_path().empty() ? "." : p.parent_path().string();
  return fmt::format("'{}' is a file; give the run or sweep directory{}", path,
                     std::filesystem::exists(rundir::path(parent, kSteps)) ||
                             std::filesystem::exists(rundir::path(parent, kSweepCsv))
                         ? fmt::format(" ({})", parent)
                         : "");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int CsvFile::index(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

int CsvFile::require(const std::string& name) const {
  int i = index(name);
  if (i < 0) {
    throw DataError(
        fmt::format("{} line 1: no column '{}' in the header (expected one)", path, name));
  }
  return i;
}

const std::string& CsvFile::text(size_t row, int col) const {
  static const std::string kEmpty;
  return col < 0 ? kEmpty : rows[row][static_cast<size_t>(col)];
}

std::optional<double> CsvFile::number(size_t row, int col) const {
  const std::string& t = text(row, col);
  if (t.empty()) return std::nullopt;
  auto v = parse_number(t);
  if (!v) {
    throw DataError(fmt::format("{} line {}: column '{}': '{}' is not a number", path, lines[row],
                                header[static_cast<size_t>(col)], printable(t)));
  }
  return v;
}

double CsvFile::required_number(size_t row, int col) const {
  auto v = number(row, col);
  if (!v) {
    throw DataError(fmt::format("{} line {}: column '{}' is empty (a number is required)", path,
                                lines[row], header[static_cast<size_t>(col)]));
  }
  return *v;
}

std::optional<int64_t> CsvFile::integer(size_t row, int col) const {
  auto v = number(row, col);
  if (!v) return std::nullopt;
  const std::optional<int64_t> whole = whole_int64(*v);
  if (!whole) {
    throw DataError(fmt::format("{} line {}: column '{}': '{}' is not an integer in int64 range",
                                path, lines[row], header[static_cast<size_t>(col)],
                                printable(text(row, col))));
  }
  return *whole;
}

int64_t CsvFile::required_integer(size_t row, int col) const {
  required_number(row, col);  // empty: its error
  return *integer(row, col);
}

namespace {

// Why the last record is a row cut short, or "" when it is whole. records includes the header.
std::string cut_reason(const output::CsvRecords& parsed,
                       size_t header_fields,
                       const std::string& text) {
  const size_t fields = parsed.rows.back().size();
  if (parsed.unterminated_quote_line > 0) {
    // A quote opened on the very last line is a write cut short; one that swallowed later lines
    // is a malformed file.
    int64_t last_line = 1 + std::count(text.begin(), text.end(), '\n');
    return parsed.unterminated_quote_line == last_line ? "a quoted field left open at the end" : "";
  }
  if (fields < header_fields) {
    return fmt::format("{} fields, the header has {}{}", fields, header_fields,
                       parsed.last_terminated ? "" : ", no newline at its end");
  }
  if (!parsed.last_terminated) return "no newline at its end, so its last field may be cut";
  return "";
}

// The records of path (text parsed) as a CsvFile; with warnings, a row cut short at the end is
// left out and noted there.
CsvFile to_csv_file(const std::string& path,
                    const std::string& text,
                    output::CsvRecords parsed,
                    std::vector<InputWarning>* warnings) {
  CsvFile csv;
  csv.path = path;
  if (warnings != nullptr && parsed.rows.size() > 1) {
    std::string why = cut_reason(parsed, parsed.rows.front().size(), text);
    if (!why.empty()) {
      warnings->push_back({"", path, parsed.lines.back(),
                           why + ": a row cut short (killed run or full disk?); left out"});
      parsed.rows.pop_back();
      parsed.lines.pop_back();
      parsed.unterminated_quote_line = 0;
    }
  }
  if (parsed.unterminated_quote_line > 0) {
    throw DataError(
        fmt::format("{} line {}: unterminated quoted field", path, parsed.unterminated_quote_line));
  }
  std::vector<std::vector<std::string>>& records = parsed.rows;
  const std::vector<int64_t>& starts = parsed.lines;
  if (records.empty())
    throw DataError(fmt::format("{} line 1: empty file (expected a header)", path));
  csv.header = std::move(records.front());
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != csv.header.size()) {
      throw DataError(fmt::format("{} line {}: {} fields, the header has {}", path, starts[r],
                                  records[r].size(), csv.header.size()));
    }
    csv.rows.push_back(std::move(records[r]));
    csv.lines.push_back(starts[r]);
  }
  return csv;
}

}  // namespace

CsvFile read_csv(const std::string& path) {
  std::string text = read_text(path);
  return to_csv_file(path, text, output::parse_csv_records(text), nullptr);
}

std::optional<CsvFile> read_run_csv(const std::string& path,
                                    std::vector<InputWarning>& warnings,
                                    bool required) {
  std::string text = read_text(path);
  output::CsvRecords parsed = output::parse_csv_records(text);
  // Nothing, or a header the write cut short: no row to read.
  const bool empty = parsed.rows.empty();
  const bool header_cut = parsed.rows.size() == 1 && !parsed.last_terminated;
  if (empty || header_cut) {
    std::string what = empty ? fmt::format("empty file ({} bytes)", text.size())
                             : "the header has no newline at its end (cut short)";
    if (required) throw DataError(fmt::format("{} line 1: {}; expected a header", path, what));
    warnings.push_back({"", path, empty ? 0 : 1, what + ": killed run or full disk? Left out"});
    return std::nullopt;
  }
  return to_csv_file(path, text, std::move(parsed), &warnings);
}

nlohmann::json read_json(const std::string& path) { return parse_json(read_text(path), path); }

nlohmann::json parse_json(const std::string& text, const std::string& path) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the failure; count lines up to it.
    size_t end = std::min(text.size(), e.byte == 0 ? size_t{0} : static_cast<size_t>(e.byte - 1));
    int64_t line = 1, column = 1;
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    size_t colon = what.rfind(": ");
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    throw DataError(fmt::format("{} line {}, col {}: invalid JSON: {}", path, line, column,
                                printable(reason, 200)));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw DataError(fmt::format("{}: invalid JSON: {}", path, printable(e.what(), 200)));
  }
}

std::optional<double> json_number(const nlohmann::json& doc, const std::string& dotted) {
  const nlohmann::json* node = &doc;
  size_t start = 0;
  while (start <= dotted.size()) {
    size_t dot = dotted.find('.', start);
    std::string part =
        dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) return std::nullopt;
    node = &(*node)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!node->is_number()) return std::nullopt;
  return node->get<double>();
}

}  // namespace llmprof::rundir::detail

namespace llmprof::rundir {

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(begin, &end);
  if (end == begin || *end != '\0') return std::nullopt;
  return v;
}

}  // namespace llmprof::rundir
