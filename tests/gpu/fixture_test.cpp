#include "support/gpu_fixture.h"

#include <gtest/gtest.h>

#include <string>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::gpu {
namespace {

GpuFixture every_kind() {
  GpuFixture fx;
  KernelRecord k;
  k.name = "void at::native::vectorized_elementwise_kernel<4, \"quoted\">(int)";
  k.start_ns = 1000;
  k.end_ns = 3500;
  k.device = 1;
  k.stream = 7;
  k.correlation_id = 42;
  k.grid = {64, 2, 1};
  k.block = {128, 1, 1};
  k.registers_per_thread = 40;
  k.static_smem_bytes = 1024;
  k.dynamic_smem_bytes = 4096;
  k.smem_config_bytes = 233472;
  fx.gpu.kernels.push_back(k);
  fx.gpu.memcpys.push_back(
      {CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, 1 << 20, 100, 900, 1, 7, 41});
  fx.gpu.memsets.push_back({MemoryKind::kDevice, 0, 4096, 950, 990, 1, 7, 40});
  fx.gpu.syncs.push_back({SyncType::kStreamSynchronize, 4000, 4100, 7, 43});
  fx.gpu.syncs.push_back({SyncType::kContextSynchronize, 5000, 5100, kNoStream, 44});
  fx.gpu.runtime.push_back({"cudaLaunchKernel", 211, 500, 520, 12345, 42});
  fx.cpu_ops.push_back({"aten::mm", 400, 600, 12345, "attn.qkv", 3, "forward"});
  fx.cpu_ops.push_back({"aten::add", 700, 800, 12345, "", -1, ""});
  return fx;
}

TEST(GpuFixture, RoundTripKeepsEveryField) {
  test::ScratchDir dir("gpu_fixture");
  const GpuFixture in = every_kind();
  write_fixture(dir.file("window.jsonl"), in);
  const GpuFixture out = read_fixture(dir.file("window.jsonl"));

  ASSERT_EQ(out.gpu.kernels.size(), 1u);
  const KernelRecord& k = out.gpu.kernels[0];
  EXPECT_EQ(k.name, in.gpu.kernels[0].name);
  EXPECT_EQ(k.start_ns, 1000);
  EXPECT_EQ(k.end_ns, 3500);
  EXPECT_EQ(k.device, 1);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation_id, 42u);
  EXPECT_EQ(k.grid, (Dim3{64, 2, 1}));
  EXPECT_EQ(k.block, (Dim3{128, 1, 1}));
  EXPECT_EQ(k.registers_per_thread, 40);
  EXPECT_EQ(k.shared_mem_bytes(), 5120);
  EXPECT_EQ(k.smem_config_bytes, 233472);

  ASSERT_EQ(out.gpu.memcpys.size(), 1u);
  EXPECT_EQ(out.gpu.memcpys[0].kind, CopyKind::kHtoD);
  EXPECT_EQ(out.gpu.memcpys[0].src_memory, MemoryKind::kPinned);
  EXPECT_EQ(out.gpu.memcpys[0].dst_memory, MemoryKind::kDevice);
  EXPECT_EQ(out.gpu.memcpys[0].bytes, 1 << 20);
  EXPECT_EQ(out.gpu.memcpys[0].correlation_id, 41u);
  ASSERT_EQ(out.gpu.memsets.size(), 1u);
  EXPECT_EQ(out.gpu.memsets[0].bytes, 4096);
  ASSERT_EQ(out.gpu.syncs.size(), 2u);
  EXPECT_EQ(out.gpu.syncs[0].type, SyncType::kStreamSynchronize);
  EXPECT_EQ(out.gpu.syncs[0].stream, 7u);
  EXPECT_EQ(out.gpu.syncs[1].stream, kNoStream);
  ASSERT_EQ(out.gpu.runtime.size(), 1u);
  EXPECT_EQ(out.gpu.runtime[0].name, "cudaLaunchKernel");
  EXPECT_EQ(out.gpu.runtime[0].cbid, 211u);
  EXPECT_EQ(out.gpu.runtime[0].thread_id, 12345u);
  EXPECT_EQ(out.gpu.runtime[0].api_class(), ApiClass::kLaunch);
  ASSERT_EQ(out.cpu_ops.size(), 2u);
  EXPECT_EQ(out.cpu_ops[0].scope, "attn.qkv");
  EXPECT_EQ(out.cpu_ops[0].block, 3);
  EXPECT_EQ(out.cpu_ops[0].pass, "forward");
  EXPECT_EQ(out.cpu_ops[1].scope, "");
  EXPECT_EQ(out.cpu_ops[1].block, -1);

