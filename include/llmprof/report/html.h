// The report as one self-contained HTML page: every table of the Document (sortable by column
// with a few lines of inline script, readable with scripts off), its notes, findings, warnings,
// charts inlined as SVG beside the tables they illustrate, and each input's config and
// environment files. Nothing on the page is fetched: no external script, style, font or image.
#pragma once

#include <string>
#include <vector>

#include "llmprof/report/document.h"

namespace llmprof::report {

struct ReportOptions;

// One chart of the page, as `llmprof plot` names it ("04_phases").
struct HtmlChart {
  std::string name;
  std::string svg;      // the image file's text (an SVG document); empty when skipped
  std::string skipped;  // why it was not drawn; empty when drawn
  std::string warning;  // what the drawing program said; may be empty
};

// The charts of a page, or why there are none.
struct HtmlCharts {
  std::vector<HtmlChart> charts;
  std::string left_out;  // why charts were left out (e.g. gnuplot missing); empty when drawn
};

// A text file of an input shown on the page (config.yaml, env.json, sweep.json).
struct HtmlFile {
  std::string path;  // as read, e.g. "runs/a/config.yaml"
  std::string text;  // its content (truncated past kHtmlFileMaxBytes, with a note)
  std::string note;  // "not present", "truncated ..."; empty when whole
};

// Input files longer than this are cut on the page, with a note.
inline constexpr size_t kHtmlFileMaxBytes = 256 * 1024;

struct HtmlExtras {
  HtmlCharts charts;
  std::vector<HtmlFile> files;
};

// The page. Each SVG is inlined with its XML prolog and DOCTYPE stripped and its ids made unique;
// a chart that references anything outside the page (or holds a script) is left out with a note.
std::string render_html(const Document& doc, const HtmlExtras& extras);

// The config and environment files of each input: config.yaml and env.json of a run, sweep.json
// of a sweep, in input order then --compare's. A missing file is listed with note "not present".
std::vector<HtmlFile> read_input_files(const ReportOptions& options);

// The id of the table a chart illustrates (the first table whose id matches the chart's
// subject, e.g. 04_phases -> "phases.<first run>"); empty when no table of doc matches.
std::string chart_table_id(const std::string& chart_name, const Document& doc);

// Result of preparing an SVG document for inlining.
struct InlineSvg {
  std::string svg;      // the <svg> element, ids prefixed; empty when refused
  std::string refused;  // why it cannot be inlined; empty when fine
};

// Strips the XML prolog, DOCTYPE and comments, prefixes every id (and each "#id" reference) with
// id_prefix, and refuses an SVG holding a script, an event handler or a reference to anything
// but its own ids and data: URIs.
InlineSvg inline_svg(const std::string& svg_text, const std::string& id_prefix);

// Text with &, <, >, " and ' replaced by entities.
std::string html_escape(const std::string& text);

}  // namespace llmprof::report
