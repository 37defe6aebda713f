// Plain records of GPU activity, independent of CUPTI's headers: what cupti_convert.cpp makes of
// CUPTI activity records, what fixtures hold (fixture.h), and what correlation, aggregation and
// idle analysis read. Times are int64 nanoseconds on the profiler's clock (llmprof::now_ns, the
// steady clock): the CUPTI source registers that clock as CUPTI's timestamp source, so GPU and CPU
// records compare directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::gpu {

// Direction of a copy. Values are CUPTI's CUpti_ActivityMemcpyKind; names are stable output.
enum class CopyKind : uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kHtoA = 3,
  kAtoH = 4,
  kAtoA = 5,
  kAtoD = 6,
  kDtoA = 7,
  kDtoD = 8,
  kHtoH = 9,
  kPtoP = 10,
};
inline constexpr int kNumCopyKinds = 11;

// Where memory lives. Values are CUPTI's CUpti_ActivityMemoryKind.
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};
inline constexpr int kNumMemoryKinds = 8;

// What a synchronization record waited on. Values are CUPTI's CUpti_ActivitySynchronizationType.
enum class SyncType : uint8_t {
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,  // a device-side dependency: the host does not wait
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
};
inline constexpr int kNumSyncTypes = 5;

// What a CUDA runtime call does, for correlation and idle analysis.
enum class ApiClass : uint8_t { kOther = 0, kLaunch = 1, kMemcpy = 2, kMemset = 3, kSync = 4 };

// "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP".
std::string_view copy_kind_name(CopyKind kind);
std::optional<CopyKind> parse_copy_kind(std::string_view name);
// "unknown", "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static".
std::string_view memory_kind_name(MemoryKind kind);
std::optional<MemoryKind> parse_memory_kind(std::string_view name);
// "unknown", "event_synchronize", "stream_wait_event", "stream_synchronize", "context_synchronize".
std::string_view sync_type_name(SyncType type);
std::optional<SyncType> parse_sync_type(std::string_view name);
// True for the types that block the calling host thread (event, stream, context synchronize).
bool sync_blocks_host(SyncType type);

// Classifies a runtime API name (suffixes such as _v7000 or _ptsz ignored): cudaLaunch* and
// cudaGraphLaunch -> launch; cudaMemcpy* -> memcpy; cudaMemset* -> memset; cudaDeviceSynchronize,
// cudaStreamSynchronize, cudaEventSynchronize, cudaThreadSynchronize -> sync; the rest other.
ApiClass classify_runtime_api(std::string_view name);

// abi::__cxa_demangle of a kernel's mangled name; the name itself when it is not mangled.
std::string demangle(const char* name);

inline constexpr uint32_t kNoStream = 0xFFFFFFFFu;  // CUPTI_INVALID_STREAM_ID

struct Dim3 {
  int32_t x = 1, y = 1, z = 1;
  int64_t count() const { return int64_t{x} * y * z; }
  bool operator==(const Dim3& o) const { return x == o.x && y == o.y && z == o.z; }
  bool operator<(const Dim3& o) const {
    return x != o.x ? x < o.x : (y != o.y ? y < o.y : z < o.z);
  }
};

// One kernel execution (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).
struct KernelRecord {
  std::string name;  // demangled
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation_id = 0;  // equals the launching runtime call's
  Dim3 grid, block;
  int32_t registers_per_thread = 0;
  int32_t static_smem_bytes = 0;
  int32_t dynamic_smem_bytes = 0;
  int64_t smem_config_bytes = 0;  // shared memory per SM the driver configured; 0 = unknown
  int64_t duration_ns() const { return end_ns - start_ns; }
  int64_t shared_mem_bytes() const { return int64_t{static_smem_bytes} + dynamic_smem_bytes; }
};

// One memory copy (CUPTI_ACTIVITY_KIND_MEMCPY).
struct MemcpyRecord {
  CopyKind kind = CopyKind::kUnknown;
  MemoryKind src_memory = MemoryKind::kUnknown;  // pageable / pinned host, device, ...
  MemoryKind dst_memory = MemoryKind::kUnknown;
  int64_t bytes = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation_id = 0;
};

// One memset (CUPTI_ACTIVITY_KIND_MEMSET).
struct MemsetRecord {
  MemoryKind memory = MemoryKind::kUnknown;
  uint32_t value = 0;
  int64_t bytes = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation_id = 0;
};

// A host synchronization (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION): host-side start and end.
struct SyncRecord {
  SyncType type = SyncType::kUnknown;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t stream = kNoStream;  // kNoStream for context synchronize
  uint32_t correlation_id = 0;
};

// One CUDA runtime API call (CUPTI_ACTIVITY_KIND_RUNTIME).
struct RuntimeApiRecord {
  std::string name;   // "cudaLaunchKernel", "cudaMemcpyAsync", "cudaStreamSynchronize", ...
  uint32_t cbid = 0;  // CUPTI runtime callback id; 0 when unknown (fixtures)
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread_id = 0;  // OS thread id (CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM, gettid)
  uint32_t correlation_id = 0;
  ApiClass api_class() const { return classify_runtime_api(name); }
};

// A CPU op as the ops/modules tracer records it, flattened for correlation: the innermost op open
// on a thread when a runtime call launched work owns that work.
struct CpuOpInterval {
  std::string name;  // aten op or autograd node, e.g. "aten::addmm"
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread = 0;  // OS thread id, the same id space as RuntimeApiRecord::thread_id
  std::string scope;    // innermost module scope, e.g. "attn.qkv"; empty outside any scope
  int block = -1;       // layer index, -1 outside blocks
  std::string pass;     // "forward" | "backward" | "recompute"; may be empty
};

// Everything collected over a window.
struct GpuRecords {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<SyncRecord> syncs;
  std::vector<RuntimeApiRecord> runtime;
  // Device records (kernel, copy, memset, sync) handed back without their timestamps (start 0 or
  // end before start: not complete when CUPTI's buffers were flushed), left out of the vectors.
  int64_t incomplete = 0;
  size_t size() const {
    return kernels.size() + memcpys.size() + memsets.size() + syncs.size() + runtime.size();
  }
};

}  // namespace llmprof::gpu
