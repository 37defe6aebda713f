// Recorded GPU activity as JSON lines: one record per line, each an object with a "kind" field.
// Test support (not in the shipped library): tests replay hand-written or recorded windows
// through correlation, idle analysis and the trace without a GPU. The records are gpu's own
// (llmprof/gpu/kernel_record.h), defined once there. Line 1 may be a header
// {"kind":"meta","schema_version":1}. Kinds and their fields (times in ns, all integers unless
// noted; fields marked ? are optional):
//   kernel   name (string), start_ns, end_ns, device, stream, correlation_id, grid [x,y,z],
//            block [x,y,z], registers_per_thread, static_smem_bytes, dynamic_smem_bytes,
//            smem_config_bytes?
//   memcpy   copy_kind ("HtoD"...), src_memory, dst_memory ("pinned"...), bytes, start_ns,
//            end_ns, device, stream, correlation_id
//   memset   memory, value?, bytes, start_ns, end_ns, device, stream, correlation_id
//   sync     sync_type ("stream_synchronize"...), start_ns, end_ns, stream?, correlation_id
//   runtime  name, cbid?, start_ns, end_ns, thread_id, correlation_id
//   cpu_op   name, start_ns, end_ns, thread, scope?, block?, pass?
// Unknown kinds and fields are errors (a typo would silently drop data); errors are DataError
// naming the file and line.
#pragma once

#include <string>
#include <vector>

#include "llmprof/gpu/kernel_record.h"

namespace llmprof::gpu {

inline constexpr int kFixtureSchemaVersion = 1;

// A recorded window: GPU records and the CPU op intervals to correlate them with.
struct GpuFixture {
  GpuRecords gpu;
  std::vector<CpuOpInterval> cpu_ops;
};

// Reads a JSON-lines fixture. Blank lines and lines starting with '#' are skipped. Throws
// DataError("<path> line <n>: ...") on malformed input, DataError when the file cannot be read.
GpuFixture read_fixture(const std::string& path);

// Parses fixture text; `source` names it in errors.
GpuFixture parse_fixture(const std::string& text, const std::string& source);

// Writes the fixture (meta line first, then kernels, memcpys, memsets, syncs, runtime calls,
// cpu ops), to path.tmp then renamed. Throws IoError.
void write_fixture(const std::string& path, const GpuFixture& fixture);

// The fixture text write_fixture writes.
std::string format_fixture(const GpuFixture& fixture);

}  // namespace llmprof::gpu
