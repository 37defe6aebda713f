#include "llmprof/output/csv.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"

namespace llmprof::output {

CsvWriter::CsvWriter(const std::string& path,
                     const std::vector<std::string>& columns,
                     CsvMode mode)
    : path_(path),
      file_path_(mode == CsvMode::kWhole ? temporary_path(path) : path),
      mode_(mode),
      num_columns_(columns.size()) {
  fd_ = ::open(file_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot create '" + file_path_ + "': " + std::strerror(errno));
  row_.reserve(1024);
  for (const auto& c : columns) add(std::string_view(c));
  end_row();
}

CsvWriter::~CsvWriter() {
  if (fd_ < 0) return;
  ::close(fd_);  // rows already reached the OS with write(2): nothing is buffered here
  if (mode_ == CsvMode::kWhole) ::unlink(file_path_.c_str());  // not committed
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
  if (failed_ || fd_ < 0) {
    throw IoError("'" + file_path_ + "': an earlier write failed or the file was committed; no "
                  "further row");
  }
  row_.push_back('\n');
  const int err = write_all(fd_, row_);
  if (err != 0) {
    // Cut the file back to its last whole row: a reader never sees half of this one.
    failed_ = true;
    const bool cut = ::ftruncate(fd_, whole_bytes_) == 0;
    throw IoError(fmt::format("cannot append a row to '{}': {}{}", file_path_, std::strerror(err),
                              cut ? "" : " (and the partial row could not be cut off)"));
  }
  whole_bytes_ += static_cast<int64_t>(row_.size());
  row_.clear();
  fields_in_row_ = 0;
}

void CsvWriter::commit() {
  if (mode_ != CsvMode::kWhole || fd_ < 0 || failed_) {
    throw IoError("'" + path_ + "': commit() is for a whole-file writer whose rows all landed");
  }
  const int fd = fd_;
  fd_ = -1;
  commit_temporary(fd, file_path_, path_);
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
