// Byte counts as a reader takes them in: "173.9 MiB", and where the exact figure matters (a gate
// on peak memory) "173.9 MiB (182321152 bytes)". Binary units (1 KiB = 1024 bytes). Header only,
// like the rest of base.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace llmprof {

// bytes in the largest binary unit it reaches: "512 B", "1.5 KiB", "173.9 MiB", "1.07 GiB".
inline std::string bytes_text(double bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  const double b = std::fabs(bytes);
  if (b >= kGiB) return fmt::format("{:.2f} GiB", bytes / kGiB);
  if (b >= kMiB) return fmt::format("{:.1f} MiB", bytes / kMiB);
  if (b >= kKiB) return fmt::format("{:.1f} KiB", bytes / kKiB);
  return fmt::format("{:.0f} B", bytes);
}

// bytes_text with the count in parentheses, rounded to a whole byte: "173.9 MiB (182321152
// bytes)"; below 1 KiB the count alone ("512 bytes").
inline std::string bytes_text_exact(double bytes) {
  if (std::fabs(bytes) < 1024.0) return fmt::format("{:.0f} bytes", bytes);
  return fmt::format("{} ({:.0f} bytes)", bytes_text(bytes), bytes);
}

}  // namespace llmprof
