// The enum name tables of config/enums.h: every value round-trips through its name, the key
// schema prints the same names, and a bad name is the loader's ConfigError.
#include "llmprof/config/enums.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"

namespace llmprof::config {
namespace {

// "a|b|c": the names of E in table order, as the choices print.
template <typename E>
std::string choices_of() {
  std::string out;
  for (std::string_view n : EnumTable<E>::names) out += (out.empty() ? "" : "|") + std::string(n);
  return out;
}

template <typename E>
class EnumTableTest : public ::testing::Test {};

using AllEnums = ::testing::Types<ModelType,
                                  TokenizerKind,
                                  DataFormat,
                                  Optimizer,
                                  Precision,
                                  TaskKind,
                                  ProfileLevel,
                                  QuantEngine,
                                  DeviceKind,
                                  BenchVariant,
                                  Activation,
                                  Attention,
                                  Launcher>;
TYPED_TEST_SUITE(EnumTableTest, AllEnums);

TYPED_TEST(EnumTableTest, EveryValueRoundTripsThroughItsName) {
  using E = TypeParam;
  const auto& names = EnumTable<E>::names;
  for (size_t i = 0; i < names.size(); ++i) {
    const E value = static_cast<E>(i);
    EXPECT_EQ(name(value), names[i]);
    EXPECT_EQ(parse_enum<E>(name(value)), value) << names[i];
    EXPECT_EQ(find_enum<E>(names[i]), value) << names[i];
  }
  EXPECT_EQ(find_enum<E>("no such name"), std::nullopt);
  EXPECT_EQ(name(static_cast<E>(names.size())), "?");
}

TYPED_TEST(EnumTableTest, ABadNameIsAConfigErrorNamingKeyValueAndChoices) {
  using E = TypeParam;
  const std::string choices = choices_of<E>();
  try {
    parse_enum<E>("zz");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    // Two characters: too short for a "did you mean".
    EXPECT_EQ(std::string(e.what()),
              std::string(EnumTable<E>::key) + ": 'zz' is not one of " + choices);
    EXPECT_EQ(e.key(), EnumTable<E>::key);
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

// The key schema reads its choices from the same table; bench.variants, a list, is a string key.
TYPED_TEST(EnumTableTest, TheKeySchemaPrintsTheTable) {
  using E = TypeParam;
  const bool list_key = std::is_same_v<E, BenchVariant>;
  // sweep.launcher is a key of the sweep section, not of a run: list_keys leaves it out
  // (`llmprof config keys` lists it after them, from sweep::sweep_section_keys).
  const bool sweep_key = std::is_same_v<E, Launcher>;
  bool found = false;
  for (const KeyInfo& k : list_keys()) {
    if (k.path != EnumTable<E>::key) continue;
    found = true;
    EXPECT_EQ(k.type, list_key ? "string" : "enum");
    if (!list_key) EXPECT_EQ(k.range, choices_of<E>());
  }
  EXPECT_EQ(found, !sweep_key) << EnumTable<E>::key;
}

TEST(ParseEnum, SuggestsACloseNameAsTheLoaderDoes) {
  try {
    parse_enum<ProfileLevel>("modles");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "profile.level: 'modles' is not one of off|phases|modules|ops; did you mean "
              "'modules'?");
  }
  // The loader's message for the same value is this one plus where it came from.
  Config c;
  try {
    apply_override(c, "profile.level=modles");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "profile.level: 'modles' is not one of off|phases|modules|ops; did you mean "
              "'modules'? (from --set profile.level=modles)");
  }
  EXPECT_EQ(c.profile.level, ProfileLevel::kPhases)
      << "a rejected value leaves the config as it was";
}

TEST(ApplyOverride, StoresTheEnumAndPrintsItsName) {
  Config c;
  apply_override(c, "train.precision=bf16");
  apply_override(c, "device=cuda");
  apply_override(c, "bench.quant_engine=qnnpack");
  EXPECT_EQ(c.train.precision, Precision::kBf16);
  EXPECT_EQ(c.device.kind, DeviceKind::kCuda);
  EXPECT_EQ(c.bench.quant_engine, QuantEngine::kQnnpack);
  EXPECT_EQ(get_value(c, "train.precision"), "bf16");
  EXPECT_EQ(get_value(c, "bench.quant_engine"), "qnnpack");
}

TEST(BenchVariants, ParsesTheListInOrder) {
  Config c;
  EXPECT_EQ(bench_variants(c), (std::vector<BenchVariant>{BenchVariant::kFp32, BenchVariant::kBf16,
                                                          BenchVariant::kInt8}));
  c.bench.variants = " int8,fp32 ";
  EXPECT_EQ(bench_variants(c),
            (std::vector<BenchVariant>{BenchVariant::kInt8, BenchVariant::kFp32}));
  c.bench.variants = "int8,fp64";
  try {
    bench_variants(c);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "bench.variants: 'fp64' is not one of fp32|bf16|int8|fp16");
    EXPECT_EQ(e.key(), "bench.variants");
  }
}

// The statuses run directories and sweeps write: the same table mechanism, not config keys.
template <typename E>
class StatusTableTest : public ::testing::Test {};
using StatusEnums = ::testing::Types<RunStatus, PointStatus, SweepState>;
TYPED_TEST_SUITE(StatusTableTest, StatusEnums);

TYPED_TEST(StatusTableTest, EveryValueRoundTripsThroughItsName) {
  using E = TypeParam;
  const auto& names = EnumTable<E>::names;
  for (size_t i = 0; i < names.size(); ++i) {
    const E value = static_cast<E>(i);
    EXPECT_EQ(find_enum<E>(name(value)), value) << names[i];
  }
  EXPECT_EQ(find_enum<E>("unknown"), std::nullopt);
  EXPECT_EQ(find_enum<E>("Completed"), std::nullopt) << "names are exact, not case-folded";
}

// The names are what summary.json, sweep.csv, sweep.json and the point records hold: pinned here,
// so a renamed value fails a test instead of changing every file written from then on.
TEST(StatusNames, AreTheStringsTheFilesHold) {
  EXPECT_EQ(choices_of<RunStatus>(), "completed|diverged|failed|interrupted");
  EXPECT_EQ(choices_of<PointStatus>(),
            "pending|running|skipped|completed|diverged|failed|interrupted");
  EXPECT_EQ(choices_of<SweepState>(), "running|submitted|submit_failed|finished|interrupted");
  EXPECT_EQ(choices_of<DeviceKind>(), "cpu|cuda");
}

TEST(PointStatusOf, ARunsStatusKeepsItsName) {
  for (const RunStatus s :
       {RunStatus::kCompleted, RunStatus::kDiverged, RunStatus::kFailed, RunStatus::kInterrupted}) {
    EXPECT_EQ(name(point_status(s)), name(s));
  }
}

}  // namespace
}  // namespace llmprof::config
