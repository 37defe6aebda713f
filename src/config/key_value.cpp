// Typing, range checks and YAML printing of single key values. One set of rules serves files
// (YAML and JSON) and --set overrides: ints must be integral ("1e3" and "3.0" are, "3.5" is not),
// floats are decimal, bools follow yaml-cpp (true/false/yes/no/on/off), quoted text is a string.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "key_spec.h"
#include "llmprof/base/printable.h"
#include "llmprof/error.h"

namespace llmprof::config::detail {
namespace {

// True when s is a decimal number: [+-] digits [. digits] [e [+-] digits], at least one digit.
bool is_decimal_number(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

// The decimal number in s, or nullopt when s is not one or does not fit a finite double.
std::optional<double> parse_double(std::string_view s) {
  if (!is_decimal_number(s)) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Outcome of reading an integer: a value, "not a number at all", or "a number but not integral".
struct IntParse {
  std::optional<int64_t> value;
  bool numeric = false;  // the text is a number (maybe non-integral or too large)
};

// Parses an integer written as digits or as an integral decimal ("3.0", "1e3").
IntParse parse_int(std::string_view s) {
  IntParse out;
  std::string_view digits = s;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (!digits.empty() && end == digits.data() + digits.size()) {
    out.numeric = true;
    if (ec == std::errc()) out.value = v;
    return out;
  }
  std::optional<double> d = parse_double(s);
  if (!d) return out;
  out.numeric = true;
  // 2^63 is exactly representable; anything at or beyond it does not fit.
  if (std::floor(*d) == *d && std::fabs(*d) < 9223372036854775808.0) {
    out.value = static_cast<int64_t>(*d);
  }
  return out;
}

// The value of a bool scalar under yaml-cpp's rules, or nullopt.
std::optional<bool> parse_bool(const std::string& s) {
  bool v = false;
  if (YAML::convert<bool>::decode(YAML::Node(s), v)) return v;
  return std::nullopt;
}

// "an integer", "a number", ... for "expected ..." messages.
std::string expected_text(KeyType type) {
  switch (type) {
    case KeyType::kInt:
      return "an integer";
    case KeyType::kFloat:
      return "a number";
    case KeyType::kBool:
      return "true or false";
    case KeyType::kString:
      return "a string";
    case KeyType::kEnum:
      return "a string";
  }
  return "a value";
}

// Throws the ConfigError for a bad value of spec, located at origin.
[[noreturn]] void fail(const KeySpec& spec, const std::string& what, const Origin& origin) {
  std::string where = describe(origin);
  throw ConfigError(spec.path + ": " + what + (where.empty() ? "" : " " + where), origin.file,
                    spec.path, origin.mark.line, origin.mark.column);
}

// Throws the "expected X, got Y" error.
[[noreturn]] void fail_type(const KeySpec& spec, const DocNode& value, const Origin& origin) {
  fail(spec, "expected " + expected_text(spec.type) + ", got " + describe_node(value), origin);
}

// The double-quoted YAML form of s, escaping quotes, backslashes and control characters.
std::string double_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string describe(const Origin& origin) {
  if (!origin.set_arg.empty()) return "(from --set " + printable(origin.set_arg) + ")";
  if (origin.file.empty()) return "";
  if (origin.mark.line <= 0) return "(" + origin.file + ")";
  return fmt::format("({} line {}, col {})", origin.file, origin.mark.line, origin.mark.column);
}

std::string describe_node(const DocNode& node) {
  switch (node.kind) {
    case DocNode::Kind::kNull:
      return "an empty value";
    case DocNode::Kind::kMap:
      return "a mapping";
    case DocNode::Kind::kSeq:
      return "a sequence";
    case DocNode::Kind::kScalar:
      return node.quoted ? "the string \"" + printable(node.text) + "\""
                         : "'" + printable(node.text) + "'";
  }
  return "?";
}

std::string yaml_string(const std::string& s) {
  bool plain = !s.empty() && s != "null" && s != "Null" && s != "NULL";
  plain = plain && (std::isalnum(static_cast<unsigned char>(s.front())) || s.front() == '_' ||
                    s.front() == '/' || s.front() == '.');
  for (char c : s) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                      c == '/' || c == '-' || c == '+');
  }
  return plain ? s : double_quoted(s);
}

std::string format_value(const KeySpec& spec, const Config& cfg) {
  Config& c = const_cast<Config&>(cfg);  // the accessors only read here
  switch (spec.type) {
    case KeyType::kInt:
      return std::to_string(spec.int_ref(c));
    case KeyType::kFloat:
      return fmt::format("{}", spec.float_ref(c));  // shortest round-trip
    case KeyType::kBool:
      return spec.bool_ref(c) ? "true" : "false";
    case KeyType::kString:
      return yaml_string(spec.string_ref(c));
    case KeyType::kEnum: {
      const auto i = static_cast<size_t>(spec.enum_get(cfg));
      return yaml_string(i < spec.choices.size() ? spec.choices[i] : "?");
    }
  }
  return "";
}

std::optional<std::string> range_problem(const KeySpec& spec, const Config& cfg) {
  Config& c = const_cast<Config&>(cfg);  // the accessors only read here
  switch (spec.type) {
    case KeyType::kInt: {
      int64_t v = spec.int_ref(c);
      if (v < spec.int_min || v > spec.int_max) {
        return fmt::format("{} is out of range {}", v, range_text(spec));
      }
      return std::nullopt;
    }
    case KeyType::kFloat: {
      double v = spec.float_ref(c);
      bool low = spec.min_open ? !(v > spec.float_min) : !(v >= spec.float_min);
      bool high = spec.max_open ? !(v < spec.float_max) : !(v <= spec.float_max);
      if (low || high) return fmt::format("{} is out of range {}", v, range_text(spec));
      return std::nullopt;
    }
    case KeyType::kEnum: {
      // Names are checked when parsed; only a value cast from an int in code gets here.
      const int v = spec.enum_get(cfg);
      if (v >= 0 && static_cast<size_t>(v) < spec.choices.size()) return std::nullopt;
      return fmt::format("value {} is not one of {}", v, range_text(spec));
    }
    case KeyType::kBool:
    case KeyType::kString:
      return std::nullopt;
  }
  return std::nullopt;
}

void assign_value(const KeySpec& spec, Config& cfg, const DocNode& value, const Origin& origin) {
  using Kind = DocNode::Kind;
  bool is_text = value.kind == Kind::kScalar;
  bool is_plain = is_text && !value.quoted;
  Config next = cfg;  // stored here first, so a rejected value leaves cfg untouched
  switch (spec.type) {
    case KeyType::kInt: {
      IntParse p = is_plain ? parse_int(value.text) : IntParse{};
      if (!p.numeric) fail_type(spec, value, origin);
      if (!p.value) {
        // A number but no int64: either integral and too large (or too long for a double),
        // or fractional like 3.5.
        std::optional<double> d = parse_double(value.text);
        bool integral = !d || std::floor(*d) == *d;
        if (!integral) {
          fail(spec, "expected an integer, got '" + printable(value.text) + "'", origin);
        }
        fail(spec,
             printable(value.text) + (spec.int_max == kNoIntMax ? " does not fit a 64-bit integer"
                                                     : " is out of range " + range_text(spec)),
             origin);
      }
      spec.int_ref(next) = *p.value;
      break;
    }
    case KeyType::kFloat: {
      std::optional<double> d = is_plain ? parse_double(value.text) : std::nullopt;
      if (!d && is_plain && is_decimal_number(value.text)) {
        // A number, but beyond a double (1e400) or below its smallest step (1e-400).
        const size_t e = value.text.find_first_of("eE");
        const bool tiny = e != std::string::npos && value.text[e + 1] == '-';
        fail(spec,
             printable(value.text) + (tiny ? " is too small for a double (below ~4.9e-324)"
                                : " is out of range " + range_text(spec) +
                                      " (beyond the largest double, ~1.8e308)"),
             origin);
      }
      if (!d) fail_type(spec, value, origin);
      spec.float_ref(next) = *d;
      break;
    }
    case KeyType::kBool: {
      std::optional<bool> b = is_plain ? parse_bool(value.text) : std::nullopt;
      if (!b) fail_type(spec, value, origin);
      spec.bool_ref(next) = *b;
      break;
    }
    case KeyType::kString:
    case KeyType::kEnum: {
      // An empty value (`name:` or null) is the empty string; numbers and bools keep their text.
      if (value.kind != Kind::kNull && !is_text) fail_type(spec, value, origin);
      const std::string text = is_text ? value.text : std::string();
      if (spec.type == KeyType::kString) {
        spec.string_ref(next) = text;
        break;
      }
      if (spec.path == "device" && text.rfind("cuda:", 0) == 0) {  // cuda:N, torch's spelling
        const std::string_view digits = std::string_view(text).substr(5);
        int64_t n = -1;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
            n < 0 || n > 1023) {
          fail(spec, printable(text) + ": the device ordinal after 'cuda:' must be 0..1023",
               origin);
        }
        next.device = Device{DeviceKind::kCuda, n};
        break;
      }
      const auto it = std::find(spec.choices.begin(), spec.choices.end(), text);
      if (it == spec.choices.end()) fail(spec, unknown_name(text, spec.choices), origin);
      spec.enum_set(next, static_cast<int>(it - spec.choices.begin()));
      break;
    }
  }
  if (auto problem = range_problem(spec, next)) fail(spec, *problem, origin);
  cfg = std::move(next);
}

}  // namespace llmprof::config::detail
