// Raw events recorded during the schedule's active steps, stored in preallocated buffers and
// turned into tables and the trace only after the window (Kineto: collect, then process).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/profile/phase.h"

namespace llmprof::profile {

// An aten op or an autograd node (kind kBackwardNode) as RecordFunction saw it.
struct OpEvent {
  enum Kind : uint8_t { kOp = 0, kBackwardNode = 1 };
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t child_ns = 0;     // time of nested events of the same kind (self = dur - child)
  int64_t seq = -1;         // autograd sequence number (forward op: next node; node: its own)
  int64_t alloc_bytes = 0;  // bytes allocated while this was the innermost open op
  uint32_t name_id = 0;     // index into NameTable
  int32_t shape_id = -1;    // index into the shape records, -1 when none
  int32_t scope_event = -1; // innermost forward scope event open at the start (forward ops)
  int32_t step = 0;
  uint16_t thread = 0;      // index of the recording thread (0 = the first, the train loop)
  uint8_t kind = kOp;
  uint8_t depth = 0;        // nesting depth among events of the same thread
  uint8_t phase = 0;        // Phase at the start
};

// Input shapes of one op: up to 4 tensor inputs of up to 5 dims; ndim -1 = not a tensor. An
// integer argument (index_select's dim) keeps its value in dims[i][0], scalar_type kIntArg. A
// tensor list (cat's) fills the slots from its position on, one tensor each; a list longer than
// the slots left keeps one slot fewer and marks the last ndim kListCut.
struct ShapeRecord {
  static constexpr int kMaxInputs = 4;
  static constexpr int kMaxDims = 5;
  static constexpr int8_t kIntArg = -2;
  static constexpr int8_t kListCut = -2;
  int64_t dims[kMaxInputs][kMaxDims] = {};
  int8_t ndim[kMaxInputs] = {-1, -1, -1, -1};
  int8_t scalar_type[kMaxInputs] = {-1, -1, -1, -1};  // c10::ScalarType value
};

// Interns op names (stable pointers or not) into ids with a fixed arena: no allocation after
// construction; a full table maps new names to id 0 ("(other)").
class NameTable {
 public:
  explicit NameTable(size_t slots = 4096, size_t arena_bytes = 1 << 20);
  uint32_t intern(const char* name);
  std::string_view name(uint32_t id) const;
  size_t size() const { return count_; }
  bool overflowed() const { return overflowed_; }

 private:
  std::vector<uint64_t> hashes_;    // open addressing by FNV-1a hash, 0 = empty
  std::vector<uint32_t> slot_ids_;
  std::vector<uint32_t> offsets_;   // id -> arena offset
  std::vector<uint16_t> lengths_;
  std::vector<char> arena_;
  size_t arena_used_ = 0;
  size_t count_ = 0;
  bool overflowed_ = false;
};

// Memory counters of one phase of one step, from c10's memory reporting hook.
struct PhaseMemory {
  int32_t step = 0;
  uint8_t phase = 0;
  int64_t peak_allocated_bytes = 0;  // max live CPU-allocator bytes during the phase
  int64_t end_allocated_bytes = 0;
  int64_t rss_bytes = 0;
};

}  // namespace llmprof::profile
