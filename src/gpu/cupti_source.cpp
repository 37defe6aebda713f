// CUPTI activity collection: thin buffer callbacks over ActivityBufferPool, parsing after the
// window. Compiled for real where CMake linked CUPTI (LLMPROF_HAVE_CUPTI: a CUDA LibTorch build,
// scripts/build_gpu.sh); elsewhere a stub that says why.
#include "llmprof/gpu/cupti_source.h"

#include "llmprof/gpu/gpu_error.h"

#if defined(LLMPROF_HAVE_CUPTI)

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <vector>

#include "cupti_convert.h"
#include "llmprof/base/clock.h"

namespace llmprof::gpu {

namespace {

// CUPTI's callbacks are plain functions, process-wide: they reach the running source's pool here.
std::atomic<ActivityBufferPool*> g_pool{nullptr};
std::atomic<int64_t> g_dropped_records{0};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many records as fit
  ActivityBufferPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool == nullptr) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = pool->request(size);  // nullptr and 0 when the pool is exhausted: counted there
}

void CUPTIAPI buffer_completed(
    CUcontext context, uint32_t stream, uint8_t* buffer, size_t /*size*/, size_t valid_bytes) {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) {
    g_dropped_records.fetch_add(static_cast<int64_t>(dropped), std::memory_order_relaxed);
  }
  ActivityBufferPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool != nullptr && buffer != nullptr) pool->complete(buffer, valid_bytes);
}

// GPU timestamps on the profiler's clock, so they compare with CPU records directly.
uint64_t CUPTIAPI profiler_clock() { return static_cast<uint64_t>(now_ns()); }

void check(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  throw GpuError(fmt::format("{} failed: {} (CUptiResult {})", call, text ? text : "unknown error",
                             static_cast<int>(result)));
}

std::string callback_name(uint32_t cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name) {
    return name;
  }
  return {};
}

}  // namespace

struct CuptiActivitySource::Impl {
  explicit Impl(const CuptiOptions& o) : options(o), pool(o.num_buffers, o.buffer_bytes) {
    completed.reserve(pool.num_buffers());
  }
  CuptiOptions options;
  ActivityBufferPool pool;
  std::vector<CompletedBuffer> completed;
  std::vector<CUpti_ActivityKind> enabled;
  bool started = false;
  bool warned = false;
};

CudaAvailability CuptiActivitySource::available() { return cuda_runtime_probe(); }

CuptiActivitySource::CuptiActivitySource(const CuptiOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}

CuptiActivitySource::~CuptiActivitySource() {
  try {
    stop();
  } catch (const std::exception& e) {
    spdlog::warn("cupti: stop at destruction failed: {}", e.what());
  }
}

void CuptiActivitySource::start() {
  if (impl_->started) return;
  ActivityBufferPool* expected = nullptr;
  if (!g_pool.compare_exchange_strong(expected, &impl_->pool)) {
    throw GpuError(
        "cupti: another activity source is running (CUPTI's callbacks are process-wide)");
  }
  try {
    // The clock first: records made before it would be on CUPTI's own clock (CLOCK_REALTIME).
    check(cuptiActivityRegisterTimestampCallback(profiler_clock),
          "cuptiActivityRegisterTimestampCallback");
    check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
          "cuptiActivityRegisterCallbacks");
    std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                             CUPTI_ACTIVITY_KIND_MEMCPY,
                                             CUPTI_ACTIVITY_KIND_MEMSET};
    if (impl_->options.synchronization) kinds.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    if (impl_->options.runtime_api) {
      kinds.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
      kinds.push_back(CUPTI_ACTIVITY_KIND_DRIVER);  // cuBLAS/cuDNN launch through the driver API
    }
    for (CUpti_ActivityKind k : kinds) {
      check(cuptiActivityEnable(k), "cuptiActivityEnable");
      impl_->enabled.push_back(k);
    }
  } catch (...) {
    for (CUpti_ActivityKind k : impl_->enabled) cuptiActivityDisable(k);
    impl_->enabled.clear();
    g_pool.store(nullptr, std::memory_order_release);
    throw;
  }
  impl_->started = true;
}

void CuptiActivitySource::stop() {
  if (!impl_->started) return;
  impl_->started = false;
  // sync: between steps, at the window's end. The device finishes the window's work while the
  // activities are still on, so that its records carry their timestamps when flushed (a forced
  // flush returns the unfinished ones with none), as torch.profiler synchronizes before it stops.
  const cudaError_t synced = cudaDeviceSynchronize();
  for (CUpti_ActivityKind k : impl_->enabled) cuptiActivityDisable(k);
  impl_->enabled.clear();
  // Hands back every buffer CUPTI holds, records not yet complete included.
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_pool.store(nullptr, std::memory_order_release);
  check(flushed, "cuptiActivityFlushAll");
  if (synced != cudaSuccess) {
    throw GpuError(fmt::format("cupti: cudaDeviceSynchronize before the flush failed: {}",
                               cudaGetErrorString(synced)));
  }
}

size_t CuptiActivitySource::collect(GpuRecords& out) {
  impl_->completed.clear();
  impl_->pool.take_completed(impl_->completed);
  size_t added = 0;
  for (const CompletedBuffer& b : impl_->completed) {
    CUpti_Activity* record = nullptr;
    for (;;) {
      const CUptiResult r = cuptiActivityGetNextRecord(b.data, b.valid_bytes, &record);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the end of the buffer
      if (r != CUPTI_SUCCESS) {
        const char* text = nullptr;
        cuptiGetResultString(r, &text);
        spdlog::warn("cupti: cuptiActivityGetNextRecord failed ({}): rest of a buffer skipped",
                     text ? text : "unknown error");
        break;
      }
      if (convert_activity(*record, out, callback_name)) ++added;
    }
    impl_->pool.release(b.data);
  }
  if (!impl_->warned) {
    const std::string w = impl_->pool.drop_warning();
    if (!w.empty()) spdlog::warn("{}", w);
    if (dropped_records() > 0) {
      spdlog::warn("cupti: CUPTI reports {} activity records dropped", dropped_records());
    }
    impl_->warned = !w.empty() || dropped_records() > 0;
  }
  return added;
}

int64_t CuptiActivitySource::dropped_buffers() const { return impl_->pool.dropped_requests(); }
int64_t CuptiActivitySource::dropped_records() const {
  return g_dropped_records.load(std::memory_order_relaxed);
}

}  // namespace llmprof::gpu

#else  // no CUPTI in this build

namespace llmprof::gpu {

namespace {
constexpr const char* kNoCupti =
    "cupti: this llmprof was built without CUPTI (CPU-only LibTorch or no CUDA toolkit found); "
    "rebuild with scripts/build_gpu.sh";
}  // namespace

struct CuptiActivitySource::Impl {};

CudaAvailability CuptiActivitySource::available() { return {false, kNoCupti, 0}; }
CuptiActivitySource::CuptiActivitySource(const CuptiOptions& /*options*/)
    : impl_(std::make_unique<Impl>()) {}
CuptiActivitySource::~CuptiActivitySource() = default;
void CuptiActivitySource::start() { throw GpuError(kNoCupti); }
void CuptiActivitySource::stop() {}
size_t CuptiActivitySource::collect(GpuRecords& /*out*/) { return 0; }
int64_t CuptiActivitySource::dropped_buffers() const { return 0; }
int64_t CuptiActivitySource::dropped_records() const { return 0; }

}  // namespace llmprof::gpu

#endif
