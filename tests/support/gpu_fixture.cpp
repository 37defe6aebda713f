// JSON-lines fixtures of GPU activity (format in gpu_fixture.h). Test support: tests and the
// fuzz target build it; the shipped library does not.
#include "support/gpu_fixture.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>

#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"

namespace llmprof::gpu {

namespace {

using nlohmann::json;

// Reads the fields of one line's object, naming the source and line in every error.
class Fields {
 public:
  Fields(const json& obj, const std::string& where) : obj_(obj), where_(where) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(fmt::format("{}: {}", where_, what));
  }
  // Rejects fields other than `allowed` (and "kind").
  void only(std::initializer_list<const char*> allowed) const {
    for (const auto& item : obj_.items()) {
      if (item.key() == "kind") continue;
      bool ok = false;
      for (const char* a : allowed) ok = ok || item.key() == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(fmt::format("unknown field '{}' (expected {})", printable(item.key()), list));
      }
    }
  }
  bool has(const char* key) const { return obj_.contains(key); }
  int64_t integer(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_integer())
      fail(fmt::format("field '{}': expected an integer, got {}", key, printable_json(v)));
    return v.get<int64_t>();
  }
  int64_t integer_or(const char* key, int64_t fallback) const {
    return has(key) ? integer(key) : fallback;
  }
  std::string string(const char* key) const {
    const json& v = at(key);
    if (!v.is_string())
      fail(fmt::format("field '{}': expected a string, got {}", key, printable_json(v)));
    return v.get<std::string>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    return has(key) ? string(key) : fallback;
  }
  Dim3 dim3(const char* key) const {
    const json& v = at(key);
    if (!v.is_array() || v.size() != 3 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
        !v[2].is_number_integer()) {
      fail(fmt::format("field '{}': expected [x, y, z] integers, got {}", key, printable_json(v)));
    }
    return Dim3{v[0].get<int32_t>(), v[1].get<int32_t>(), v[2].get<int32_t>()};
  }
  template <typename Enum>
  Enum named(const char* key,
             std::optional<Enum> (*parse)(std::string_view),
             std::string_view expected) const {
    const std::string s = string(key);
    const std::optional<Enum> e = parse(s);
    if (!e) fail(fmt::format("field '{}': '{}' is not one of {}", key, printable(s), expected));
    return *e;
  }
  // start_ns and end_ns, checked for end >= start.
  std::pair<int64_t, int64_t> interval() const {
    const int64_t start = integer("start_ns"), end = integer("end_ns");
    if (end < start) fail(fmt::format("end_ns {} is before start_ns {}", end, start));
    return {start, end};
  }

 private:
  const json& at(const char* key) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) fail(fmt::format("missing field '{}'", key));
    return *it;
  }
  const json& obj_;
  const std::string& where_;
};

constexpr std::string_view kCopyKinds =
    "unknown, HtoD, DtoH, HtoA, AtoH, AtoA, AtoD, DtoA, DtoD, HtoH, PtoP";
constexpr std::string_view kMemoryKinds =
    "unknown, pageable, pinned, device, array, managed, device_static, managed_static";
constexpr std::string_view kSyncTypes =
    "unknown, event_synchronize, stream_wait_event, stream_synchronize, context_synchronize";

