// The safetensors reader: map the file, parse and check the whole header, then hand out views.
// Checks, in order (each failure a DataError naming the file, and the tensor where one is at
// fault): at least 8 bytes; N at most 100 MB and within the file; the header JSON, an object,
// without duplicate keys; __metadata__ a map of strings; each entry {dtype: known name, shape:
// [non-negative ints], data_offsets: [begin, end]} with end - begin == numel * dtype size and end
// within the data; sorted by offset, each tensor starting where the previous one ended (an
// overlap or a hole names both tensors) and the last ending at the end of the file. These are the
// reference reader's rules (safetensors/src/tensor.rs read_metadata, Metadata::validate).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>

#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/hf/safetensors.h"
#include "safetensors_detail.h"

namespace llmprof::hf {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw DataError(fmt::format("safetensors file '{}': {}", path, what));
}

[[noreturn]] void fail_tensor(const std::string& path,
                              const std::string& name,
                              const std::string& what) {
  throw DataError(
      fmt::format("safetensors file '{}': tensor '{}': {}", path, printable(name), what));
}

// Parses the header, refusing a key repeated within one object (the format forbids it; a JSON
// parser would keep the last silently).
json parse_header(const std::string& path, const char* begin, const char* end) {
  std::vector<std::set<std::string>> keys_per_object;
  std::string duplicate;
  auto check = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys_per_object.emplace_back();
    if (event == json::parse_event_t::object_end) keys_per_object.pop_back();
    if (event == json::parse_event_t::key && duplicate.empty() &&
        !keys_per_object.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json header;
  try {
    header = json::parse(begin, end, check);
  } catch (const json::exception& e) {
    fail(path, fmt::format("the header is not valid JSON ({})", printable(e.what(), 200)));
  }
  if (!header.is_object()) fail(path, "the header is not a JSON object");
  if (!duplicate.empty()) fail(path, fmt::format("the header repeats the key '{}'", duplicate));
  return header;
}

uint64_t offset_at(const std::string& path, const std::string& name, const json& offsets, int i) {
  const json& v = offsets[static_cast<size_t>(i)];
  if (!v.is_number_unsigned()) {
    fail_tensor(path, name,
                fmt::format("data_offsets[{}] is {}, expected a non-negative integer", i,
                            printable_json(v)));
  }
  return v.get<uint64_t>();
}

// One header entry to a view (data still unset), checking its fields and sizes.
TensorView parse_entry(const std::string& path, const std::string& name, const json& entry) {
  if (!entry.is_object()) {
    fail_tensor(path, name, fmt::format("the entry is {}, expected an object", entry.type_name()));
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) fail_tensor(path, name, fmt::format("no '{}' in its entry", key));
  }
  TensorView t;
  t.name = name;
  const json& dtype = entry["dtype"];
  if (!dtype.is_string()) fail_tensor(path, name, "dtype is not a string");
  std::optional<DType> d = dtype_from_name(dtype.get<std::string>());
  if (!d) fail_tensor(path, name, fmt::format("unknown dtype {}", printable_json(dtype)));
  t.dtype = *d;

  const json& shape = entry["shape"];
  if (!shape.is_array()) fail_tensor(path, name, "shape is not an array");
  for (const json& dim : shape) {
    if (!dim.is_number_integer()) {
      fail_tensor(path, name, fmt::format("shape {} holds a non-integer", printable_json(shape)));
    }
    if (!dim.is_number_unsigned()) {
      fail_tensor(path, name,
                  fmt::format("shape {} has a negative dimension", printable_json(shape)));
    }
    const uint64_t u = dim.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) {
      fail_tensor(path, name,
                  fmt::format("shape {} has a dimension past 2^63", printable_json(shape)));
    }
    t.shape.push_back(static_cast<int64_t>(u));
  }
  detail::TensorSizeResult size = detail::tensor_size(t.dtype, t.shape);
  if (!size.size) fail_tensor(path, name, size.error);
  t.numel = static_cast<int64_t>(size.size->numel);

  const json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    fail_tensor(path, name,
                fmt::format("data_offsets is {}, expected [begin, end]", printable_json(offsets)));
  }
  t.begin_offset = offset_at(path, name, offsets, 0);
  const uint64_t end = offset_at(path, name, offsets, 1);
  if (end < t.begin_offset) {
    fail_tensor(path, name,
                fmt::format("data_offsets {} end before they begin", printable_json(offsets)));
  }
  if (end - t.begin_offset != size.size->bytes) {
    fail_tensor(path, name,
                fmt::format("data_offsets {} span {} bytes, but {} {} needs {}",
                            printable_json(offsets), end - t.begin_offset, dtype_name(t.dtype),
                            detail::shape_text(t.shape), size.size->bytes));
  }
  t.size_bytes = static_cast<size_t>(size.size->bytes);
  return t;
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const json& value) {
  if (!value.is_object()) fail(path, "__metadata__ is not an object of strings");
  std::map<std::string, std::string> out;
  for (auto m = value.begin(); m != value.end(); ++m) {
    if (!m.value().is_string()) {
      fail(path, fmt::format("__metadata__ '{}' is {}, expected a string", printable(m.key()),
                             printable_json(m.value())));
    }
    out[m.key()] = m.value().get<std::string>();
  }
  return out;
}

