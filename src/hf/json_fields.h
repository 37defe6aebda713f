// Typed reads of the keys of a JSON object file (config.json, tokenizer_config.json), every
// error a DataError naming the file and the key. Private to src/hf.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::hf::detail {

// The JSON object in path. Missing file, invalid JSON (with nlohmann's line and column) or a
// document that is not an object: DataError naming the file.
nlohmann::json read_json_object(const std::string& path);

// The keys of one object. A key that is absent or null takes the fallback and is noted in
// defaulted (when given); one of the wrong type throws.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object,
             std::string file,
             std::vector<std::string>* defaulted = nullptr)
      : object_(object), file_(std::move(file)), defaulted_(defaulted) {}

  // Present and not null.
  bool has(const char* key) const;
  // An integer that must be there; `needed` says what else must be, for the message.
  int64_t required_int(const char* key, const std::string& needed) const;
  std::optional<int64_t> optional_int(const char* key) const;
  int64_t integer(const char* key, int64_t fallback) const;
  double number(const char* key, double fallback) const;
  bool boolean(const char* key, bool fallback) const;
  std::string string(const char* key, const std::string& fallback) const;
  // An array of strings; absent: empty.
  std::vector<std::string> strings(const char* key) const;

  [[noreturn]] void fail(const char* key, const std::string& what) const;
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json* get(const char* key) const;  // nullptr when absent or null
  // get(), noting a default when absent and throwing when present but not is_type.
  const nlohmann::json* typed(const char* key,
                              bool (nlohmann::json::*is_type)() const noexcept,
                              const char* expected) const;
  void note_default(const char* key) const;

  const nlohmann::json& object_;
  std::string file_;
  std::vector<std::string>* defaulted_;
};

}  // namespace llmprof::hf::detail
