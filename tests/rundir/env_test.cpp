// env.json's typed document: what the writer writes the reader reads back; the last release's
// files read and rewrite byte for byte with no unknown key; unknown keys survive a rewrite; a
// newer schema is refused; no schema_version and a field of the wrong type are errors naming the
// file and the field; a later field missing is null with a note; docs/env.md matches the struct.
#include "llmprof/rundir/env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

using doc_test::release_dir;
using doc_test::expect_data_error;


Env full_env() {
  Env e;
  e.start_time = "2026-11-27T12:04:59+0000";
  e.command_line = {"llmprof", "train", "--config", "configs/tiny.yaml"};
  e.llmprof = EnvBuild{"0.1.0", "840971cec22e", "Release"};
  e.host = EnvHost{"vm", "Linux 6.1", "x86_64", "Xeon", 2, true, false, 25276502016};
  e.torch = EnvTorch{"1.13.0", false, "ATen/Parallel:\n"};
  e.device = config::DeviceKind::kCuda;
  e.threads = 2;
  e.threads_configured = 0;
  e.blas = EnvBlas{std::nullopt, "openmp", {"/usr/lib/libblas.so.3"}};
  e.runtime = EnvRuntime{true, true, 33554432, 1073741824, std::nullopt, "2"};
  e.peak_flops = EnvPeakFlops{1e11, "measured", "best of 5", 3e11};
  e.peak_bandwidth = EnvPeakBandwidth{2e10, std::nullopt, "configured", "profile.x"};
  e.peak_comm = EnvPeakComm{std::nullopt, "not given"};
  telemetry::EnergyAvailability& a = e.energy.emplace();
  a.enabled = a.monitored = true;
  a.sources = {{"rapl", false, "no zones", {}},
               {"proc", true, "", {{"cpu", "process CPU", "none", true, false}}}};
  a.sample_hz = 10;
  a.total_source = "proc";
  return e;
}

TEST(EnvDoc, WriteThenReadGivesTheSameFigures) {
  const Env written = full_env();
  const std::string text = env_text(written);
  const Env read = parse_env(text, "a/env.json");
  EXPECT_EQ(read.schema_version, kEnvSchemaVersion);
  EXPECT_EQ(read.start_time, written.start_time);
  EXPECT_EQ(read.command_line, written.command_line);
  ASSERT_TRUE(read.host && read.host->memory_bytes);
  EXPECT_EQ(*read.host->memory_bytes, 25276502016);
  EXPECT_EQ(read.host->amx_bf16, std::optional<bool>(false));
  EXPECT_EQ(read.device, std::optional<config::DeviceKind>(config::DeviceKind::kCuda));
  EXPECT_EQ(read.threads_configured, std::optional<int64_t>(0));  // 0 = all cores, not unknown
  ASSERT_TRUE(read.blas);
  EXPECT_FALSE(read.blas->openblas_config.has_value());
  EXPECT_EQ(read.blas->mapped_libraries, written.blas->mapped_libraries);
  ASSERT_TRUE(read.runtime);
  EXPECT_EQ(read.runtime->omp_num_threads, std::optional<std::string>("2"));
  EXPECT_FALSE(read.runtime->omp_wait_policy.has_value());
  ASSERT_TRUE(read.peak_flops && read.peak_flops->bf16_flops_per_s);
  EXPECT_EQ(*read.peak_flops->bf16_flops_per_s, 3e11);
  EXPECT_FALSE(read.peak_bandwidth->copy_bytes_per_s.has_value());
  EXPECT_FALSE(read.peak_comm->busbw_bytes_per_s.has_value());
  ASSERT_TRUE(read.energy);
  ASSERT_EQ(read.energy->sources.size(), 2u);
  EXPECT_EQ(read.energy->sources[0].reason, "no zones");
  ASSERT_EQ(read.energy->sources[1].channels.size(), 1u);
  EXPECT_TRUE(read.energy->sources[1].channels[0].estimated);
  EXPECT_EQ(read.energy->total_source, std::optional<std::string>("proc"));
  EXPECT_TRUE(read.unknown.empty());
  EXPECT_TRUE(read.read_notes.empty());
  EXPECT_EQ(env_text(read), text);  // and back, byte for byte
}

