// The ddp section: DistributedDataParallel's defaults, typed values, and refusals naming the key.
#include <gtest/gtest.h>

#include <string>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "support/config_error.h"

namespace llmprof::config {
namespace {

using test::config_error_of;

TEST(DdpKeys, DefaultToDdpsBucketsWithOverlapAndAnAutomaticBackend) {
  const Config c;
  EXPECT_EQ(c.ddp.bucket_mb, 25);
  EXPECT_EQ(c.ddp.first_bucket_mb, 1);
  EXPECT_TRUE(c.ddp.overlap);
  EXPECT_GT(c.ddp.timeout_s, 0);
  EXPECT_EQ(c.ddp.backend, DdpBackend::kAuto);
  const std::string yaml = to_yaml(c);
  EXPECT_NE(yaml.find("bucket_mb: 25"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("backend: auto"), std::string::npos) << yaml;
}

TEST(DdpKeys, ParseEveryKeyIntoItsType) {
  Config c;
  apply_override(c, "ddp.bucket_mb=4.5");
  apply_override(c, "ddp.first_bucket_mb=0.25");
  apply_override(c, "ddp.overlap=false");
  apply_override(c, "ddp.timeout_s=7");
  apply_override(c, "ddp.backend=gloo");
  EXPECT_DOUBLE_EQ(c.ddp.bucket_mb, 4.5);
  EXPECT_DOUBLE_EQ(c.ddp.first_bucket_mb, 0.25);
  EXPECT_FALSE(c.ddp.overlap);
  EXPECT_DOUBLE_EQ(c.ddp.timeout_s, 7);
  EXPECT_EQ(c.ddp.backend, DdpBackend::kGloo);
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(get_value(c, "ddp.backend"), "gloo");
}

TEST(DdpKeys, ABadValueIsAConfigErrorNamingTheKey) {
  for (const char* bad : {"ddp.bucket_mb=0", "ddp.first_bucket_mb=-1", "ddp.timeout_s=0"}) {
    const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
    const ConfigError e = config_error_of([&] {
      Config c;
      apply_override(c, bad);
      validate(c);
    });
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
  const ConfigError e = config_error_of([] {
    Config c;
    apply_override(c, "ddp.backend=mpi");
  });
  EXPECT_NE(std::string(e.what()).find("ddp.backend"), std::string::npos) << e.what();
}

TEST(DdpKeys, NcclOnTheCpuIsRefusedNamingTheBackendKey) {
  Config c;
  apply_override(c, "ddp.backend=nccl");
  const ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_NE(std::string(e.what()).find("ddp.backend: nccl needs device=cuda"), std::string::npos)
      << e.what();
  apply_override(c, "device=cuda");
  EXPECT_NO_THROW(validate(c));
}

}  // namespace
}  // namespace llmprof::config
