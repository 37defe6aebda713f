// printable(): user-provided text (a config value, a CSV cell, a file read as YAML) made safe to
// put in an error message. A message never carries raw bytes to the terminal: control bytes are
// escaped and long text is cut with its length given. Header only, like the rest of base.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace llmprof {

// text with \n, \r and \t as the two characters "\n", "\r", "\t", and every other byte below 0x20
// or from 0x7f up as "\xHH"; text longer than max_bytes keeps its first max_bytes bytes followed by
// "... (N bytes)". max_bytes 0 keeps the whole text. Backslashes are left as they are.
inline std::string printable(std::string_view text, size_t max_bytes = 80) {
  static constexpr char kHex[] = "0123456789abcdef";
  const bool cut = max_bytes != 0 && text.size() > max_bytes;
  const std::string_view kept = cut ? text.substr(0, max_bytes) : text;
  std::string out;
  out.reserve(kept.size() + 16);
  for (char ch : kept) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  if (cut) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace llmprof
