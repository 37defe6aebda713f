// Name tables of the GPU record enums and runtime-API classification.
#include "llmprof/gpu/kernel_record.h"

#include <cxxabi.h>

#include <array>
#include <cstdlib>
#include <memory>

namespace llmprof::gpu {

namespace {

constexpr std::array<std::string_view, kNumCopyKinds> kCopyKindNames = {
    "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
constexpr std::array<std::string_view, kNumMemoryKinds> kMemoryKindNames = {
    "unknown", "pageable", "pinned",        "device",
    "array",   "managed",  "device_static", "managed_static"};
constexpr std::array<std::string_view, kNumSyncTypes> kSyncTypeNames = {
    "unknown", "event_synchronize", "stream_wait_event", "stream_synchronize",
    "context_synchronize"};

template <typename Enum, size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, Enum value) {
  const auto i = static_cast<size_t>(value);
  return i < N ? names[i] : names[0];
}

template <typename Enum, size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "cudaLaunchKernel_ptsz_v7000" -> "cudaLaunchKernel": CUPTI's CBID enum names carry the API
// version and the per-thread-default-stream variant; cuptiGetCallbackName may too.
std::string_view base_api_name(std::string_view name) {
  while (!name.empty() && name.front() == '_') name.remove_prefix(1);  // "__cudaLaunchKernel"
  for (std::string_view suffix : {"_ptsz", "_ptds", "_v"}) {
    const size_t at = name.find(suffix);
    if (at != std::string_view::npos && at > 0) name = name.substr(0, at);
  }
  return name;
}

}  // namespace

std::string_view copy_kind_name(CopyKind kind) { return name_of(kCopyKindNames, kind); }
std::optional<CopyKind> parse_copy_kind(std::string_view name) {
  return parse_name<CopyKind>(kCopyKindNames, name);
}
std::string_view memory_kind_name(MemoryKind kind) { return name_of(kMemoryKindNames, kind); }
std::optional<MemoryKind> parse_memory_kind(std::string_view name) {
  return parse_name<MemoryKind>(kMemoryKindNames, name);
}
std::string_view sync_type_name(SyncType type) { return name_of(kSyncTypeNames, type); }
std::optional<SyncType> parse_sync_type(std::string_view name) {
  return parse_name<SyncType>(kSyncTypeNames, name);
}

bool sync_blocks_host(SyncType type) {
  return type == SyncType::kEventSynchronize || type == SyncType::kStreamSynchronize ||
         type == SyncType::kContextSynchronize;
}

ApiClass classify_runtime_api(std::string_view name) {
  const std::string_view base = base_api_name(name);
  if (starts_with(base, "cudaLaunch") || base == "cudaGraphLaunch") return ApiClass::kLaunch;
  if (starts_with(base, "cuLaunch") || base == "cuGraphLaunch") return ApiClass::kLaunch;  // driver
  if (starts_with(base, "cudaMemcpy")) return ApiClass::kMemcpy;
  if (starts_with(base, "cudaMemset")) return ApiClass::kMemset;
  if (base == "cudaDeviceSynchronize" || base == "cudaStreamSynchronize" ||
      base == "cudaEventSynchronize" || base == "cudaThreadSynchronize") {
    return ApiClass::kSync;
  }
  return ApiClass::kOther;
}

std::string demangle(const char* name) {
  if (name == nullptr) return "(null)";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

}  // namespace llmprof::gpu