void parse_line(const json& obj, const std::string& where, GpuFixture& out) {
  Fields f(obj, where);
  const std::string kind = f.string("kind");
  if (kind == "meta") {
    f.only({"schema_version", "producer"});
    const int64_t v = f.integer_or("schema_version", kFixtureSchemaVersion);
    if (v != kFixtureSchemaVersion) {
      f.fail(fmt::format("schema_version {} is not supported (this llmprof reads {})", v,
                         kFixtureSchemaVersion));
    }
  } else if (kind == "kernel") {
    f.only({"name", "start_ns", "end_ns", "device", "stream", "correlation_id", "grid", "block",
            "registers_per_thread", "static_smem_bytes", "dynamic_smem_bytes",
            "smem_config_bytes"});
    KernelRecord k;
    k.name = f.string("name");
    std::tie(k.start_ns, k.end_ns) = f.interval();
    k.device = static_cast<int32_t>(f.integer("device"));
    k.stream = static_cast<uint32_t>(f.integer("stream"));
    k.correlation_id = static_cast<uint32_t>(f.integer("correlation_id"));
    k.grid = f.dim3("grid");
    k.block = f.dim3("block");
    k.registers_per_thread = static_cast<int32_t>(f.integer("registers_per_thread"));
    k.static_smem_bytes = static_cast<int32_t>(f.integer("static_smem_bytes"));
    k.dynamic_smem_bytes = static_cast<int32_t>(f.integer("dynamic_smem_bytes"));
    k.smem_config_bytes = f.integer_or("smem_config_bytes", 0);
    out.gpu.kernels.push_back(std::move(k));
  } else if (kind == "memcpy") {
    f.only({"copy_kind", "src_memory", "dst_memory", "bytes", "start_ns", "end_ns", "device",
            "stream", "correlation_id"});
    MemcpyRecord m;
    m.kind = f.named<CopyKind>("copy_kind", parse_copy_kind, kCopyKinds);
    m.src_memory = f.named<MemoryKind>("src_memory", parse_memory_kind, kMemoryKinds);
    m.dst_memory = f.named<MemoryKind>("dst_memory", parse_memory_kind, kMemoryKinds);
    m.bytes = f.integer("bytes");
    std::tie(m.start_ns, m.end_ns) = f.interval();
    m.device = static_cast<int32_t>(f.integer("device"));
    m.stream = static_cast<uint32_t>(f.integer("stream"));
    m.correlation_id = static_cast<uint32_t>(f.integer("correlation_id"));
    out.gpu.memcpys.push_back(m);
  } else if (kind == "memset") {
    f.only(
        {"memory", "value", "bytes", "start_ns", "end_ns", "device", "stream", "correlation_id"});
    MemsetRecord m;
    m.memory = f.named<MemoryKind>("memory", parse_memory_kind, kMemoryKinds);
    m.value = static_cast<uint32_t>(f.integer_or("value", 0));
    m.bytes = f.integer("bytes");
    std::tie(m.start_ns, m.end_ns) = f.interval();
    m.device = static_cast<int32_t>(f.integer("device"));
    m.stream = static_cast<uint32_t>(f.integer("stream"));
    m.correlation_id = static_cast<uint32_t>(f.integer("correlation_id"));
    out.gpu.memsets.push_back(m);
  } else if (kind == "sync") {
    f.only({"sync_type", "start_ns", "end_ns", "stream", "correlation_id"});
    SyncRecord s;
    s.type = f.named<SyncType>("sync_type", parse_sync_type, kSyncTypes);
    std::tie(s.start_ns, s.end_ns) = f.interval();
    s.stream = static_cast<uint32_t>(f.integer_or("stream", kNoStream));
    s.correlation_id = static_cast<uint32_t>(f.integer("correlation_id"));
    out.gpu.syncs.push_back(s);
  } else if (kind == "runtime") {
    f.only({"name", "cbid", "start_ns", "end_ns", "thread_id", "correlation_id"});
    RuntimeApiRecord r;
    r.name = f.string("name");
    r.cbid = static_cast<uint32_t>(f.integer_or("cbid", 0));
    std::tie(r.start_ns, r.end_ns) = f.interval();
    r.thread_id = static_cast<uint64_t>(f.integer("thread_id"));
    r.correlation_id = static_cast<uint32_t>(f.integer("correlation_id"));
    out.gpu.runtime.push_back(std::move(r));
  } else if (kind == "cpu_op") {
    f.only({"name", "start_ns", "end_ns", "thread", "scope", "block", "pass"});
    CpuOpInterval op;
    op.name = f.string("name");
    std::tie(op.start_ns, op.end_ns) = f.interval();
    op.thread = static_cast<uint64_t>(f.integer("thread"));
    op.scope = f.string_or("scope", "");
    op.block = static_cast<int>(f.integer_or("block", -1));
    op.pass = f.string_or("pass", "");
    out.cpu_ops.push_back(std::move(op));
  } else {
    f.fail(
        fmt::format("unknown kind '{}' (expected meta, kernel, memcpy, memset, sync, runtime, "
                    "cpu_op)",
                    printable(kind)));
  }
}

