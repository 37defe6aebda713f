// An NVTX injection library for tests: what Nsight Systems is to NVTX, in a few lines. NVTX3 loads
// the library named by NVTX_INJECTION64_PATH at the first NVTX call and hands it the core
// function table; this one fills RangePushA, RangePushEx and RangePop with recorders that append
// "push <name> <payload or ->" and "pop" lines, with the OS thread id, to the file named by
// LLMPROF_NVTX_RECORD.
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

std::mutex g_mu;
FILE* g_out = nullptr;

long tid() { return static_cast<long>(::syscall(SYS_gettid)); }

void line(const char* what, const char* name, const char* payload) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_out == nullptr) return;
  std::fprintf(g_out, "%ld %s %s %s\n", tid(), what, name, payload);
  std::fflush(g_out);
}

int NVTX_API push_a(const char* message) {
  line("push", message != nullptr ? message : "(null)", "-");
  return 0;
}

int NVTX_API push_ex(const nvtxEventAttributes_t* a) {
  const char* name = a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii
                                                                                 : "(unnamed)";
  char payload[32] = "-";
  if (a != nullptr && a->payloadType == NVTX_PAYLOAD_TYPE_INT64) {
    std::snprintf(payload, sizeof payload, "%" PRId64, static_cast<int64_t>(a->payload.llValue));
  }
  line("push", name, payload);
  return 0;
}

int NVTX_API pop() {
  line("pop", "-", "-");
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const char* path = std::getenv("LLMPROF_NVTX_RECORD");
  if (path == nullptr || (g_out = std::fopen(path, "w")) == nullptr) return 0;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks == nullptr ||
      callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) == 0 ||
      size <= NVTX_CBID_CORE_RangePop) {
    return 0;
  }
  *table[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&push_a);
  *table[NVTX_CBID_CORE_RangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&push_ex);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  return 1;
}
