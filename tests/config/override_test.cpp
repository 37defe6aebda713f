// --set key=value overrides: typed like the file, applied in order after it, and their errors.
#include <gtest/gtest.h>

#include <string>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "support/config_error.h"
#include "support/test_support.h"

namespace llmprof::config {
namespace {

using test::config_error_of;

TEST(ApplyOverride, ParsesEachTypeLikeTheFile) {
  Config c;
  apply_override(c, "optim.lr=1e-3");
  apply_override(c, "optim.weight_decay=0");
  apply_override(c, "model.bias=false");
  apply_override(c, "train.activation_checkpointing=yes");
  apply_override(c, "model.n_layer=6");
  apply_override(c, "model.n_embd=1e3");
  apply_override(c, "optim.name=sgd");
  apply_override(c, "output.name=my run #2");
  apply_override(c, "data.path=\"quoted: path\"");
  apply_override(c, " threads = 8 ");
  EXPECT_EQ(c.optim.lr, 1e-3);
  EXPECT_EQ(c.optim.weight_decay, 0.0);
  EXPECT_FALSE(c.model.bias);
  EXPECT_TRUE(c.train.activation_checkpointing);
  EXPECT_EQ(c.model.n_layer, 6);
  EXPECT_EQ(c.model.n_embd, 1000);
  EXPECT_EQ(name(c.optim.name), "sgd");
  EXPECT_EQ(c.output.name, "my run #2");
  EXPECT_EQ(c.data.path, "quoted: path");
  EXPECT_EQ(c.threads, 8);
}

TEST(ApplyOverride, NumberBeyondADoubleIsOutOfRangeNotANonNumber) {
  Config c;
  ConfigError e = config_error_of([&] { apply_override(c, "optim.lr=1e400"); });
  const std::string what = e.what();
  EXPECT_NE(what.find("optim.lr: 1e400 is out of range (0, 10]"), std::string::npos) << what;
  EXPECT_EQ(what.find("expected a number"), std::string::npos) << what;
  ConfigError tiny = config_error_of([&] { apply_override(c, "optim.weight_decay=1e-400"); });
  EXPECT_NE(std::string(tiny.what()).find("too small"), std::string::npos) << tiny.what();
  ConfigError word = config_error_of([&] { apply_override(c, "optim.lr=fast"); });
  EXPECT_NE(std::string(word.what()).find("expected a number"), std::string::npos) << word.what();
}

TEST(LoadConfig, WarmupLongerThanTheRunIsClampedWithANoteNamingBothKeys) {
  const std::string quick = std::string(LLMPROF_SOURCE_DIR) + "/configs/quickstart.yaml";
  Config c = load_config(quick, {"schedule.max_steps=30"});
  EXPECT_EQ(c.schedule.warmup_steps, 30);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("schedule.warmup_steps 50 exceeds schedule.max_steps 30"),
            std::string::npos)
      << c.notes[0];
  EXPECT_EQ(c.set_keys.size(), 1u);
  EXPECT_EQ(c.set_keys[0].first, "schedule.max_steps");
  EXPECT_TRUE(load_config(quick).notes.empty());
}

TEST(ApplyOverride, EmptyValueClearsAString) {
  Config c;
  apply_override(c, "output.dir=");
  EXPECT_EQ(c.output.dir, "");
}

TEST(ApplyOverride, MissingEqualsNamesArgumentAndExpectedForm) {
  Config c;
  ConfigError e = config_error_of([&] { apply_override(c, "model.n_layer"); });
  EXPECT_NE(std::string(e.what()).find("'model.n_layer'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("--set key=value"), std::string::npos) << e.what();
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_EQ(e.file(), "");
  EXPECT_THROW(apply_override(c, "=4"), ConfigError);
}

TEST(ApplyOverride, UnknownKeySuggestsNearestAndNamesTheArgument) {
  Config c;
  ConfigError e = config_error_of([&] { apply_override(c, "optim.lrr=0.1"); });
  EXPECT_EQ(std::string(e.what()),
            "unknown key 'optim.lrr' in --set optim.lrr=0.1; did you mean 'optim.lr'?");
  EXPECT_EQ(e.key(), "optim.lrr");
  EXPECT_EQ(e.file(), "");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.exit_code(), 2);
}

TEST(ApplyOverride, GroupNameIsNotAKey) {
  Config c;
  ConfigError e = config_error_of([&] { apply_override(c, "model=4"); });
  EXPECT_NE(std::string(e.what()).find("'model' is a group"), std::string::npos) << e.what();
}

TEST(ApplyOverride, WrongTypeSaysItCameFromSet) {
  Config c;
  ConfigError e = config_error_of([&] { apply_override(c, "model.n_layer=abc"); });
  EXPECT_EQ(std::string(e.what()),
            "model.n_layer: expected an integer, got 'abc' (from --set model.n_layer=abc)");
  EXPECT_EQ(e.key(), "model.n_layer");
  EXPECT_EQ(e.file(), "");
  EXPECT_THROW(apply_override(c, "model.n_layer=\"4\""), ConfigError);  // a quoted string
  EXPECT_THROW(apply_override(c, "model.n_layer=2.5"), ConfigError);
  EXPECT_THROW(apply_override(c, "model.bias=maybe"), ConfigError);
  EXPECT_THROW(apply_override(c, "optim.lr=fast"), ConfigError);
}

TEST(ApplyOverride, OutOfRangeLeavesTheConfigUnchanged) {
  Config c;
  ConfigError e = config_error_of([&] { apply_override(c, "train.batch_size=0"); });
  EXPECT_EQ(std::string(e.what()),
            "train.batch_size: 0 is out of range [1, 1048576] (from --set train.batch_size=0)");
  EXPECT_EQ(c.train.batch_size, 12);
  EXPECT_THROW(apply_override(c, "optim.lr=0"), ConfigError);  // (0, 10]: 0 excluded
  EXPECT_THROW(apply_override(c, "device=tpu"), ConfigError);
  EXPECT_THROW(apply_override(c, "model.n_layer=99999999999999999999"), ConfigError);
}

TEST(ApplyOverride, CudaWithAnOrdinalSetsDeviceAndIndex) {
  Config c;
  apply_override(c, "device=cuda:3");
  EXPECT_EQ(c.device.kind, DeviceKind::kCuda);
  EXPECT_EQ(c.device.index, 3);
  EXPECT_EQ(get_value(c, "device"), "cuda");
  EXPECT_EQ(get_value(c, "device_index"), "3");
  for (const char* bad : {"device=cuda:", "device=cuda:x", "device=cuda:-1", "device=cuda:1024",
                          "device=cuda:1e2", "device=cuda: 1"}) {
    Config d;
    ConfigError e = config_error_of([&] { apply_override(d, bad); });
    EXPECT_NE(std::string(e.what()).find("the device ordinal after 'cuda:' must be 0..1023"),
              std::string::npos)
        << bad << ": " << e.what();
    EXPECT_EQ(d.device.kind, DeviceKind::kCpu) << "a rejected value leaves the config as it was";
  }
}

TEST(LoadConfig, AppliesOverridesAfterTheFileInOrder) {
  test::ScratchDir dir("config");
  test::write_file(dir.file("c.yaml"), "model:\n  n_layer: 8\noptim:\n  lr: 0.01\n");
  Config c =
      load_config(dir.file("c.yaml"), {"model.n_layer=2", "optim.lr=2e-3", "model.n_layer=3"});
  EXPECT_EQ(c.model.n_layer, 3);
  EXPECT_EQ(c.optim.lr, 2e-3);
}

TEST(LoadConfig, OverridesCanRepairWhatTheFileLeftInconsistent) {
  // validate() runs once, after every override.
  test::ScratchDir dir("config");
  test::write_file(dir.file("c.yaml"), "model:\n  n_head: 5\n");
  Config c = load_config(dir.file("c.yaml"), {"model.n_embd=160"});
  EXPECT_EQ(c.model.n_embd, 160);
}

TEST(LoadConfig, CrossKeyErrorCausedByOverridePointsAtTheOverride) {
  test::ScratchDir dir("config");
  std::string path = dir.file("c.yaml");
  test::write_file(path, "threads: 1\n");
  ConfigError e = config_error_of([&] { load_config(path, {"model.n_head=5"}); });
  EXPECT_EQ(std::string(e.what()),
            "model.n_head: 5 does not divide model.n_embd=128 (from --set model.n_head=5)");
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.key(), "model.n_head");
}

TEST(LoadConfig, OverrideErrorStillRaisedWhenFileIsFine) {
  test::ScratchDir dir("config");
  test::write_file(dir.file("c.yaml"), "threads: 1\n");
  ConfigError e = config_error_of([&] { load_config(dir.file("c.yaml"), {"model.n_layr=2"}); });
  EXPECT_NE(std::string(e.what()).find("did you mean 'model.n_layer'?"), std::string::npos);
}

}  // namespace
}  // namespace llmprof::config
