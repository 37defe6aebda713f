#include "llmprof/output/csv.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "llmprof/error.h"

namespace llmprof::output {

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& columns)
    : path_(path), num_columns_(columns.size()) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw IoError("cannot create '" + path + "': " + std::strerror(errno));
  row_.reserve(1024);
  for (const auto& c : columns) add(std::string_view(c));
  end_row();
}

CsvWriter::~CsvWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void append_csv_field(std::string& out, std::string_view value) {
  if (value.find_first_of(",\"\n\r") == std::string_view::npos) {
    out.append(value);
    return;
  }
  out.push_back('"');
  for (char c : value) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

std::string csv_field(std::string_view value) {
  std::string out;
  append_csv_field(out, value);
  return out;
}

void CsvWriter::separator() {
  if (fields_in_row_++ > 0) row_.push_back(',');
}

CsvWriter& CsvWriter::add(int64_t value) {
  separator();
  fmt::format_to(std::back_inserter(row_), "{}", value);
  return *this;
}

CsvWriter& CsvWriter::add(double value) {
  separator();
  if (std::isfinite(value)) {
    fmt::format_to(std::back_inserter(row_), "{}", value);
  } else {
    row_ += std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  }
  return *this;
}

CsvWriter& CsvWriter::add(std::optional<double> value) {
  if (value) return add(*value);
  return add_null();
}

CsvWriter& CsvWriter::add(std::string_view value) {
  separator();
  append_csv_field(row_, value);
  return *this;
}

CsvWriter& CsvWriter::add_null() {
  separator();
  return *this;
}

void CsvWriter::end_row() {
  if (fields_in_row_ != num_columns_) {
    throw IoError(fmt::format("{}: row has {} fields, header has {}", path_, fields_in_row_,
                              num_columns_));
  }
  row_.push_back('\n');
  size_t n = std::fwrite(row_.data(), 1, row_.size(), file_);
  if (n != row_.size() || std::fflush(file_) != 0) {
    throw IoError("cannot append to '" + path_ + "': " + std::strerror(errno));
  }
  row_.clear();
  fields_in_row_ = 0;
}

CsvRecords parse_csv_records(std::string_view text) {
  CsvRecords out;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false, any = false;
  int64_t line = 1, record_line = 1;
  auto end_record = [&]() {
    record.push_back(std::move(field));
    field.clear();
    if (!(record.size() == 1 && record[0].empty())) {  // a blank line is no record
      out.rows.push_back(std::move(record));
      out.lines.push_back(record_line);
    }
    record.clear();
    any = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!any) record_line = line;
    any = true;
    if (c == '\n') ++line;
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      end_record();
    } else if (c != '\r') {
      field.push_back(c);
    }
  }
  if (in_quotes) out.unterminated_quote_line = record_line;
  if (any) {
    // Text after the last newline is a record cut short, unless it is a lone \r.
    out.last_terminated = in_quotes ? false : record.empty() && field.empty();
    end_record();
  }
  return out;
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  return parse_csv_records(text).rows;
}

}  // namespace llmprof::output
