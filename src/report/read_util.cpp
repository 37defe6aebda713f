#include "read_util.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "llmprof/error.h"
#include "llmprof/output/csv.h"

namespace llmprof::report::detail {

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
                                header[static_cast<size_t>(col)], t));
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
  if (*v != static_cast<double>(static_cast<int64_t>(*v))) {
    throw DataError(fmt::format("{} line {}: column '{}': '{}' is not an integer", path, lines[row],
                                header[static_cast<size_t>(col)], text(row, col)));
  }
  return static_cast<int64_t>(*v);
}

CsvFile read_csv(const std::string& path) {
  std::string text = read_text(path);
  CsvFile csv;
  csv.path = path;
  output::CsvRecords parsed = output::parse_csv_records(text);
  if (parsed.unterminated_quote_line > 0) {
    throw DataError(fmt::format("{} line {}: unterminated quoted field", path,
                                parsed.unterminated_quote_line));
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

nlohmann::json read_json(const std::string& path) {
  std::string text = read_text(path);
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
    throw DataError(
        fmt::format("{} line {}, col {}: invalid JSON: {}", path, line, column, reason));
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

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(begin, &end);
  if (end == begin || *end != '\0') return std::nullopt;
  return v;
}

}  // namespace llmprof::report::detail