json dim3_json(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

}  // namespace

GpuFixture parse_fixture(const std::string& text, const std::string& source) {
  GpuFixture out;
  std::istringstream in(text);
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string where = fmt::format("{} line {}", source, line_no);
    json obj;
    try {
      obj = json::parse(line);
    } catch (const json::exception& e) {
      throw DataError(fmt::format("{}: not a JSON object: {}", where, printable(e.what(), 200)));
    }
    if (!obj.is_object())
      throw DataError(where + ": expected a JSON object, got " + printable_json(obj));
    parse_line(obj, where, out);
  }
  return out;
}

GpuFixture read_fixture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("cannot read GPU fixture '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_fixture(text.str(), path);
}

std::string format_fixture(const GpuFixture& fx) {
  std::string out;
  auto line = [&](const json& j) {
    out += j.dump(-1, ' ', false, json::error_handler_t::replace);  // bad UTF-8 never throws
    out += '\n';
  };
  line({{"kind", "meta"}, {"schema_version", kFixtureSchemaVersion}, {"producer", "llmprof"}});
  for (const KernelRecord& k : fx.gpu.kernels) {
    json j = {{"kind", "kernel"},
              {"name", k.name},
              {"start_ns", k.start_ns},
              {"end_ns", k.end_ns},
              {"device", k.device},
              {"stream", k.stream},
              {"correlation_id", k.correlation_id},
              {"grid", dim3_json(k.grid)},
              {"block", dim3_json(k.block)},
              {"registers_per_thread", k.registers_per_thread},
              {"static_smem_bytes", k.static_smem_bytes},
              {"dynamic_smem_bytes", k.dynamic_smem_bytes}};
    if (k.smem_config_bytes > 0) j["smem_config_bytes"] = k.smem_config_bytes;
    line(j);
  }
  for (const MemcpyRecord& m : fx.gpu.memcpys) {
    line({{"kind", "memcpy"},
          {"copy_kind", copy_kind_name(m.kind)},
          {"src_memory", memory_kind_name(m.src_memory)},
          {"dst_memory", memory_kind_name(m.dst_memory)},
          {"bytes", m.bytes},
          {"start_ns", m.start_ns},
          {"end_ns", m.end_ns},
          {"device", m.device},
          {"stream", m.stream},
          {"correlation_id", m.correlation_id}});
  }
  for (const MemsetRecord& m : fx.gpu.memsets) {
    line({{"kind", "memset"},
          {"memory", memory_kind_name(m.memory)},
          {"value", m.value},
          {"bytes", m.bytes},
          {"start_ns", m.start_ns},
          {"end_ns", m.end_ns},
          {"device", m.device},
          {"stream", m.stream},
          {"correlation_id", m.correlation_id}});
  }
  for (const SyncRecord& s : fx.gpu.syncs) {
    json j = {{"kind", "sync"},
              {"sync_type", sync_type_name(s.type)},
              {"start_ns", s.start_ns},
              {"end_ns", s.end_ns},
              {"correlation_id", s.correlation_id}};
    if (s.stream != kNoStream) j["stream"] = s.stream;
    line(j);
  }
  for (const RuntimeApiRecord& r : fx.gpu.runtime) {
    line({{"kind", "runtime"},
          {"name", r.name},
          {"cbid", r.cbid},
          {"start_ns", r.start_ns},
          {"end_ns", r.end_ns},
          {"thread_id", r.thread_id},
          {"correlation_id", r.correlation_id}});
  }
  for (const CpuOpInterval& op : fx.cpu_ops) {
    json j = {{"kind", "cpu_op"},
              {"name", op.name},
              {"start_ns", op.start_ns},
              {"end_ns", op.end_ns},
              {"thread", op.thread}};
    if (!op.scope.empty()) j["scope"] = op.scope;
    if (op.block >= 0) j["block"] = op.block;
    if (!op.pass.empty()) j["pass"] = op.pass;
    line(j);
  }
  return out;
}

void write_fixture(const std::string& path, const GpuFixture& fixture) {
  output::write_file_atomic(path, format_fixture(fixture));
}

}  // namespace llmprof::gpu
