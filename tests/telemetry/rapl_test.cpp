// RaplSource on fake sysfs trees: zone discovery and naming, deltas, wraparound, unreadable files.
#include "llmprof/telemetry/rapl.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "read_text.h"
#include "support/test_support.h"

namespace llmprof::telemetry {
namespace {

constexpr uint64_t kMaxRangeUj = 262143328850;  // a real package's max_energy_range_uj

// Writes <root>/class/powercap/<zone>/{name, energy_uj, max_energy_range_uj}.
void make_zone(const std::string& root,
               const std::string& zone,
               const std::string& name,
               uint64_t energy_uj,
               uint64_t max_range_uj = kMaxRangeUj) {
  const std::string dir = root + "/class/powercap/" + zone;
  test::write_file(dir + "/name", name + "\n");
  test::write_file(dir + "/energy_uj", std::to_string(energy_uj) + "\n");
  test::write_file(dir + "/max_energy_range_uj", std::to_string(max_range_uj) + "\n");
}

void set_energy(const std::string& root, const std::string& zone, uint64_t energy_uj) {
  test::write_file(root + "/class/powercap/" + zone + "/energy_uj",
                   std::to_string(energy_uj) + "\n");
}

TEST(RaplDelta, PlainDifferenceWithoutWrap) {
  EXPECT_EQ(rapl_delta_uj(1000, 3500, kMaxRangeUj), 2500u);
}

TEST(RaplDelta, WrapsAtMaxEnergyRange) {
  // max-100 -> 50: 100 uJ up to the wrap, then 50 after it.
  EXPECT_EQ(rapl_delta_uj(kMaxRangeUj - 100, 50, kMaxRangeUj), 150u);
}

TEST(RaplSource, FindsPackagesAndSubzonesWithNamesAndCountsOnlyPackageAndDram) {
  test::ScratchDir root("rapl");
  make_zone(root.path(), "intel-rapl:0", "package-0", 1);
  make_zone(root.path(), "intel-rapl:0:0", "core", 1);
  make_zone(root.path(), "intel-rapl:0:1", "dram", 1);
  make_zone(root.path(), "intel-rapl:1", "package-1", 1);
  make_zone(root.path(), "intel-rapl:10", "psys", 1);
  make_zone(root.path(), "intel-rapl-mmio:0", "package-0", 1);  // duplicate view: ignored
  RaplSource rapl(root.path());
  Availability a = rapl.available();
  ASSERT_TRUE(a.available) << a.reason;
  const auto& ch = rapl.channels();
  ASSERT_EQ(ch.size(), 5u);
  const char* domains[] = {"package-0", "package-0/core", "package-0/dram", "package-1", "psys"};
  const bool in_total[] = {true, false, true, true, false};
  for (size_t i = 0; i < ch.size(); ++i) {
    EXPECT_EQ(ch[i].domain, domains[i]);
    EXPECT_EQ(ch[i].in_total, in_total[i]) << ch[i].domain;
    EXPECT_EQ(ch[i].source, "rapl");
    EXPECT_EQ(ch[i].kind, ChannelKind::kCounter);
    EXPECT_FALSE(ch[i].estimated);
  }
}

TEST(RaplSource, ReportsEnergySinceStartInJoules) {
  test::ScratchDir root("rapl");
  make_zone(root.path(), "intel-rapl:0", "package-0", 1000000);
  make_zone(root.path(), "intel-rapl:0:0", "dram", 5000);
  RaplSource rapl(root.path());
  ASSERT_TRUE(rapl.available().available);
  rapl.start(0);
  set_energy(root.path(), "intel-rapl:0", 3500000);   // +2.5 J
  set_energy(root.path(), "intel-rapl:0:0", 255000);  // +0.25 J
  Reading r[2];
  rapl.sample(1, r);
  EXPECT_DOUBLE_EQ(r[0].energy_j, 2.5);
  EXPECT_DOUBLE_EQ(r[1].energy_j, 0.25);
  EXPECT_TRUE(std::isnan(r[0].power_w));
  set_energy(root.path(), "intel-rapl:0", 4500000);  // cumulative: +1 J more
  rapl.sample(2, r);
  EXPECT_DOUBLE_EQ(r[0].energy_j, 3.5);
}

TEST(RaplSource, UnwrapsACounterThatWrapsBetweenSamples) {
  test::ScratchDir root("rapl");
  make_zone(root.path(), "intel-rapl:0", "package-0", kMaxRangeUj - 100);
  RaplSource rapl(root.path());
  ASSERT_TRUE(rapl.available().available);
  rapl.start(0);
  set_energy(root.path(), "intel-rapl:0", 50);
  Reading r[1];
  rapl.sample(1, r);
  EXPECT_DOUBLE_EQ(r[0].energy_j, 150e-6);  // 150 uJ, not -(max - 150)
}

TEST(RaplSource, NoZonesIsUnavailableWithReason) {
  test::ScratchDir root("rapl");
  RaplSource rapl(root.path());
  Availability a = rapl.available();
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find(root.path() + "/class/powercap/intel-rapl:* zones"), std::string::npos)
      << a.reason;
}

TEST(RaplSource, UnreadableEnergyFileIsUnavailableWithPermissionReason) {
  test::ScratchDir root("rapl");
  make_zone(root.path(), "intel-rapl:0", "package-0", 1);
  const std::string energy = root.path() + "/class/powercap/intel-rapl:0/energy_uj";
  ASSERT_EQ(::chmod(energy.c_str(), 0), 0);
  if (std::ifstream(energy).good()) {
    GTEST_SKIP() << "running as root (or with CAP_DAC_OVERRIDE): chmod 000 does not stop reads; "
                    "the directory-in-place-of-file test covers unreadable energy_uj";
  }
  RaplSource rapl(root.path());
  Availability a = rapl.available();
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason, energy + ": Permission denied (needs root or a udev rule)");
}

TEST(RaplSource, PermissionReasonCarriesTheHint) {
  EXPECT_EQ(detail::read_error("/sys/class/powercap/intel-rapl:0/energy_uj", EACCES),
            "/sys/class/powercap/intel-rapl:0/energy_uj: Permission denied (needs root or a "
            "udev rule)");
}

TEST(RaplSource, DirectoryInPlaceOfEnergyFileIsUnavailableWithReason) {
  test::ScratchDir root("rapl");
  make_zone(root.path(), "intel-rapl:0", "package-0", 1);
  const std::string energy = root.path() + "/class/powercap/intel-rapl:0/energy_uj";
  std::filesystem::remove(energy);
  std::filesystem::create_directory(energy);
  RaplSource rapl(root.path());
  Availability a = rapl.available();
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason, energy + ": Is a directory");
}

TEST(RaplSource, FailedReadLeavesAGapAndTheNextReadSpansIt) {
  test::ScratchDir root("rapl");
  make_zone(root.path(), "intel-rapl:0", "package-0", 0);
  RaplSource rapl(root.path());
  ASSERT_TRUE(rapl.available().available);
  rapl.start(0);
  test::write_file(root.path() + "/class/powercap/intel-rapl:0/energy_uj", "garbage\n");
  Reading r[1];
  rapl.sample(1, r);
  EXPECT_TRUE(std::isnan(r[0].energy_j));
  set_energy(root.path(), "intel-rapl:0", 2000000);
  rapl.sample(2, r);
  EXPECT_DOUBLE_EQ(r[0].energy_j, 2.0);
}

}  // namespace
}  // namespace llmprof::telemetry
