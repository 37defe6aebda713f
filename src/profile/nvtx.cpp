#include "llmprof/profile/nvtx.h"

#if defined(LLMPROF_HAVE_NVTX3)
#include <nvtx3/nvToolsExt.h>
#endif

namespace llmprof::profile::nvtx {

bool available() {
#if defined(LLMPROF_HAVE_NVTX3)
  return true;
#else
  return false;
#endif
}

void set_enabled(bool on) { detail::g_enabled.store(on && available(), std::memory_order_relaxed); }

void push(const char* name, int64_t payload) {
#if defined(LLMPROF_HAVE_NVTX3)
  if (payload < 0) {
    nvtxRangePushA(name);
    return;
  }
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = payload;
  nvtxRangePushEx(&a);
#else
  (void)name;
  (void)payload;
#endif
}

void pop() {
#if defined(LLMPROF_HAVE_NVTX3)
  nvtxRangePop();
#endif
}

}  // namespace llmprof::profile::nvtx