// Checks that the tensors tile the data area [data, data + data_size) exactly and points each
// view at its bytes. Sorted by (begin, end), each tensor starts where the previous one ended
// (empty tensors may share an offset; the name orders them).
void tile(const std::string& path,
          std::vector<TensorView>& tensors,
          const uint8_t* data,
          uint64_t data_size) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorView& a, const TensorView& b) {
    return std::tie(a.begin_offset, a.size_bytes, a.name) <
           std::tie(b.begin_offset, b.size_bytes, b.name);
  });
  uint64_t covered = 0;
  const TensorView* previous = nullptr;
  for (TensorView& t : tensors) {
    const uint64_t end = t.begin_offset + t.size_bytes;
    if (end > data_size) {
      fail_tensor(path, t.name,
                  fmt::format("data_offsets [{}, {}] reach past the end of the data ({} bytes: the "
                              "file is truncated or the offsets are wrong)",
                              t.begin_offset, end, data_size));
    }
    if (t.begin_offset < covered) {
      fail_tensor(path, t.name,
                  fmt::format("data_offsets [{}, {}] overlap tensor '{}' (which ends at {})",
                              t.begin_offset, end, previous->name, covered));
    }
    if (t.begin_offset > covered) {
      fail_tensor(path, t.name,
                  fmt::format("data bytes [{}, {}) before it belong to no tensor (a hole{}); the "
                              "format allows none",
                              covered, t.begin_offset,
                              previous ? fmt::format(" after tensor '{}'", previous->name) : ""));
    }
    t.data = data + t.begin_offset;
    covered = end;
    previous = &t;
  }
  if (covered != data_size) {
    fail(path,
         fmt::format("data bytes [{}, {}) belong to no tensor ({} trailing bytes); the format "
                     "allows none",
                     covered, data_size, data_size - covered));
  }
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string what =
        fmt::format("cannot open safetensors file '{}': {}", path, std::strerror(err));
    if (err == ENOENT || err == ENOTDIR) throw DataError(what);
    throw IoError(what);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < 8) {
    ::close(fd);
    fail(path, fmt::format("{} bytes long, shorter than the 8-byte header length", file_size));
  }
  void* map = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) {
    throw IoError(
        fmt::format("cannot map safetensors file '{}': {}", path, std::strerror(map_errno)));
  }
  f.map_ = map;  // from here the destructor unmaps, also when a check below throws
  f.map_size_ = static_cast<size_t>(file_size);
  const auto* bytes = static_cast<const uint8_t*>(map);

  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];  // little-endian u64
  if (n > detail::kMaxHeaderBytes) {
    fail(path, fmt::format("header length {} bytes is over the format's limit of {} bytes", n,
                           detail::kMaxHeaderBytes));
  }
  if (n > file_size - 8) {
    fail(path, fmt::format("header length {} bytes reaches past the end of the file ({} bytes)", n,
                           file_size));
  }
  f.header_size_bytes_ = n;
  const char* header_begin = reinterpret_cast<const char*>(bytes + 8);
  json header = parse_header(path, header_begin, header_begin + n);

  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      f.metadata_ = parse_metadata(path, it.value());
      f.has_metadata_ = true;
    } else {
      f.tensors_.push_back(parse_entry(path, it.key(), it.value()));
    }
  }

  tile(path, f.tensors_, bytes + 8 + n, file_size - 8 - n);
  for (size_t i = 0; i < f.tensors_.size(); ++i) f.index_.emplace(f.tensors_[i].name, i);
  return f;
}

SafetensorsFile::~SafetensorsFile() { release(); }

void SafetensorsFile::release() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept { *this = std::move(other); }

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    header_size_bytes_ = other.header_size_bytes_;
    tensors_ = std::move(other.tensors_);  // views point into the mapping, which does not move
    index_ = std::move(other.index_);
    metadata_ = std::move(other.metadata_);
    has_metadata_ = other.has_metadata_;
  }
  return *this;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const TensorView& t : tensors_) out.push_back(t.name);
  return out;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const TensorView& SafetensorsFile::at(const std::string& name) const {
  const TensorView* t = find(name);
  if (t == nullptr) {
    fail(path_, fmt::format("no tensor '{}' (the file holds {} tensors)", name, tensors_.size()));
  }
  return *t;
}

std::vector<float> SafetensorsFile::read_float(const std::string& name) const {
  const TensorView& t = at(name);
  try {
    return to_float(t);
  } catch (const DataError& e) {
    fail(path_, e.what());
  }
}

}  // namespace llmprof::hf
