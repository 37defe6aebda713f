// Rendering a Document: Markdown (padded columns, numbers right-aligned), long-format CSV
// (table,row,column,value: one line per cell, raw numbers) and JSON (rundir::ReportDoc, written by
// rundir: rows as objects, raw numbers).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/report/document.h"
#include "llmprof/report/html.h"

namespace llmprof::report {

using output::csv_field;

namespace {

std::string escape_md(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out.push_back(c);
  }
  return out;
}

std::string md_cell(const Cell& c) {
  if (c.numeric && !c.value) return "n/a";
  return escape_md(c.text);
}

std::string pad(const std::string& s, size_t width, bool right) {
  // Width counts UTF-8 code points so "—" or "×" do not skew the columns.
  size_t len = 0;
  for (unsigned char ch : s) len += (ch & 0xC0) != 0x80;
  if (len >= width) return s;
  std::string fill(width - len, ' ');
  return right ? fill + s : s + fill;
}

size_t display_len(const std::string& s) {
  size_t len = 0;
  for (unsigned char ch : s) len += (ch & 0xC0) != 0x80;
  return len;
}

void render_table_md(const Table& t, std::string& out) {
  out += "## " + t.title + "\n\n";
  size_t n = t.columns.size();
  std::vector<size_t> width(n, 3);
  std::vector<bool> right(n, false);
  for (size_t c = 0; c < n; ++c)
    width[c] = std::max(width[c], display_len(escape_md(t.columns[c].title)));
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < n && c < row.size(); ++c) {
      width[c] = std::max(width[c], display_len(md_cell(row[c])));
      if (row[c].numeric) right[c] = true;
    }
  }
  out += "|";
  for (size_t c = 0; c < n; ++c)
    out += " " + pad(escape_md(t.columns[c].title), width[c], false) + " |";
  out += "\n|";
  for (size_t c = 0; c < n; ++c) {
    out += right[c] ? " " + std::string(width[c] - 1, '-') + ": |"
                    : " " + std::string(width[c], '-') + " |";
  }
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (size_t c = 0; c < n; ++c) {
      std::string cell = c < row.size() ? md_cell(row[c]) : "";
      out += " " + pad(cell, width[c], right[c]) + " |";
    }
    out += "\n";
  }
  if (t.rows.empty()) out += "\n(no rows)\n";
  for (const auto& note : t.notes) out += "\n" + note + "\n";
  out += "\n";
}

std::string render_markdown(const Document& doc) {
  std::string out = "# " + doc.title + "\n\n";
  for (const auto& line : doc.intro) out += line + "  \n";
  if (!doc.intro.empty()) out += "\n";
  if (!doc.warnings.empty()) {
    out += "## Warnings\n\n";
    for (const auto& w : doc.warnings) out += "- " + w.run + ": " + escape_md(w.text()) + "\n";
    out += fmt::format(
        "\nIncomplete: {}. The figures come from the whole rows and files that are left.\n\n",
        fmt::join(doc.incomplete_runs, ", "));
  }
  for (const auto& t : doc.tables) render_table_md(t, out);
  if (doc.findings_ran) {
    out += "## Findings\n\n";
    if (doc.findings.empty()) out += "No rule fired: no obvious change to suggest.\n";
    for (const auto& f : doc.findings) {
      out += fmt::format("- **{}** ({}, rule `{}`): {}\n  {}: {}\n", f.title, f.run, f.rule,
                         f.evidence, suggestion_label(f), f.suggestion);
      for (const auto& t : f.tried) out += fmt::format("  `--set {}` {}\n", t.set, tried_text(t));
    }
    out += "\n";
  }
  if (!doc.footer.empty()) {
    out += "---\n\n";
    for (const auto& line : doc.footer) out += line + "  \n";
  }
  return out;
}

std::string raw_value(const Cell& c) {
  if (!c.numeric) return c.text;
  if (!c.value) return "";
  return fmt::format("{}", *c.value);
}

std::string render_csv(const Document& doc) {
  std::string out = "table,row,column,value\n";
  for (const auto& t : doc.tables) {
    for (size_t r = 0; r < t.rows.size(); ++r) {
      for (size_t c = 0; c < t.columns.size() && c < t.rows[r].size(); ++c) {
        out += fmt::format("{},{},{},{}\n", csv_field(t.id), r, csv_field(t.columns[c].key),
                           csv_field(raw_value(t.rows[r][c])));
      }
    }
  }
  for (size_t i = 0; i < doc.warnings.size(); ++i) {
    const InputWarning& w = doc.warnings[i];
    out += fmt::format("warnings,{},run,{}\nwarnings,{},message,{}\n", i, csv_field(w.run), i,
                       csv_field(w.text()));
  }
  for (size_t i = 0; i < doc.findings.size(); ++i) {
    const Finding& f = doc.findings[i];
    std::vector<std::pair<std::string, std::string>> fields = {
        {"rule", f.rule},
        {"run", f.run},
        {"measured", fmt::format("{}", f.measured)},
        {"threshold", fmt::format("{}", f.threshold)},
        {"unit", f.unit},
        {"evidence", f.evidence},
        {"suggestion", f.suggestion},
        {"experiment", f.experiment ? "true" : "false"}};
    for (size_t k = 0; k < f.tried.size(); ++k) {
      fields.push_back({fmt::format("tried.{}.set", k), f.tried[k].set});
      fields.push_back({fmt::format("tried.{}.text", k), tried_text(f.tried[k])});
    }
    for (const auto& [k, v] : fields) out += fmt::format("findings,{},{},{}\n", i, k, csv_field(v));
  }
  return out;
}

