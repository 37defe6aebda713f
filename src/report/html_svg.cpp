// Inlining a chart's SVG document into the HTML page: one pass over its tags that drops the XML
// prolog, DOCTYPE and comments, prefixes ids (several charts of gnuplot share "gpPt0".."gpPt14"),
// and refuses anything that would run or fetch: scripts, event handlers, foreign content, and
// href/src/url() that point anywhere but the chart's own ids or a data: URI.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "llmprof/report/html.h"

namespace llmprof::report {

namespace {

// Keeps the first reason: the one a reader should see.
void refuse(std::string& refused, std::string reason) {
  if (refused.empty()) refused = std::move(reason);
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '_' || c == '-' ||
         c == '.';
}

// Elements that run code, embed other documents or pull in resources by themselves.
bool forbidden_element(const std::string& name) {
  static const char* kForbidden[] = {"script", "foreignobject", "iframe", "object", "embed",
                                     "audio",  "video",         "link",   "meta",   "base",
                                     "style",  "animate",       "set",    "handler"};
  for (const char* f : kForbidden) {
    if (name == f) return true;
  }
  return false;
}

// A reference that stays inside the page: "#id" or a data: URI.
bool local_reference(std::string_view value) {
  std::string v = lower(value);
  v.erase(0, v.find_first_not_of(" \t\n\r"));
  return starts_with(v, "#") || starts_with(v, "data:");
}

// Rewrites "url(#x)" to "url(#<prefix>x)"; sets refused for any other url(...).
std::string rewrite_urls(const std::string& value,
                         const std::string& prefix,
                         std::string& refused) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t at = lower(value).find("url(", pos);
    if (at == std::string::npos) break;
    size_t open = at + 4;
    size_t close = value.find(')', open);
    std::string inner =
        value.substr(open, close == std::string::npos ? std::string::npos : close - open);
    std::string bare = inner;
    bare.erase(std::remove_if(bare.begin(), bare.end(),
                              [](char c) { return c == '\'' || c == '"' || c == ' '; }),
               bare.end());
    out += value.substr(pos, open - pos);
    if (starts_with(bare, "#")) {
      out += "#" + prefix + bare.substr(1);
    } else {
      if (!starts_with(lower(bare), "data:")) refuse(refused, "it references url(" + inner + ")");
      out += inner;
    }
    if (close == std::string::npos) return out;
    pos = close;
  }
  return out + value.substr(pos);
}

// One start or end tag from text[i] == '<'; appends its rewritten form to out and returns the
// index past it. Sets refused when the tag may run or fetch something.
size_t rewrite_tag(const std::string& text,
                   size_t i,
                   const std::string& prefix,
                   std::string& out,
                   std::string& refused) {
  size_t j = i + 1;
  bool closing = j < text.size() && text[j] == '/';
  if (closing) ++j;
  size_t name_start = j;
  while (j < text.size() && is_name_char(text[j])) ++j;
  std::string name = text.substr(name_start, j - name_start);
  if (forbidden_element(lower(name))) refuse(refused, "it holds a <" + name + "> element");
  out += closing ? "</" + name : "<" + name;
  while (j < text.size() && text[j] != '>') {
    char c = text[j];
    if (std::isspace(static_cast<unsigned char>(c)) || c == '/') {
      out.push_back(c);
      ++j;
      continue;
    }
    size_t attr_start = j;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) &&
           text[j] != '=' && text[j] != '>' && text[j] != '/')
      ++j;
    std::string attr = text.substr(attr_start, j - attr_start);
    if (attr.empty()) {  // a stray character: copy it rather than loop
      out.push_back(text[j++]);
      continue;
    }
    size_t k = j;
    while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
    std::string value;
    char quote = '"';
    bool has_value = k < text.size() && text[k] == '=';
    if (has_value) {
      ++k;
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      if (k < text.size() && (text[k] == '"' || text[k] == '\'')) {
        quote = text[k];
        size_t end = text.find(quote, k + 1);
        if (end == std::string::npos) end = text.size();
        value = text.substr(k + 1, end - k - 1);
        j = std::min(end + 1, text.size());
      } else {
        size_t end = k;
        while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end])) &&
               text[end] != '>')
          ++end;
        value = text.substr(k, end - k);
        j = end;
      }
    }
    std::string key = lower(attr);
    if (starts_with(key, "on")) refuse(refused, "it has an event handler (" + attr + ")");
    if (key == "id") value = prefix + value;
    bool is_ref =
        key == "href" || key == "src" || (key.size() > 5 && key.substr(key.size() - 5) == ":href");
    if (is_ref) {
      if (!local_reference(value)) {
        refuse(refused, "it references " + value);
      } else if (starts_with(value, "#")) {
        value = "#" + prefix + value.substr(1);
      }
    }
    if (value.find("url(") != std::string::npos || value.find("URL(") != std::string::npos)
      value = rewrite_urls(value, prefix, refused);
    if (lower(value).find("javascript:") != std::string::npos)
      refuse(refused, "it holds javascript:");
    out += attr;
    if (has_value) out += std::string("=") + quote + value + quote;
  }
  if (j < text.size()) {
    out.push_back('>');
    ++j;
  }
  return j;
}

}  // namespace

InlineSvg inline_svg(const std::string& svg_text, const std::string& id_prefix) {
  // The root element: the first "<svg" followed by a space or '>' (the prolog, DOCTYPE and any
  // comment before it are dropped).
  size_t start = std::string::npos;
  for (size_t at = svg_text.find("<svg"); at != std::string::npos;
       at = svg_text.find("<svg", at + 4)) {
    char next = at + 4 < svg_text.size() ? svg_text[at + 4] : '\0';
    if (std::isspace(static_cast<unsigned char>(next)) || next == '>') {
      start = at;
      break;
    }
  }
  size_t end = svg_text.rfind("</svg>");
  if (start == std::string::npos || end == std::string::npos || end < start) {
    return {"", "it has no <svg> element"};
  }
  end += 6;
  if (lower(svg_text.substr(start, end - start)).find("@import") != std::string::npos) {
    return {"", "it has an @import"};
  }
  std::string out;
  out.reserve(end - start + 1024);
  std::string refused;
  size_t i = start;
  while (i < end) {
    if (svg_text[i] != '<') {
      size_t next = svg_text.find('<', i);
      next = std::min(next == std::string::npos ? end : next, end);
      out.append(svg_text, i, next - i);
      i = next;
      continue;
    }
    std::string_view rest(svg_text.data() + i, end - i);
    if (starts_with(rest, "<!--")) {
      size_t close = svg_text.find("-->", i + 4);
      i = close == std::string::npos ? end : close + 3;
    } else if (starts_with(rest, "<![CDATA[")) {
      size_t close = svg_text.find("]]>", i);
      size_t stop = close == std::string::npos ? end : close + 3;
      out.append(svg_text, i, stop - i);
      i = stop;
    } else if (starts_with(rest, "<?") || starts_with(rest, "<!")) {
      size_t close = svg_text.find('>', i);
      i = close == std::string::npos ? end : close + 1;
    } else {
      i = rewrite_tag(svg_text, i, id_prefix, out, refused);
    }
    if (!refused.empty()) return {"", refused};
  }
  return {out, ""};
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace llmprof::report
