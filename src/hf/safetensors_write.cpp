// The safetensors writer, laid out as the reference writer lays out the same input (prepare() and
// Metadata's Serialize in huggingface/safetensors safetensors/src/tensor.rs, which the Python
// save_file and transformers' save_pretrained go through):
//   - tensors sorted by dtype, descending in the Dtype enum's order (U64, I64, F64, C64, F32, ...,
//     BF16, F16, ...), then by name, bytewise ascending; data laid out in that order, no gaps;
//   - the header is compact JSON (no spaces): "__metadata__" first when given, then each tensor
//     as {"dtype":..,"shape":[..],"data_offsets":[begin,end]} in that order; strings escaped as
//     serde_json does (", \, control characters; UTF-8 kept as is);
//   - the header is padded with spaces (0x20) to a multiple of 8 bytes, N counts the padding.
// One departure: the reference keeps metadata in a hash map, so with two or more keys its order
// is unspecified; here metadata keys are sorted.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "llmprof/error.h"
#include "llmprof/hf/safetensors.h"
#include "llmprof/output/run_dir.h"
#include "safetensors_detail.h"

namespace llmprof::hf {

namespace {

struct Prepared {
  std::string header;                       // 8-byte N, then the padded JSON
  std::vector<const TensorToWrite*> order;  // the order of the data
};

// "cannot write safetensors file 'x'", or what safetensors_header says without a file.
std::string cannot(const std::string& file) {
  return file.empty() ? "cannot lay out a safetensors header"
                      : fmt::format("cannot write safetensors file '{}'", file);
}

[[noreturn]] void fail(const std::string& file, const std::string& name, const std::string& what) {
  throw DataError(fmt::format("{}: tensor '{}': {}", cannot(file), name, what));
}

std::string json_text(const nlohmann::json& value, const std::string& file) {
  try {
    return value.dump();
  } catch (const nlohmann::json::exception&) {
    throw DataError(cannot(file) + ": a name or metadata string is not valid UTF-8");
  }
}

Prepared prepare(const std::vector<TensorToWrite>& tensors,
                 const std::optional<SafetensorsMetadata>& metadata,
                 const std::string& file) {
  Prepared p;
  std::set<std::string_view> seen;
  for (const TensorToWrite& t : tensors) {
    if (t.name == "__metadata__") fail(file, t.name, "the name is reserved for the metadata");
    if (!seen.insert(t.name).second) fail(file, t.name, "the name is given twice");
    detail::TensorSizeResult size = detail::tensor_size(t.dtype, t.shape);
    if (!size.size) fail(file, t.name, size.error);
    if (size.size->bytes != t.size_bytes) {
      fail(file, t.name,
           fmt::format("{} bytes given, {} {} takes {}", t.size_bytes, dtype_name(t.dtype),
                       detail::shape_text(t.shape), size.size->bytes));
    }
    if (t.data == nullptr && t.size_bytes > 0) fail(file, t.name, "no data given");
    p.order.push_back(&t);
  }
  std::sort(p.order.begin(), p.order.end(), [](const TensorToWrite* a, const TensorToWrite* b) {
    if (a->dtype != b->dtype) return static_cast<int>(a->dtype) > static_cast<int>(b->dtype);
    return a->name < b->name;  // std::string compares bytes as unsigned char, as Rust's str does
  });

  std::string json = "{";
  if (metadata) json += "\"__metadata__\":" + json_text(nlohmann::json(*metadata), file);
  uint64_t offset = 0;
  for (const TensorToWrite* t : p.order) {
    if (json.size() > 1) json += ',';
    json += fmt::format(R"({}:{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})",
                        json_text(nlohmann::json(t->name), file), dtype_name(t->dtype),
                        fmt::join(t->shape, ","), offset, offset + t->size_bytes);
    offset += t->size_bytes;
  }
  json += '}';
  json.resize((json.size() + 7) / 8 * 8, ' ');  // the data starts 8-byte aligned
  if (json.size() > detail::kMaxHeaderBytes) {
    throw DataError(
        fmt::format("{}: the header would be {} bytes, "
                    "over the format's limit of {}",
                    cannot(file), json.size(), detail::kMaxHeaderBytes));
  }
  uint64_t n = json.size();
  p.header.resize(8);
  for (int i = 0; i < 8; ++i)
    p.header[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  p.header += json;
  return p;
}

}  // namespace

std::string safetensors_header(const std::vector<TensorToWrite>& tensors,
                               const std::optional<SafetensorsMetadata>& metadata,
                               const std::string& file) {
  return prepare(tensors, metadata, file).header;
}

void write_safetensors(const std::string& path,
                       const std::vector<TensorToWrite>& tensors,
                       const std::optional<SafetensorsMetadata>& metadata) {
  Prepared p = prepare(tensors, metadata, path);
  std::vector<std::string_view> parts;
  parts.reserve(p.order.size() + 1);
  parts.emplace_back(p.header);
  for (const TensorToWrite* t : p.order) {
    parts.emplace_back(static_cast<const char*>(t->data), t->size_bytes);
  }
  output::write_file_atomic_parts(path, parts);
}

}  // namespace llmprof::hf
