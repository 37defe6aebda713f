// NVTX ranges (NVIDIA Tools Extension) for Nsight Systems and Nsight Compute users: with
// profile.nvtx, each step ("step", payload = its number), phase ("forward", ...) and module scope
// ("attn.qkv", payload = its layer, -1 outside blocks) is a range pushed and popped on the thread
// that runs it, so nsys/ncu show llmprof's names over the kernels. NVTX3 is header-only (the CUDA
// toolkit's include/nvtx3); a build without those headers has no ranges (available() is false).
// With no tool attached, a push or pop is one check of a function pointer; names are static
// strings and numbers go in the payload, so the timed step formats nothing.
#pragma once

#include <atomic>
#include <cstdint>

namespace llmprof::profile::nvtx {

namespace detail {
inline std::atomic<bool> g_enabled{false};
}  // namespace detail

// Whether this build has NVTX3.
bool available();

// Process-wide: ranges on or off (the Session sets it from profile.nvtx).
void set_enabled(bool on);
inline bool enabled() { return detail::g_enabled.load(std::memory_order_relaxed); }

// A range on the calling thread; payload >= 0 is attached as an int64 payload. name must outlive
// the call (a string literal or a static name table entry).
void push(const char* name, int64_t payload = -1);
void pop();

}  // namespace llmprof::profile::nvtx
