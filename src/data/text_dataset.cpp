// read_text_dataset: one pass over the (gunzipped) file, per format, each row either a record or a
// counted BadRow with its 1-based line and reason. CSV follows RFC 4180: a field may be quoted,
// a quote inside a quoted field is doubled, and a quoted field may span lines (the record's line
// is where it starts). TSV is the same reader with TAB as delimiter and no quoting.
#include "llmprof/data/text_dataset.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "rng.h"
#include "unicode.h"

namespace llmprof::data {

namespace {

using config::DataFormat;

constexpr size_t kMaxQuotedChars = 200;  // longest header/value quoted in a message

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shorten(std::string_view s) {
  return printable(s, kMaxQuotedChars);
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\v\f") == std::string_view::npos;
}

// The format kAuto resolves to: by extension, after stripping .gz.
DataFormat resolve_format(const std::string& path, DataFormat format) {
  if (format != DataFormat::kAuto) return format;
  std::string name = lower(path);
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  if (ends_with(name, ".jsonl") || ends_with(name, ".json")) return DataFormat::kJsonl;
  if (ends_with(name, ".csv")) return DataFormat::kCsv;
  if (ends_with(name, ".tsv")) return DataFormat::kTsv;
  return DataFormat::kText;
}

// Builds the dataset: rows go in through good() / bad().
class Reader {
 public:
  Reader(TextDataset* ds, const TextReadOptions& opt) : ds_(ds), opt_(opt) {}

  void good(std::string text, int32_t label, int64_t line) {
    ++ds_->rows_read;
    ds_->records.push_back(TextRecord{std::move(text), label, line});
  }
  void bad(int64_t line, std::string reason) {
    ++ds_->rows_read;
    ++ds_->bad_rows;
    if (ds_->bad_row_examples.size() < kMaxBadRowExamples) {
      ds_->bad_row_examples.push_back(BadRow{line, std::move(reason)});
    }
  }

  // Why text (the value of `what`) is not valid UTF-8, or empty when it is.
  static std::string utf8_problem(std::string_view text, const std::string& what) {
    const size_t at = detail::find_invalid_utf8(text);
    if (at == std::string_view::npos) return {};
    return "invalid UTF-8 at byte " + std::to_string(at) + " of " + what;
  }

  // Calls fn(line_view, line_number) for every non-blank line of text (CR of CRLF dropped).
  template <typename Fn>
  static void for_each_line(std::string_view text, Fn fn) {
    int64_t line = 0;
    for (size_t pos = 0; pos < text.size();) {
      const void* nl = std::memchr(text.data() + pos, '\n', text.size() - pos);
      const size_t end =
          nl ? static_cast<size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
      std::string_view l = text.substr(pos, end - pos);
      pos = end + 1;
      ++line;
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      if (!is_blank(l)) fn(l, line);
    }
  }

  void read_text(std::string_view text) {
    for_each_line(text, [&](std::string_view l, int64_t line) {
      std::string problem = utf8_problem(l, "the line");
      if (!problem.empty()) return bad(line, std::move(problem));
      good(std::string(l), -1, line);
    });
  }

  void read_jsonl(std::string_view text) {
    for_each_line(text, [&](std::string_view l, int64_t line) {
      std::string problem = utf8_problem(l, "the line");
      if (!problem.empty()) return bad(line, std::move(problem));
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(l);
      } catch (const nlohmann::json::exception& e) {
        return bad(line, "malformed JSON: " + printable(e.what(), 200));
      }
      if (!j.is_object())
        return bad(line, std::string("not a JSON object (got ") + j.type_name() + ")");
      std::string joined;
      for (size_t k = 0; k < opt_.jsonl_fields.size(); ++k) {
        const std::string& field = opt_.jsonl_fields[k];
        const auto it = j.find(field);
        if (it == j.end()) return bad(line, "missing field '" + field + "'");
        if (!it->is_string()) {
          return bad(line, "field '" + field + "' is not a string (got " + it->type_name() + ")");
        }
        if (k > 0) joined += '\n';
        joined += it->get_ref<const std::string&>();
      }
      good(std::move(joined), -1, line);
    });
  }

  void read_delimited(const std::string& path, std::string_view text, char delim, bool quoting);

