// Safetensors, Hugging Face's tensor file: a reader over a read-only memory map that validates the
// whole header before any tensor is touched, and a writer that lays a file out byte for byte as
// the reference implementation does (huggingface/safetensors, safetensors/src/tensor.rs).
//
// File: u64 little-endian N | N bytes of JSON header | data. The header is one object,
//   {"__metadata__": {"format": "pt"},
//    "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
// with offsets in bytes from the start of the data; the tensors tile the data exactly (no
// overlaps, no holes), in C order, little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmprof::hf {

// Element types, in the order of the reference implementation's Dtype enum, which its writer sorts
// by (larger first). The values are that order and stable.
enum class DType : int {
  kBool = 0,
  kF4 = 1,
  kF6E2M3 = 2,
  kF6E3M2 = 3,
  kU8 = 4,
  kI8 = 5,
  kF8E5M2 = 6,
  kF8E4M3 = 7,
  kF8E8M0 = 8,
  kF8E4M3Fnuz = 9,
  kF8E5M2Fnuz = 10,
  kI16 = 11,
  kU16 = 12,
  kF16 = 13,
  kBF16 = 14,
  kI32 = 15,
  kU32 = 16,
  kF32 = 17,
  kC64 = 18,
  kF64 = 19,
  kI64 = 20,
  kU64 = 21,
};

// The name the header uses ("F32", "BF16", "F8_E4M3").
const char* dtype_name(DType dtype);
// The DType a header name stands for; nullopt for a name the format does not define.
std::optional<DType> dtype_from_name(std::string_view name);
// Bits per element: 4 (F4), 6 (F6_*), 8, 16, 32 or 64.
int dtype_bits(DType dtype);

// One tensor of an open file. data points into the mapping: valid while its SafetensorsFile lives
// (a move keeps it valid).
struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;  // [] is a scalar; a 0 anywhere makes an empty tensor
  int64_t numel = 0;
  uint64_t begin_offset = 0;  // data_offsets[0], bytes from the start of the data
  const uint8_t* data = nullptr;
  size_t size_bytes = 0;  // data_offsets[1] - data_offsets[0] == numel * bits / 8
};

// An open .safetensors file. open() maps it read-only and checks the header and every offset, so
// that no later access reads outside the file; a malformed file throws DataError naming the file
// and, where one is at fault, the tensor. (A file truncated by someone else while mapped can still
// raise SIGBUS: the mapping cannot guard against that.)
class SafetensorsFile {
 public:
  // Maps and validates path. Missing or malformed file: DataError; mmap/read failure: IoError.
  static SafetensorsFile open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  // Tensor names in the order of their data in the file.
  std::vector<std::string> names() const;
  // All tensors, in the order of their data.
  const std::vector<TensorView>& tensors() const { return tensors_; }
  // The tensor of that name, or nullptr.
  const TensorView* find(const std::string& name) const;
  // The tensor of that name; absent: DataError naming the file.
  const TensorView& at(const std::string& name) const;
  // The tensor as float (to_float below); errors name the file.
  std::vector<float> read_float(const std::string& name) const;
  // The "__metadata__" map (transformers writes {"format": "pt"}); empty when the file has none.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool has_metadata() const { return has_metadata_; }
  // N, the header's length in bytes (padding included); the data starts at 8 + N.
  uint64_t header_size_bytes() const { return header_size_bytes_; }
  uint64_t file_size_bytes() const { return map_size_; }

 private:
  SafetensorsFile() = default;
  void release();

  std::string path_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  uint64_t header_size_bytes_ = 0;
  std::vector<TensorView> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
  bool has_metadata_ = false;
};

// Exact IEEE binary16 -> binary32 (subnormals, infinities, NaN payloads and -0 kept).
float half_to_float(uint16_t bits);
// Exact bfloat16 -> binary32 (bf16 is the top half of a binary32).
float bf16_to_float(uint16_t bits);

// The elements of an F32, F16 or BF16 tensor as float, exactly. Other dtypes throw DataError
// naming the tensor and its dtype.
std::vector<float> to_float(const TensorView& tensor);

// One tensor to write: bytes are the elements in C order, little-endian, owned by the caller.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t size_bytes = 0;
};

using SafetensorsMetadata = std::map<std::string, std::string>;

// The first 8 + N bytes of the file write_safetensors writes: the length and the header, tensors
// in the reference writer's order (dtype descending, then name), padded with spaces to a multiple
// of 8. Throws DataError (naming file and tensor) for a tensor whose bytes do not match its shape,
// a duplicate or reserved name.
std::string safetensors_header(const std::vector<TensorToWrite>& tensors,
                               const std::optional<SafetensorsMetadata>& metadata,
                               const std::string& file = "");

// Writes a .safetensors file laid out as the reference writer lays out the same tensors and
// metadata (nullopt: no "__metadata__" key; the reference writes an empty map as {}), through
// path.tmp and a rename. Bad input: DataError; I/O failure: IoError; never a half-written path.
void write_safetensors(const std::string& path,
                       const std::vector<TensorToWrite>& tensors,
                       const std::optional<SafetensorsMetadata>& metadata = std::nullopt);

}  // namespace llmprof::hf
