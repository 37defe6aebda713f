// `llmprof peak --comm`: nccl-tests' all_reduce_perf arithmetic (sizes, bus factor, roof) by hand,
// then the command on 2 local ranks (Gloo, small sizes): a complete table with finite positive
// bandwidths that obey busbw = algbw x 2(n-1)/n and algbw = bytes / time, and bad input exit 2.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "llmprof/dist/comm_bench.h"
#include "support/test_support.h"

namespace llmprof::test {
namespace {

TEST(CommBenchSizes, PowersOfTwoFromMinToMaxInclusive) {
  dist::CommBenchOptions o;  // defaults: 4 KiB .. 256 MiB, x2
  const std::vector<int64_t> sizes = dist::comm_bench_sizes(o);
  ASSERT_EQ(sizes.size(), 17u);  // 2^12 .. 2^28
  EXPECT_EQ(sizes.front(), 4096);
  EXPECT_EQ(sizes.back(), 268435456);
  o.min_bytes = 1000;  // rounded down to whole float32 elements; x4 steps up to 64000
  o.max_bytes = 64000;
  o.factor = 4;
  EXPECT_EQ(dist::comm_bench_sizes(o), (std::vector<int64_t>{1000, 4000, 16000, 64000}));
}

TEST(CommBenchSizes, BadOptionsAreUsageErrorsNamingThem) {
  auto message = [](dist::CommBenchOptions o) {
    try {
      dist::comm_bench_sizes(o);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  dist::CommBenchOptions o;
  o.min_bytes = 2;
  expect_contains(message(o), "--min-bytes 2");
  o = {};
  o.max_bytes = 1024;
  expect_contains(message(o), "--max-bytes 1024 is below --min-bytes 4096");
  o = {};
  o.factor = 1;
  expect_contains(message(o), "--factor 1");
  o = {};
  o.iters = 0;
  expect_contains(message(o), "--iters 0");
}

TEST(CommBenchResult, BusBandwidthIsAlgbwTimesTwoNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(dist::all_reduce_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(dist::all_reduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(dist::all_reduce_bus_factor(8), 1.75);
  dist::CommBenchResult r;
  r.world_size = 4;
  r.rows = {{4096, 1024, 10.0}, {8192, 2048, 16.0}, {16384, 4096, 40.0}};
  dist::finish_comm_bench(r);
  // 4096 B / 10 us = 409.6 MB/s; x 1.5 = 614.4 MB/s. 8192 / 16 us = 512 MB/s -> 768 MB/s (max).
  EXPECT_DOUBLE_EQ(r.rows[0].algbw_bytes_per_s, 409.6e6);
  EXPECT_DOUBLE_EQ(r.rows[0].busbw_bytes_per_s, 614.4e6);
  ASSERT_TRUE(r.max_busbw_bytes_per_s.has_value());
  EXPECT_DOUBLE_EQ(*r.max_busbw_bytes_per_s, 768e6);
  EXPECT_EQ(r.max_busbw_at_bytes, 8192);
  r.world_size = 1;  // nothing crosses a link: no roof, and the note says why
  dist::finish_comm_bench(r);
  EXPECT_FALSE(r.max_busbw_bytes_per_s.has_value());
  expect_contains(r.roof_note, "world size 1");
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string f;
  while (std::getline(in, f, sep)) out.push_back(f);
  return out;
}

TEST(PeakComm, TwoLocalRanksGiveACompleteTableWithPositiveBusBandwidth) {
  ScratchDir dir("llmprof_peak_comm");
  const CommandResult r =
      run_llmprof({"peak", "--comm", "--nproc", "2", "--min-bytes", "4K", "--max-bytes", "64K",
                   "--warmup-iters", "2", "--iters", "5", "--timeout-s", "60", "--output",
                   dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "2 ranks, gloo");
  expect_contains(r.output, "peak_busbw_bytes_per_s: ");
  const std::vector<std::string> lines = split(read_file(dir.file("comm_peak.csv")), '\n');
  ASSERT_EQ(lines.size(), 6u) << read_file(dir.file("comm_peak.csv"));  // header + 4K..64K
  const std::vector<std::string> header = split(lines[0], ',');
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  int64_t expected_bytes = 4096;
  double max_busbw = 0;
  for (size_t i = 1; i < lines.size(); ++i, expected_bytes *= 2) {
    const std::vector<std::string> f = split(lines[i], ',');
    ASSERT_EQ(f.size(), header.size()) << lines[i];
    EXPECT_EQ(std::stoll(f[col("bytes")]), expected_bytes);
    EXPECT_EQ(std::stoll(f[col("elements")]), expected_bytes / 4);
    EXPECT_EQ(f[col("world_size")], "2");
    const double time_us = std::stod(f[col("time_us")]);
    const double algbw = std::stod(f[col("algbw_gb_per_s")]);
    const double busbw = std::stod(f[col("busbw_gb_per_s")]);
    EXPECT_TRUE(std::isfinite(busbw) && busbw > 0) << lines[i];
    EXPECT_NEAR(algbw, expected_bytes / (time_us * 1e-6) * 1e-9, algbw * 1e-6);
    EXPECT_NEAR(busbw, algbw * 2.0 * (2 - 1) / 2, busbw * 1e-9);  // n = 2: busbw = algbw
    EXPECT_LE(std::stod(f[col("min_rank_time_us")]), time_us * (1 + 1e-9));
    EXPECT_GE(std::stod(f[col("max_rank_time_us")]), time_us * (1 - 1e-9));
    max_busbw = std::max(max_busbw, busbw);
  }
  const size_t at = r.output.find("peak_busbw_bytes_per_s: ");
  const double printed = std::stod(r.output.substr(at + 24));
  EXPECT_NEAR(printed * 1e-9, max_busbw, max_busbw * 1e-4);  // the roof is the table's largest
}

TEST(PeakComm, BadInputExitsTwoNamingTheOption) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"peak", "--comm", "--min-bytes", "4Q"}, "--min-bytes '4Q'"},
      {{"peak", "--comm", "--min-bytes", "8K", "--max-bytes", "4K"}, "below --min-bytes"},
      {{"peak", "--comm", "--iters", "0"}, "--iters 0"},
      {{"peak", "--comm", "--nproc", "0"}, "--nproc 0"},
      {{"peak", "--nproc", "2"}, "--nproc is an option of --comm"},
      {{"peak", "--comm", "--precision", "bf16"}, "float32"},
  };
  for (const Case& c : cases) {
    const CommandResult r = run_llmprof(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    expect_contains(r.output, c.says);
  }
}

// The roof a run's buckets are judged against: a negative value, no number, NaN, infinity or an
// empty value exits 2 naming the key and the value, from --set and from a config file (with its
// line). 0 is the default, written into every run's config.yaml, and means "no roof" (env.json
// peak_comm.busbw_bytes_per_s null), so it loads.
TEST(PeakBusbwKey, WrongValueExitsTwoNamingTheKey) {
  const std::string key = "profile.peak_busbw_bytes_per_s";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-1", "-1 is out of range [0, inf)"},  {"-0.5e9", "out of range"},
      {"abc", "expected a number, got 'abc'"}, {"nan", "got 'nan'"},
      {"inf", "got 'inf'"},                    {"", "got an empty value"}};
  for (const auto& [value, says] : cases) {
    const CommandResult r =
        run_llmprof({"config", "show", kTinyConfig, "--set", key + "=" + value});
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.output;
    expect_contains(r.output, key + ": ");
    expect_contains(r.output, says);
  }
  ScratchDir dir("busbw_key");
  std::string yaml = read_file(kTinyConfig);
  const size_t at = yaml.find("\nprofile:\n");
  ASSERT_NE(at, std::string::npos) << "tiny_test.yaml has no profile section";
  yaml.insert(at + 10, "  peak_busbw_bytes_per_s: -3\n");
  write_file(dir.file("bad.yaml"), yaml);
  const CommandResult f = run_llmprof({"config", "show", dir.file("bad.yaml")});
  EXPECT_EQ(f.exit_code, 2) << f.output;
  expect_contains(f.output, "peak_busbw_bytes_per_s");
  expect_contains(f.output, "bad.yaml");
  const CommandResult zero = run_llmprof({"config", "show", kTinyConfig, "--set", key + "=0"});
  EXPECT_EQ(zero.exit_code, 0) << zero.output;
  expect_contains(zero.output, "peak_busbw_bytes_per_s: 0");
}

}  // namespace
}  // namespace llmprof::test
