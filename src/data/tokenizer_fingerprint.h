// What a tokenizer's fingerprint is made of: SHA-256 (FIPS 180-4) and the little-endian
// length-prefixed fields of the canonical text it hashes. Private to the data concern.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace llmprof::data::detail {

// SHA-256 of bytes, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

// Appends v as 4 little-endian bytes.
void append_u32(std::string& out, uint32_t v);

// Appends s's size (append_u32), then s: fields that cannot run into each other.
void append_field(std::string& out, std::string_view s);

}  // namespace llmprof::data::detail
