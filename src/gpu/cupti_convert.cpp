// CUPTI activity records -> plain records (see cupti_convert.h). Compiled to nothing where CMake
// did not find CUDA 13's CUPTI headers (CI, CPU hosts without the toolkit).
#include "cupti_convert.h"

#if defined(LLMPROF_HAVE_CUPTI_HEADERS)

#include <string>

namespace llmprof::gpu {

namespace {

// The newest record structs of the installed header (CUDA 13.0: CUPTI_API_VERSION 130001). The
// fields read here exist, with these names, in every version since CUpti_ActivityKernel4.
using KernelActivity = CUpti_ActivityKernel10;
using MemcpyActivity = CUpti_ActivityMemcpy6;
using MemsetActivity = CUpti_ActivityMemset4;
using SyncActivity = CUpti_ActivitySynchronization2;
using ApiActivity = CUpti_ActivityAPI;

constexpr const char* kUnknownCbidPrefix = "cudaRuntimeCbid";

int64_t ns(uint64_t t) { return static_cast<int64_t>(t); }

// A device activity's timestamps, once complete: a record CUPTI returns before the work's end was
// written (a forced flush) has start 0, or an end before its start.
template <typename Activity>
bool complete(const Activity& a) {
  return a.start != 0 && a.end >= a.start;
}

template <typename Enum>
Enum checked(uint32_t value, int count) {
  return value < static_cast<uint32_t>(count) ? static_cast<Enum>(value) : Enum::kUnknown;
}

void add_kernel(const KernelActivity& a, GpuRecords& out) {
  KernelRecord k;
  k.name = demangle(a.name);
  k.start_ns = ns(a.start);
  k.end_ns = ns(a.end);
  k.device = static_cast<int32_t>(a.deviceId);
  k.stream = a.streamId;
  k.correlation_id = a.correlationId;
  k.grid = {a.gridX, a.gridY, a.gridZ};
  k.block = {a.blockX, a.blockY, a.blockZ};
  k.registers_per_thread = a.registersPerThread;
  k.static_smem_bytes = a.staticSharedMemory;
  k.dynamic_smem_bytes = a.dynamicSharedMemory;
  k.smem_config_bytes = a.sharedMemoryExecuted;
  out.kernels.push_back(std::move(k));
}

void add_memcpy(const MemcpyActivity& a, GpuRecords& out) {
  MemcpyRecord m;
  m.kind = checked<CopyKind>(a.copyKind, kNumCopyKinds);
  m.src_memory = checked<MemoryKind>(a.srcKind, kNumMemoryKinds);
  m.dst_memory = checked<MemoryKind>(a.dstKind, kNumMemoryKinds);
  m.bytes = static_cast<int64_t>(a.bytes);
  m.start_ns = ns(a.start);
  m.end_ns = ns(a.end);
  m.device = static_cast<int32_t>(a.deviceId);
  m.stream = a.streamId;
  m.correlation_id = a.correlationId;
  out.memcpys.push_back(m);
}

void add_memset(const MemsetActivity& a, GpuRecords& out) {
  MemsetRecord m;
  m.memory = checked<MemoryKind>(a.memoryKind, kNumMemoryKinds);
  m.value = a.value;
  m.bytes = static_cast<int64_t>(a.bytes);
  m.start_ns = ns(a.start);
  m.end_ns = ns(a.end);
  m.device = static_cast<int32_t>(a.deviceId);
  m.stream = a.streamId;
  m.correlation_id = a.correlationId;
  out.memsets.push_back(m);
}

void add_sync(const SyncActivity& a, GpuRecords& out) {
  SyncRecord s;
  s.type = checked<SyncType>(static_cast<uint32_t>(a.type), kNumSyncTypes);
  s.start_ns = ns(a.start);
  s.end_ns = ns(a.end);
  s.stream = a.streamId;  // CUPTI_INVALID_STREAM_ID (= kNoStream) for a context sync
  s.correlation_id = a.correlationId;
  out.syncs.push_back(s);
}

void add_runtime(const ApiActivity& a, GpuRecords& out, RuntimeNameFn runtime_name) {
  RuntimeApiRecord r;
  r.cbid = a.cbid;
  r.name = runtime_cbid_name(a.cbid);
  if (runtime_name != nullptr && r.name.rfind(kUnknownCbidPrefix, 0) == 0) {
    std::string named = runtime_name(a.cbid);
    if (!named.empty()) r.name = std::move(named);
  }
  r.start_ns = ns(a.start);
  r.end_ns = ns(a.end);
  r.thread_id = a.threadId;
  r.correlation_id = a.correlationId;
  out.runtime.push_back(std::move(r));
}

// The driver API's launches (cuBLAS/cuBLASLt and cuDNN launch their kernels through
// cuLaunchKernel(Ex) without a runtime call): named as the driver names them, classified as
// launches. Other driver calls are left out: the runtime records hold the host's API time.
const char* driver_launch_name(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return "cuLaunchKernel";
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return "cuLaunchKernelEx";
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return "cuLaunchCooperativeKernel";
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
      return "cuGraphLaunch";
    default:
      return nullptr;
  }
}

bool add_driver(const ApiActivity& a, GpuRecords& out) {
  const char* name = driver_launch_name(a.cbid);
  if (name == nullptr) return false;
  RuntimeApiRecord r;
  r.cbid = a.cbid;
  r.name = name;
  r.start_ns = ns(a.start);
  r.end_ns = ns(a.end);
  r.thread_id = a.threadId;
  r.correlation_id = a.correlationId;
  out.runtime.push_back(std::move(r));
  return true;
}

// A device record, or, without its timestamps, only its count (at 0 ns it would sit at the
// clock's origin: 109 s before the run's other events in a trace of an H100 run).
template <typename Activity>
bool add_device(const Activity& a, GpuRecords& out, void (*add)(const Activity&, GpuRecords&)) {
  if (!complete(a)) {
    ++out.incomplete;
    return false;
  }
  add(a, out);
  return true;
}

}  // namespace

