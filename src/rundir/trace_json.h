// The Chrome trace's text conventions, shared by the host events (trace.cpp) and the GPU events
// (trace_gpu.cpp) of the one trace writer: JSON string escaping and microsecond times with 3
// decimals. Private to src/rundir.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

namespace llmprof::rundir::detail {

// JSON string escaping for names (op and kernel names may hold quotes in theory).
inline void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
    } else {
      out.push_back(c);
    }
  }
}

inline std::string escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  append_escaped(out, s);
  return out;
}

// A time on the trace's axis: microseconds since origin_ns.
inline double trace_us(int64_t t_ns, int64_t origin_ns) {
  return static_cast<double>(t_ns - origin_ns) * 1e-3;
}

}  // namespace llmprof::rundir::detail