// A run with energy off: the section is these two keys, as every release wrote it.
TEST(EnvDoc, EnergyOffIsEnabledFalseAndItsReasonOnly) {
  Env e;
  e.energy.emplace().reason = "energy.enabled=false";
  const std::string text = env_text(e);
  EXPECT_NE(text.find("  \"energy\": {\n    \"enabled\": false,\n    \"reason\": "
                      "\"energy.enabled=false\"\n  },"),
            std::string::npos)
      << text;
  const Env read = parse_env(text, "off/env.json");
  EXPECT_FALSE(read.energy->monitored);
  EXPECT_EQ(env_text(read), text);
}

TEST(EnvDoc, ReleaseFilesRewriteByteIdenticalWithNoUnknownKey) {
  int files = 0;
  for (const std::string& path : doc_test::files_named(release_dir(), kEnv)) {
    const std::string text = test::read_file(path);
    const Env e = parse_env(text, path);
    EXPECT_EQ(env_text(e), text) << path;
    EXPECT_TRUE(e.unknown.empty()) << path << ": " << e.unknown.begin()->first;
    // The release predates peak_comm (profile.peak_busbw_bytes_per_s): null with its note.
    ASSERT_EQ(e.read_notes.size(), 1u) << path;
    EXPECT_EQ(e.read_notes[0],
              path + ": no peak_comm (written before the field was added): null");
    EXPECT_FALSE(e.peak_comm.has_value());
    ++files;
  }
  EXPECT_EQ(files, 6);  // run-ops, run-mlm and the sweep's four points
}

TEST(EnvDoc, UnknownKeysAreKeptWhenTheFileIsRewritten) {
  std::string text = env_text(full_env());
  text.replace(text.find("\n  \"threads\""), 0, "\n  \"numa\": {\"nodes\": 2},");
  text.replace(text.find("\"cpu_model\""), 0, "\"cpu_mhz\": 2100,\n    ");
  const Env read = parse_env(text, "new/env.json");
  ASSERT_EQ(read.unknown.size(), 2u);
  EXPECT_EQ(read.unknown.at("/numa"), R"({"nodes":2})");
  EXPECT_EQ(read.unknown.at("/host/cpu_mhz"), "2100");
  const std::string rewritten = env_text(read);
  EXPECT_NE(rewritten.find("\"cpu_mhz\": 2100"), std::string::npos);
  EXPECT_EQ(env_text(parse_env(rewritten, "x")), rewritten);
}

TEST(EnvDoc, ANewerSchemaVersionIsRefusedNamingTheFile) {
  expect_data_error([] { parse_env(R"({"schema_version": 2})", "b/env.json"); },
                    "b/env.json: schema_version 2 is newer than this llmprof reads (1)");
}

TEST(EnvDoc, NoSchemaVersionIsAnErrorNamingTheFile) {
  expect_data_error([] { parse_env(R"({"threads": 2})", "a/env.json"); },
                    "a/env.json: schema_version is missing");
}

TEST(EnvDoc, AFieldOfTheWrongTypeIsAnErrorNamingTheField) {
  expect_data_error(
      [] { parse_env(R"({"schema_version": 1, "host": {"cores": "four"}})", "c/env.json"); },
      "c/env.json: host.cores is \"four\", not an integer");
  expect_data_error(
      [] { parse_env(R"({"schema_version": 1, "peak_flops": {"flops_per_s": true}})", "d.json"); },
      "d.json: peak_flops.flops_per_s is true, not a number");
  expect_data_error([] { parse_env(R"({"schema_version": 1, "device": "tpu"})", "e.json"); },
                    "tpu");
}

TEST(EnvDoc, ALaterFieldMissingIsNullWithANote) {
  const Env e = parse_env(
      R"({"schema_version": 1, "host": {"cores": 4}, "peak_flops": {"flops_per_s": 1e11,
          "bf16_flops_per_s": null}, "peak_bandwidth": {"bytes_per_s": 2e10}, "energy": {}})",
      "f.json");
  EXPECT_EQ(e.host->cores, std::optional<int64_t>(4));
  EXPECT_FALSE(e.host->amx_bf16.has_value());
  EXPECT_FALSE(e.peak_comm.has_value());
  ASSERT_EQ(e.read_notes.size(), 2u);
  EXPECT_EQ(e.read_notes[0], "f.json: no host.amx_bf16 (written before the field was added): null");
  EXPECT_EQ(e.read_notes[1], "f.json: no peak_comm (written before the field was added): null");
}

// docs/env.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(EnvDoc, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = env_fields_doc();
  doc_test::expect_committed_doc("env.md", generated);
  for (const char* field : {"`host.cores`", "`peak_flops.flops_per_s`",
                            "`energy.sources[].channels[].in_total`", "`runtime.OMP_NUM_THREADS`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
