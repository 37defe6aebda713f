// The one wording of an unknown enum name, for the loader (files, --set) and parse_enum alike.
#include "llmprof/config/enums.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "key_spec.h"
#include "llmprof/base/printable.h"
#include "llmprof/error.h"

namespace llmprof::config::detail {

std::string unknown_name(const std::string& text, const std::vector<std::string>& names) {
  // Short values get no guess: "gpu" is one edit from "cpu" but meant "cuda".
  const std::string hint = text.size() >= 4 ? did_you_mean(text, names) : std::string();
  return fmt::format("'{}' is not one of {}{}", printable(text), fmt::join(names, "|"), hint);
}

void throw_unknown_name(std::string_view key,
                        std::string_view text,
                        const std::string_view* names,
                        size_t count) {
  const std::vector<std::string> all(names, names + count);
  throw ConfigError(fmt::format("{}: {}", key, unknown_name(std::string(text), all)), "",
                    std::string(key));
}

}  // namespace llmprof::config::detail