  // Writing what was read gives the same text.
  EXPECT_EQ(format_fixture(out), format_fixture(in));
}

// The DataError message for one bad line, given as the fixture's second line.
std::string error_for(const std::string& line) {
  try {
    parse_fixture("{\"kind\":\"meta\",\"schema_version\":1}\n" + line + "\n", "bad.jsonl");
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GpuFixture, ErrorsNameTheFileLineAndField) {
  EXPECT_EQ(error_for(R"({"kind":"kernal","name":"x"})"),
            "bad.jsonl line 2: unknown kind 'kernal' (expected meta, kernel, memcpy, memset, sync, "
            "runtime, cpu_op)");
  EXPECT_EQ(error_for(R"({"kind":"runtime","name":"cudaLaunchKernel","start_ns":1,"end_ns":2,)"
                      R"("correlation_id":3})"),
            "bad.jsonl line 2: missing field 'thread_id'");
  EXPECT_EQ(
      error_for(R"({"kind":"cpu_op","name":"a","start_ns":1,"end_ns":2,"thread":1,"scop":"x"})"),
      "bad.jsonl line 2: unknown field 'scop' (expected name, start_ns, end_ns, thread, scope, "
      "block, pass)");
  EXPECT_EQ(error_for(R"({"kind":"cpu_op","name":"a","start_ns":5,"end_ns":2,"thread":1})"),
            "bad.jsonl line 2: end_ns 2 is before start_ns 5");
  EXPECT_EQ(error_for(R"({"kind":"cpu_op","name":"a","start_ns":"5","end_ns":2,"thread":1})"),
            "bad.jsonl line 2: field 'start_ns': expected an integer, got \"5\"");
  EXPECT_NE(error_for(R"({"kind":"memcpy","copy_kind":"H2D"})")
                .find("line 2: field 'copy_kind': 'H2D' is not one of unknown, HtoD"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"kind":"sync",)").find("bad.jsonl line 2: not a JSON object"),
            std::string::npos);
  EXPECT_EQ(error_for("[1, 2]"), "bad.jsonl line 2: expected a JSON object, got [1,2]");
  EXPECT_EQ(error_for(R"({"kind":"meta","schema_version":9})"),
            "bad.jsonl line 2: schema_version 9 is not supported (this llmprof reads 1)");
}

TEST(GpuFixture, MissingFileIsADataErrorNamingThePath) {
  try {
    read_fixture("/nonexistent/window.jsonl");
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/window.jsonl"), std::string::npos);
  }
}

TEST(GpuFixture, HandWrittenFixtureLoads) {
  const GpuFixture fx =
      read_fixture(std::string(LLMPROF_SOURCE_DIR) + "/tests/gpu/fixtures/correlation.jsonl");
  EXPECT_EQ(fx.cpu_ops.size(), 3u);
  EXPECT_EQ(fx.gpu.runtime.size(), 5u);
  EXPECT_EQ(fx.gpu.kernels.size(), 5u);
  EXPECT_EQ(fx.gpu.memcpys.size(), 1u);
}

TEST(RuntimeApi, ClassifiesByBaseName) {
  EXPECT_EQ(classify_runtime_api("cudaLaunchKernel"), ApiClass::kLaunch);
  EXPECT_EQ(classify_runtime_api("cudaLaunchKernel_ptsz_v7000"), ApiClass::kLaunch);
  EXPECT_EQ(classify_runtime_api("__cudaLaunchKernel_v13000"), ApiClass::kLaunch);
  EXPECT_EQ(classify_runtime_api("cudaGraphLaunch"), ApiClass::kLaunch);
  EXPECT_EQ(classify_runtime_api("cudaMemcpyAsync"), ApiClass::kMemcpy);
  EXPECT_EQ(classify_runtime_api("cudaMemsetAsync_ptsz_v7000"), ApiClass::kMemset);
  EXPECT_EQ(classify_runtime_api("cudaStreamSynchronize"), ApiClass::kSync);
  EXPECT_EQ(classify_runtime_api("cudaDeviceSynchronize_v3020"), ApiClass::kSync);
  EXPECT_EQ(classify_runtime_api("cudaEventSynchronize"), ApiClass::kSync);
  EXPECT_EQ(classify_runtime_api("cudaStreamWaitEvent"), ApiClass::kOther);
  EXPECT_EQ(classify_runtime_api("cudaEventRecord"), ApiClass::kOther);
}

TEST(RuntimeApi, NameTablesGoBothWays) {
  for (int i = 0; i < kNumCopyKinds; ++i) {
    const auto k = static_cast<CopyKind>(i);
    EXPECT_EQ(parse_copy_kind(copy_kind_name(k)), k);
  }
  for (int i = 0; i < kNumMemoryKinds; ++i) {
    const auto k = static_cast<MemoryKind>(i);
    EXPECT_EQ(parse_memory_kind(memory_kind_name(k)), k);
  }
  for (int i = 0; i < kNumSyncTypes; ++i) {
    const auto t = static_cast<SyncType>(i);
    EXPECT_EQ(parse_sync_type(sync_type_name(t)), t);
  }
  EXPECT_FALSE(parse_copy_kind("H2D").has_value());
  EXPECT_EQ(demangle("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(demangle("plain_name"), "plain_name");
}

// Found with the gpu_fixture fuzz target: a field nested 100,000 arrays deep overflowed the stack
// while the error message dumped it; now a DataError that describes the value briefly.
TEST(ReadFixture, DeeplyNestedFieldIsAShortDataError) {
  const std::string path = test::fuzz_regression("gpu_fixture", "deep_nested_name.jsonl");
  const std::string msg = test::data_error_of([&] { read_fixture(path); });
  EXPECT_NE(msg.find("line 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'name': expected a string, got an array"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 400u) << msg;
}

// Found with the gpu_fixture fuzz target: a line holding the byte 0xdb put it raw in the message,
// through the JSON parser's "last read: '...'"; now escaped.
TEST(ReadFixture, ParseErrorEscapesTheBytesItQuotes) {
  const std::string path = test::fuzz_regression("gpu_fixture", "raw_byte_in_parse_error.jsonl");
  const std::string msg = test::data_error_of([&] { read_fixture(path); });
  EXPECT_NE(msg.find("\\xdb"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\xdb'), std::string::npos) << msg;
}

// Found with the gpu_fixture fuzz target: an unknown field name holding a carriage return went raw
// into the message (the terminal would overwrite the line with what follows); now escaped.
TEST(ReadFixture, UnknownFieldNameIsEscaped) {
  const std::string path = test::fuzz_regression("gpu_fixture", "control_byte_in_field_name.jsonl");
  const std::string msg = test::data_error_of([&] { read_fixture(path); });
  EXPECT_NE(msg.find("line 10: unknown field 'registe\\rs_per_thread'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\r'), std::string::npos) << msg;
}

// Found with the gpu_fixture fuzz target in CI: a number past a double's range (7e777) made the
// JSON parser throw out_of_range, not parse_error, and it escaped uncaught; now a DataError.
TEST(ReadFixture, NumberOverflowIsADataError) {
  const std::string path = test::fuzz_regression("gpu_fixture", "number_overflow.jsonl");
  const std::string msg = test::data_error_of([&] { read_fixture(path); });
  EXPECT_NE(msg.find("line 1: not a JSON object"), std::string::npos) << msg;
  EXPECT_NE(msg.find("number overflow parsing '7e777'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace llmprof::gpu