 private:
  // Parses label text into [0, num_labels); false when it is not such an integer.
  bool parse_label(std::string_view s, int32_t* label) const {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return false;
    if (v < 0 || v >= opt_.num_labels) return false;
    *label = static_cast<int32_t>(v);
    return true;
  }

  TextDataset* ds_;
  const TextReadOptions& opt_;
};

// One record of a delimited file starting at *pos; *line is the current 1-based line and
// advances over the newlines consumed. Fills fields; returns an error ("" when well-formed).
// A malformed record is skipped to the end of its line (or, for an unclosed quote, of the file).
std::string next_record(std::string_view text,
                        size_t* pos,
                        int64_t* line,
                        char delim,
                        bool quoting,
                        std::vector<std::string>* fields) {
  fields->clear();
  size_t p = *pos;
  const size_t n = text.size();
  std::string error;
  auto skip_line = [&] {
    const size_t nl = text.find('\n', p);
    p = nl == std::string_view::npos ? n : nl;
  };
  while (true) {
    std::string& field = fields->emplace_back();
    if (quoting && p < n && text[p] == '"') {
      const int64_t open_line = *line;
      ++p;
      while (true) {
        const size_t q = text.find('"', p);
        if (q == std::string_view::npos) {
          error = "unclosed quoted field (opened on line " + std::to_string(open_line) +
                  ", runs to the end of the file)";
          *line += std::count(text.begin() + p, text.end(), '\n');
          p = n;
          break;
        }
        field.append(text.substr(p, q - p));
        *line += std::count(text.begin() + p, text.begin() + q, '\n');
        p = q + 1;
        if (p < n && text[p] == '"') {  // "" inside a quoted field is one "
          field += '"';
          ++p;
          continue;
        }
        break;
      }
      if (error.empty() && p < n && text[p] != delim && text[p] != '\n' &&
          !(text[p] == '\r' && (p + 1 == n || text[p + 1] == '\n'))) {
        error =
            "unexpected character after a closing quote in field " + std::to_string(fields->size());
        skip_line();
      }
    } else {
      size_t end = p;
      while (end < n && text[end] != delim && text[end] != '\n') ++end;
      std::string_view v = text.substr(p, end - p);
      if (end < n && text[end] == '\n' && !v.empty() && v.back() == '\r') v.remove_suffix(1);
      if (end == n && !v.empty() && v.back() == '\r') v.remove_suffix(1);
      if (quoting && v.find('"') != std::string_view::npos) {
        error = "quote inside unquoted field " + std::to_string(fields->size()) +
                " (RFC 4180: quote the field and double the quote)";
        skip_line();
      } else {
        field.assign(v);
        p = end;
      }
    }
    if (!error.empty() || p >= n || text[p] == '\n') break;
    if (text[p] == '\r') ++p;  // CR of CRLF after a closing quote
    if (p < n && text[p] == delim) {
      ++p;
      continue;
    }
    break;
  }
  if (p < n && text[p] == '\n') {
    ++p;
    ++*line;
  }
  *pos = p;
  return error;
}

void Reader::read_delimited(const std::string& path,
                            std::string_view text,
                            char delim,
                            bool quoting) {
  const char* kind = quoting ? "CSV" : "TSV";
  std::vector<std::string> fields;
  std::vector<std::string> header;
  int64_t header_line = 0;
  size_t text_col = 0;
  size_t label_col = 0;
  const bool labelled = !opt_.label_column.empty();
  size_t pos = 0;
  int64_t line = 1;
  while (pos < text.size()) {
    const int64_t start_line = line;
    const std::string error = next_record(text, &pos, &line, delim, quoting, &fields);
    if (error.empty() && fields.size() == 1 && is_blank(fields[0])) continue;  // a blank line
    if (header_line == 0) {
      if (!error.empty()) {
        throw DataError(path + ":" + std::to_string(start_line) + ": malformed " + kind +
                        " header: " + error);
      }
      header = fields;
      header_line = start_line;
      std::string joined;
      for (size_t k = 0; k < header.size(); ++k)
        joined += (k ? std::string(1, delim) : "") + header[k];
      auto column = [&](const std::string& name, const char* role) {
        const auto it = std::find(header.begin(), header.end(), name);
        if (it == header.end()) {
          throw DataError(path + ":" + std::to_string(header_line) + ": no " + role + " column '" +
                          name + "' in the header '" + shorten(joined) + "'");
        }
        return static_cast<size_t>(it - header.begin());
      };
      text_col = column(opt_.text_column, "text");
      if (labelled) label_col = column(opt_.label_column, "label");
      continue;
    }
    if (!error.empty()) {
      bad(start_line, "malformed " + std::string(kind) + ": " + error);
      continue;
    }
    if (fields.size() != header.size()) {
      bad(start_line, "expected " + std::to_string(header.size()) + " fields as the header, got " +
                          std::to_string(fields.size()));
      continue;
    }
    std::string problem = utf8_problem(fields[text_col], "column '" + opt_.text_column + "'");
    if (!problem.empty()) {
      bad(start_line, std::move(problem));
      continue;
    }
    int32_t label = -1;
    if (labelled && !parse_label(fields[label_col], &label)) {
      bad(start_line, "label '" + shorten(fields[label_col]) + "' is not an integer in [0, " +
                          std::to_string(opt_.num_labels) + ")");
      continue;
    }
    good(std::move(fields[text_col]), label, start_line);
  }
  if (header_line == 0)
    throw DataError(path + ": no header line (the file holds only blank lines)");
}

// Keeps a seeded random max_records of the records, in file order: a partial Fisher-Yates
// shuffle of the indices picks them (portable draws, rng.h), then they are sorted back.
void keep_subset(TextDataset* ds, int64_t max_records, uint64_t seed) {
  const auto n = static_cast<int64_t>(ds->records.size());
  if (max_records <= 0 || max_records >= n) return;
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < max_records; ++i) {
    const auto j =
        i + static_cast<int64_t>(detail::uniform_below(rng, static_cast<uint64_t>(n - i)));
    std::swap(idx[static_cast<size_t>(i)], idx[static_cast<size_t>(j)]);
  }
  idx.resize(static_cast<size_t>(max_records));
  std::sort(idx.begin(), idx.end());
  std::vector<TextRecord> kept;
  kept.reserve(idx.size());
  for (const int64_t i : idx) kept.push_back(std::move(ds->records[static_cast<size_t>(i)]));
  ds->records = std::move(kept);
}

}  // namespace