bool convert_activity(const CUpti_Activity& record, GpuRecords& out, RuntimeNameFn runtime_name) {
  // CUPTI records are 8-byte aligned and start with their kind: the cast is CUPTI's own idiom.
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return add_device(reinterpret_cast<const KernelActivity&>(record), out, add_kernel);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return add_device(reinterpret_cast<const MemcpyActivity&>(record), out, add_memcpy);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return add_device(reinterpret_cast<const MemsetActivity&>(record), out, add_memset);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return add_device(reinterpret_cast<const SyncActivity&>(record), out, add_sync);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      add_runtime(reinterpret_cast<const ApiActivity&>(record), out, runtime_name);
      return true;
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return add_driver(reinterpret_cast<const ApiActivity&>(record), out);
    default:
      return false;
  }
}

std::string runtime_cbid_name(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
      return "cudaLaunchKernel";
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
      return "cudaLaunchKernelExC";
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      return "cudaLaunchCooperativeKernel";
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
      return "cudaGraphLaunch";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000:
      return "cudaMemcpy";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000:
      return "cudaMemcpyAsync";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000:
      return "cudaMemcpy2DAsync";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000:
      return "cudaMemcpyPeerAsync";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000:
      return "cudaMemset";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000:
      return "cudaMemsetAsync";
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
      return "cudaDeviceSynchronize";
    case CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020:
      return "cudaThreadSynchronize";
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
      return "cudaStreamSynchronize";
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
      return "cudaEventSynchronize";
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000:
      return "cudaEventRecord";
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000:
      return "cudaStreamWaitEvent";
    default:
      return kUnknownCbidPrefix + std::to_string(cbid);
  }
}

}  // namespace llmprof::gpu

#endif  // LLMPROF_HAVE_CUPTI_HEADERS
