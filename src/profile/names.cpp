#include <cstring>

#include "llmprof/profile/events.h"

namespace llmprof::profile {

namespace {
uint64_t fnv1a(const char* s, size_t* len) {
  uint64_t h = 1469598103934665603ULL;
  size_t n = 0;
  for (; s[n] != '\0'; ++n) {
    h ^= static_cast<unsigned char>(s[n]);
    h *= 1099511628211ULL;
  }
  *len = n;
  return h == 0 ? 1 : h;
}
}  // namespace

NameTable::NameTable(size_t slots, size_t arena_bytes)
    : hashes_(slots, 0), slot_ids_(slots, 0), arena_(arena_bytes) {
  offsets_.reserve(slots);
  lengths_.reserve(slots);
  intern("(other)");
}

uint32_t NameTable::intern(const char* name) {
  size_t len = 0;
  const uint64_t h = fnv1a(name, &len);
  const size_t mask = hashes_.size() - 1;  // slots is a power of two
  for (size_t i = h & mask, probes = 0; probes < hashes_.size(); i = (i + 1) & mask, ++probes) {
    if (hashes_[i] == 0) {
      // New name: claim the slot if the arena and the table have room (keep the table half empty).
      if (arena_used_ + len > arena_.size() || (count_ + 1) * 2 > hashes_.size()) {
        overflowed_ = true;
        return 0;
      }
      std::memcpy(arena_.data() + arena_used_, name, len);
      offsets_.push_back(static_cast<uint32_t>(arena_used_));
      lengths_.push_back(static_cast<uint16_t>(len));
      arena_used_ += len;
      hashes_[i] = h;
      slot_ids_[i] = static_cast<uint32_t>(count_);
      return static_cast<uint32_t>(count_++);
    }
    if (hashes_[i] == h) {
      const uint32_t id = slot_ids_[i];
      if (lengths_[id] == len && std::memcmp(arena_.data() + offsets_[id], name, len) == 0) {
        return id;
      }
    }
  }
  overflowed_ = true;
  return 0;
}

std::string_view NameTable::name(uint32_t id) const {
  if (id >= count_) return "(other)";
  return {arena_.data() + offsets_[id], lengths_[id]};
}

}  // namespace llmprof::profile