TextDataset read_text_dataset(const std::string& path, const TextReadOptions& opt) {
  TextDataset ds;
  ds.path = path;
  ds.format = resolve_format(path, opt.format);
  const std::string format_name(config::name(ds.format));
  const bool delimited = ds.format == DataFormat::kCsv || ds.format == DataFormat::kTsv;
  if (!opt.label_column.empty() && !delimited) {
    throw DataError(path + ": label column '" + opt.label_column + "' given for a " + format_name +
                    " file; labels are read from csv/tsv files only");
  }
  if (!opt.label_column.empty() && opt.num_labels < 1) {
    throw DataError(path + ": label column '" + opt.label_column + "' needs num_labels >= 1, got " +
                    std::to_string(opt.num_labels));
  }
  if (delimited && opt.text_column.empty()) throw DataError(path + ": text_column is empty");
  if (ds.format == DataFormat::kJsonl && opt.jsonl_fields.empty()) {
    throw DataError(path + ": no jsonl_fields to read");
  }
  if (opt.max_records < 0) {
    throw DataError(path + ": max_records must be >= 0 (0 = all), got " +
                    std::to_string(opt.max_records));
  }
  const std::string bytes = read_file_maybe_gzip(path);
  std::string_view text = bytes;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
  Reader reader(&ds, opt);
  switch (ds.format) {
    case DataFormat::kText:
      reader.read_text(text);
      break;
    case DataFormat::kJsonl:
      reader.read_jsonl(text);
      break;
    case DataFormat::kCsv:
      reader.read_delimited(path, text, ',', true);
      break;
    case DataFormat::kTsv:
      reader.read_delimited(path, text, '\t', false);
      break;
    case DataFormat::kAuto:  // resolved above
      break;
  }
  if (ds.records.empty()) {
    if (ds.rows_read == 0) throw DataError(path + ": no data rows (" + format_name + " format)");
    const BadRow& first = ds.bad_row_examples.front();
    throw DataError(path + ": no usable rows: all " + std::to_string(ds.bad_rows) + " " +
                    format_name + " rows are bad; the first, line " + std::to_string(first.line) +
                    ": " + first.reason);
  }
  keep_subset(&ds, opt.max_records, opt.seed);
  return ds;
}

}  // namespace llmprof::data