std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// A finding's tried sets as the report's JSON gives them: figures raw, null when unknown.
rundir::ReportTried report_tried(const TriedSet& t) {
  rundir::ReportTried r;
  r.set = t.set;
  r.text = tried_text(t);
  r.figure = ab::figure_name(t.figure);
  r.steps = t.steps;
  r.error = t.error;
  r.time = t.time;
  if (const auto& c = t.comparison) {
    r.verdict = std::string(ab::verdict_name(c->verdict));
    r.repetitions = c->pairs;
    r.ratio_of_medians = finite(c->ratio_of_medians);
    if (c->interval) {
      r.ci_low = finite(c->interval->low);
      r.ci_high = finite(c->interval->high);
    }
  }
  return r;
}

rundir::ReportTable report_table(const Table& t) {
  rundir::ReportTable out;
  out.id = t.id;
  out.title = t.title;
  for (const Column& c : t.columns) out.columns.push_back(rundir::ReportColumn{c.key, c.title});
  for (const auto& row : t.rows) {
    std::map<std::string, rundir::ReportCell>& r = out.rows.emplace_back();
    // A key twice keeps its last column's cell, as a JSON object does.
    for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
      const Cell& cell = row[c];
      rundir::ReportCell& to = r[t.columns[c].key] = rundir::ReportCell{};
      if (!cell.numeric) {
        to.text = cell.text;
      } else if (cell.value) {
        to.number = finite(*cell.value);
      }
    }
  }
  out.notes = t.notes;
  if (!t.source.empty()) out.source = t.source;
  return out;
}

rundir::ReportFinding report_finding(const Finding& f) {
  rundir::ReportFinding out;
  out.rule = f.rule;
  out.run = f.run;
  out.title = f.title;
  out.measured = finite(f.measured);
  out.threshold = finite(f.threshold);
  out.unit = f.unit;
  out.evidence = f.evidence;
  out.suggestion = f.suggestion;
  out.sets = f.sets;
  out.experiment = f.experiment;
  for (const TriedSet& t : f.tried) out.tried.push_back(report_tried(t));
  return out;
}

}  // namespace

rundir::ReportDoc report_doc(const Document& doc) {
  rundir::ReportDoc d;
  d.title = doc.title;
  d.intro = doc.intro;
  d.warnings = doc.warnings;
  d.incomplete_runs = doc.incomplete_runs;
  for (const Table& t : doc.tables) d.tables.push_back(report_table(t));
  for (const Finding& f : doc.findings) d.findings.push_back(report_finding(f));
  d.footer = doc.footer;
  return d;
}

std::string suggestion_label(const Finding& f) {
  if (f.tried.empty()) return f.experiment ? "Experiment (not yet tried)" : "Suggested";
  for (const auto& t : f.tried) {
    if (!t.comparison || t.comparison->verdict != ab::Verdict::kSlower) return "Suggested";
  }
  return "Not advised (tried: slower)";
}

Format parse_format(const std::string& name) {
  if (name == "md" || name == "markdown") return Format::kMarkdown;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  if (name == "html") return Format::kHtml;
  throw UsageError("--format: '" + name + "' (expected md, csv, json or html)");
}

std::string render(const Document& doc, Format format) {
  switch (format) {
    case Format::kMarkdown:
      return render_markdown(doc);
    case Format::kCsv:
      return render_csv(doc);
    case Format::kJson:
      return rundir::report_doc_text(report_doc(doc));
    case Format::kHtml:
      return render_html(doc, HtmlExtras{});
  }
  return {};
}

std::string format_number(double value, int significant) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  if (value == 0) return "0";
  double mag = std::floor(std::log10(std::fabs(value)));
  if (mag < -4) return fmt::format("{:.{}g}", value, significant);
  int decimals = std::clamp(significant - 1 - static_cast<int>(mag), 0, 10);
  return fmt::format("{:.{}f}", value, decimals);
}

Cell text_cell(std::string text) { return Cell{false, std::nullopt, std::move(text)}; }

Cell number_cell(std::optional<double> value, int significant) {
  return Cell{true, value, value ? format_number(*value, significant) : ""};
}

Cell count_cell(std::optional<double> count) {
  if (!count) return Cell{true, std::nullopt, ""};
  bool whole = std::floor(*count) == *count && std::fabs(*count) < 1e15;
  return Cell{true, count, whole ? fmt::format("{:.0f}", *count) : format_number(*count)};
}

Cell ms_cell(std::optional<double> ms) { return number_cell(ms, 4); }

Cell percent_cell(std::optional<double> fraction) {
  if (!fraction) return Cell{true, std::nullopt, ""};
  double pct = *fraction * 100;
  return Cell{true, fraction, fmt::format(std::fabs(pct) < 1 ? "{:.2f}%" : "{:.1f}%", pct)};
}

Cell bytes_cell(std::optional<double> bytes) {
  if (!bytes) return Cell{true, std::nullopt, ""};
  double b = *bytes;
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  std::string text = b >= kGiB   ? fmt::format("{:.2f} GiB", b / kGiB)
                     : b >= kMiB ? fmt::format("{:.1f} MiB", b / kMiB)
                     : b >= kKiB ? fmt::format("{:.1f} KiB", b / kKiB)
                                 : fmt::format("{:.0f} B", b);
  return Cell{true, bytes, text};
}

Cell ratio_cell(std::optional<double> ratio) {
  if (!ratio) return Cell{true, std::nullopt, ""};
  return Cell{true, ratio, fmt::format("{:.2f}x", *ratio)};
}

}  // namespace llmprof::report
