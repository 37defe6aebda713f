// render_html: the Document as one self-contained page. Static HTML carries every figure (the
// page reads whole with scripts off); a few lines of inline script sort a table by the column
// clicked, numbers by the raw value in data-value. The Content-Security-Policy lets the page
// load nothing at all: no network, only its own inline style, script and data: images.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "llmprof/report/html.h"

namespace llmprof::report {

namespace {

const char* kCss = R"css(
:root{color-scheme:light}
body{margin:0 auto;max-width:1500px;padding:10px 22px 32px;color:#1d2127;background:#fff;
font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
h1{font-size:20px;margin:6px 0 2px}
h2{font-size:15px;margin:0 0 1px}
h3{font-size:13px;margin:8px 0 2px}
section{margin:14px 0 0;padding-top:8px;border-top:1px solid #e2e5e9}
p{margin:2px 0}
.intro{color:#3c434b}
.src{color:#6b737c;font-size:11.5px;margin:0 0 4px}
.src code{font-size:11px}
.note{color:#434a52;font-size:12px;max-width:130ch;margin:4px 0 0}
.pair{display:flex;flex-wrap:wrap;gap:10px 28px;align-items:flex-start}
.tbl{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;font-size:12.5px;font-variant-numeric:tabular-nums}
th,td{padding:2px 9px;border-bottom:1px solid #eceef1;text-align:left;white-space:nowrap}
th{background:#f4f5f7;font-weight:600;border-bottom:1px solid #cdd2d8;cursor:pointer;
user-select:none}
th.num,td.num{text-align:right}
td.na{color:#9aa0a7}
tbody tr:nth-child(even){background:#fafbfc}
tbody tr:hover{background:#edf3fa}
th[aria-sort=ascending]::after{content:" \25B2";font-size:9px}
th[aria-sort=descending]::after{content:" \25BC";font-size:9px}
figure.chart{margin:0;flex:1 1 620px;max-width:880px;min-width:320px}
figure.chart svg{width:100%;height:auto;display:block;border:1px solid #eceef1}
figcaption{color:#6b737c;font-size:11.5px}
code{font:11.5px ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
background:#f2f3f5;padding:0 3px;border-radius:3px}
pre{font:11.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
background:#f7f8f9;border:1px solid #e2e5e9;padding:6px 8px;margin:4px 0;overflow:auto;
max-height:420px}
details{margin:3px 0}
summary{cursor:pointer}
nav ol{margin:4px 0 0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:1px 14px;
font-size:12px}
a{color:#0b5cad;text-decoration:none}
a:hover{text-decoration:underline}
.warn{background:#fff8e5;border:1px solid #efd27f;padding:6px 10px}
.findings li{margin:0 0 6px}
.findings .tried{font-style:italic}
.meta{color:#6b737c}
.hint{color:#6b737c;font-size:11.5px}
footer{color:#4d545c;font-size:12px;margin-top:22px;padding-top:8px;border-top:1px solid #cdd2d8}
@media print{nav,.hint{display:none}pre{max-height:none}}
)css";

// Sorts a table by the clicked column: numbers by data-value (unknown last either way), text in
// natural order; a second click reverses. Marks the page so a test can see the script ran.
const char* kScript = R"js(
(function(){
  function key(td,num){
    if(!td)return null;
    if(num){var v=td.getAttribute('data-value');return v===null?null:parseFloat(v);}
    return td.textContent;
  }
  function sortBy(th){
    var table=th.closest('table'),body=table.tBodies[0],i=th.cellIndex;
    var num=th.getAttribute('data-type')==='num';
    var asc=th.getAttribute('aria-sort')!=='ascending';
    table.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});
    th.setAttribute('aria-sort',asc?'ascending':'descending');
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(r,s){
      var a=key(r.cells[i],num),b=key(s.cells[i],num);
      if(a===null||b===null)return (a===null)-(b===null);
      var c=num?a-b:a.localeCompare(b,undefined,{numeric:true});
      return asc?c:-c;
    });
    rows.forEach(function(r){body.appendChild(r);});
  }
  document.querySelectorAll('table.sortable th').forEach(function(th){
    th.tabIndex=0;
    th.addEventListener('click',function(){sortBy(th);});
    th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sortBy(th);}});
  });
  document.querySelectorAll('.hint').forEach(function(h){h.hidden=false;});
  document.documentElement.setAttribute('data-sort-ready','1');
})();
)js";

// Escaped text with `code` spans (as the Markdown report writes them) turned into <code>.
std::string rich(const std::string& text) {
  std::string escaped = html_escape(text);
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = escaped.find('`', pos);
    size_t close = open == std::string::npos ? open : escaped.find('`', open + 1);
    if (close == std::string::npos) break;
    out += escaped.substr(pos, open - pos) + "<code>" + escaped.substr(open + 1, close - open - 1) +
           "</code>";
    pos = close + 1;
  }
  return out + escaped.substr(pos);
}

// An id attribute value: letters, digits, '-', '_', '.'; anything else becomes '-'.
std::string anchor(const std::string& prefix, const std::string& name) {
  std::string out = prefix;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out.push_back(ok ? c : '-');
  }
  return out;
}

// Ids unique on the page: a repeated one gets "-2", "-3", ...
class Anchors {
 public:
  std::string take(const std::string& prefix, const std::string& name) {
    std::string id = anchor(prefix, name);
    int n = ++count_[id];
    return n == 1 ? id : fmt::format("{}-{}", id, n);
  }

 private:
  std::map<std::string, int> count_;
};

struct Section {
  std::string id, title;
};

// Opens a table's section: heading, source, and the table as the first item of a row (.pair)
// that the charts beside it join; finish_table closes it.
void render_table(const Table& t, const std::string& id, std::string& out) {
  out += fmt::format("<section id=\"{}\" class=\"table\" data-table=\"{}\">\n<h2>{}</h2>\n", id,
                     html_escape(t.id), html_escape(t.title));
  if (!t.source.empty()) out += "<p class=\"src\">from: " + rich(t.source) + "</p>\n";
  out += "<div class=\"pair\">\n<div class=\"tbl\">\n";
  size_t n = t.columns.size();
  std::vector<bool> numeric(n, false);
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < n && c < row.size(); ++c) numeric[c] = numeric[c] || row[c].numeric;
  }
  out += fmt::format("<table class=\"sortable\" id=\"{}-table\">\n<thead><tr>", id);
  for (size_t c = 0; c < n; ++c) {
    out += fmt::format("<th scope=\"col\" data-key=\"{}\" data-type=\"{}\"{} title=\"{}\">{}</th>",
                       html_escape(t.columns[c].key), numeric[c] ? "num" : "text",
                       numeric[c] ? " class=\"num\"" : "", html_escape(t.columns[c].key),
                       html_escape(t.columns[c].title));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t c = 0; c < n; ++c) {
      if (c >= row.size()) {
        out += "<td></td>";
        continue;
      }
      const Cell& cell = row[c];
      if (!cell.numeric) {
        out += "<td>" + html_escape(cell.text) + "</td>";
      } else if (!cell.value) {
        out += "<td class=\"num na\">n/a</td>";
      } else if (!std::isfinite(*cell.value)) {
        out += "<td class=\"num\">" + html_escape(cell.text) + "</td>";
      } else {
        out += fmt::format("<td class=\"num\" data-value=\"{}\">{}</td>", *cell.value,
                           html_escape(cell.text));
      }
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (t.rows.empty()) out += "<p class=\"note\">(no rows)</p>\n";
  out += "</div>\n";
}

// Closes what render_table opened, after the charts beside the table: notes go under both, so a
// narrow table keeps its charts beside it.
void finish_table(const Table& t, std::string& out) {
  out += "</div>\n";
  for (const auto& note : t.notes) out += "<p class=\"note\">" + rich(note) + "</p>\n";
  out += "</section>\n";
}

void render_chart(const HtmlChart& chart, size_t index, std::string& out) {
  InlineSvg svg = inline_svg(chart.svg, fmt::format("c{}-", index));
  out += fmt::format("<figure class=\"chart\" id=\"{}\" data-chart=\"{}\">\n",
                     anchor("chart-", chart.name), html_escape(chart.name));
  if (svg.svg.empty()) {
    out += "<p class=\"note\">chart left out: " + html_escape(svg.refused) + "</p>\n";
  } else {
    // gnuplot titles every chart "Gnuplot" (the tooltip over it): name the chart instead.
    const std::string kGnuplotTitle = "<title>Gnuplot</title>";
    size_t at = svg.svg.find(kGnuplotTitle);
    if (at != std::string::npos) {
      svg.svg.replace(at, kGnuplotTitle.size(), "<title>" + html_escape(chart.name) + "</title>");
    }
    out += svg.svg + "\n";
  }
  std::string caption = chart.name + " (gnuplot, as `llmprof plot` draws it)";
  if (!chart.warning.empty()) caption += "; gnuplot said: " + chart.warning;
  out += "<figcaption>" + rich(caption) + "</figcaption>\n</figure>\n";
}

void render_warnings(const Document& doc, std::string& out) {
  out += "<section id=\"warnings\" class=\"warn\">\n<h2>Warnings</h2>\n<ul>\n";
  for (const auto& w : doc.warnings) {
    out += "<li>" + html_escape(w.run) + ": " + html_escape(w.text()) + "</li>\n";
  }
  out += fmt::format(
      "</ul>\n<p>Incomplete: {}. The figures come from the whole rows and files that are "
      "left.</p>\n</section>\n",
      html_escape(fmt::format("{}", fmt::join(doc.incomplete_runs, ", "))));
}

void render_findings(const Document& doc, std::string& out) {
  out += "<section id=\"findings\">\n<h2>Findings</h2>\n";
  if (doc.findings.empty()) out += "<p>No rule fired: no obvious change to suggest.</p>\n";
  out += "<ol class=\"findings\">\n";
  for (const auto& f : doc.findings) {
    out += fmt::format(
        "<li data-rule=\"{}\"><strong>{}</strong> <span class=\"meta\">({}, rule "
        "<code>{}</code>)</span><br>{}<br><span class=\"meta\">measured {} vs threshold {}{}"
        "</span><br>{}: {}",
        html_escape(f.rule), html_escape(f.title), html_escape(f.run), html_escape(f.rule),
        rich(f.evidence), format_number(f.measured), format_number(f.threshold),
        f.unit.empty() ? "" : " (" + html_escape(f.unit) + ")", html_escape(suggestion_label(f)),
        rich(f.suggestion));
    for (const auto& t : f.tried) {
      out += fmt::format("<br><span class=\"tried\" data-verdict=\"{}\"><code>--set {}</code> {}"
                         "</span>",
                         t.comparison ? ab::verdict_name(t.comparison->verdict) : "not_measured",
                         html_escape(t.set), html_escape(tried_text(t)));
    }
    out += "</li>\n";
  }
  out += "</ol>\n</section>\n";
}

void render_files(const std::vector<HtmlFile>& files, std::string& out) {
  out += "<section id=\"inputs\">\n<h2>Config and environment of the inputs</h2>\n";
  for (const auto& f : files) {
    out += "<details><summary><code>" + html_escape(f.path) + "</code>";
    if (!f.note.empty()) out += " <span class=\"meta\">(" + html_escape(f.note) + ")</span>";
    out += "</summary>\n";
    if (!f.text.empty() || f.note.empty()) out += "<pre>" + html_escape(f.text) + "</pre>\n";
    out += "</details>\n";
  }
  out += "</section>\n";
}

// Which drawn charts go beside which table; the rest, and the skipped, go under "Charts".
struct ChartPlaces {
  std::map<std::string, std::vector<size_t>> beside;  // table id -> chart indices
  std::vector<size_t> unplaced;
  bool skipped_any = false;
  bool section = false;  // a "Charts" section
};

ChartPlaces place_charts(const Document& doc, const HtmlCharts& extra) {
  ChartPlaces p;
  const std::vector<HtmlChart>& charts = extra.charts;
  for (size_t i = 0; i < charts.size(); ++i) {
    if (!charts[i].skipped.empty() || charts[i].svg.empty()) continue;
    std::string table = chart_table_id(charts[i].name, doc);
    (table.empty() ? p.unplaced : p.beside[table]).push_back(i);
  }
  for (const auto& c : charts) p.skipped_any |= !c.skipped.empty();
  p.section = !p.unplaced.empty() || p.skipped_any || !extra.left_out.empty();
  return p;
}

// The contents in page order; table_ids gets each table's anchor.
std::vector<Section> page_sections(const Document& doc,
                                   const HtmlExtras& extras,
                                   bool charts_section,
                                   std::vector<std::string>& table_ids) {
  Anchors anchors;
  std::vector<Section> sections;
  if (!doc.warnings.empty()) sections.push_back({anchors.take("", "warnings"), "Warnings"});
  for (const auto& t : doc.tables) {
    table_ids.push_back(anchors.take("t-", t.id));
    sections.push_back({table_ids.back(), t.title});
  }
  if (doc.findings_ran) sections.push_back({anchors.take("", "findings"), "Findings"});
  if (charts_section) sections.push_back({anchors.take("", "charts"), "Charts"});
  if (!extras.files.empty())
    sections.push_back({anchors.take("", "inputs"), "Config and environment"});
  return sections;
}

// The head, the title, the intro lines and the contents.
void render_top(const Document& doc, const std::vector<Section>& sections, std::string& out) {
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"generator\" content=\"llmprof report\">\n";
  out += "<title>" + html_escape(doc.title) + "</title>\n<style>" + kCss + "</style>\n</head>\n";
  out += "<body>\n<header>\n<h1>" + html_escape(doc.title) + "</h1>\n";
  for (const auto& line : doc.intro) out += "<p class=\"intro\">" + rich(line) + "</p>\n";
  out += "<p class=\"hint\" hidden>Click a column title to sort the table by it.</p>\n";
  out += "</header>\n<nav id=\"contents\" aria-label=\"Contents\"><ol>\n";
  for (const auto& s : sections) {
    out += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", s.id, html_escape(s.title));
  }
  out += "</ol></nav>\n";
}

// The charts placed beside no table, and those not drawn with the reason.
void render_charts_section(const HtmlCharts& extra, const ChartPlaces& places, std::string& out) {
  out += "<section id=\"charts\">\n<h2>Charts</h2>\n";
  if (!extra.left_out.empty()) {
    out += "<p class=\"note\">Charts left out: " + rich(extra.left_out) + "</p>\n";
  }
  if (!places.unplaced.empty()) {
    out += "<div class=\"pair\">\n";
    for (size_t c : places.unplaced) render_chart(extra.charts[c], c, out);
    out += "</div>\n";
  }
  if (places.skipped_any) {
    out += "<h3>Not drawn</h3>\n<ul>\n";
    for (const auto& c : extra.charts) {
      if (c.skipped.empty()) continue;
      out += "<li><code>" + html_escape(c.name) + "</code>: " + rich(c.skipped) + "</li>\n";
    }
    out += "</ul>\n";
  }
  out += "</section>\n";
}

}  // namespace

std::string render_html(const Document& doc, const HtmlExtras& extras) {
  const std::vector<HtmlChart>& charts = extras.charts.charts;
  ChartPlaces places = place_charts(doc, extras.charts);
  std::vector<std::string> table_ids;
  const std::vector<Section> sections = page_sections(doc, extras, places.section, table_ids);
  std::string out;
  render_top(doc, sections, out);
  if (!doc.warnings.empty()) render_warnings(doc, out);
  for (size_t i = 0; i < doc.tables.size(); ++i) {
    const Table& t = doc.tables[i];
    render_table(t, table_ids[i], out);
    auto it = places.beside.find(t.id);
    if (it != places.beside.end()) {
      for (size_t c : it->second) render_chart(charts[c], c, out);
      places.beside.erase(it);  // a repeated table id gets its charts once
    }
    finish_table(t, out);
  }
  if (doc.findings_ran) render_findings(doc, out);
  if (places.section) render_charts_section(extras.charts, places, out);
  if (!extras.files.empty()) render_files(extras.files, out);
  if (!doc.footer.empty()) {
    out += "<footer>\n";
    for (const auto& line : doc.footer) out += "<p>" + rich(line) + "</p>\n";
    out += "</footer>\n";
  }
  out += std::string("<script>") + kScript + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace llmprof::report
