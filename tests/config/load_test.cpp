// load_config on YAML and JSON files: defaults, typing rules, and each error class with the
// file, line, column and key it must name.
#include <gtest/gtest.h>

#include <string>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "support/config_error.h"
#include "support/test_support.h"

namespace llmprof::config {
namespace {

using test::config_error_of;

// A fixture file under tests/config/fixtures.
std::string fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/config/fixtures/" + name;
}

// Writes text into a scratch file and loads it, returning the ConfigError it must raise.
class LoadConfigTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_.file(name);
    test::write_file(path, text);
    return path;
  }
  ConfigError load_error(const std::string& name, const std::string& text) {
    std::string path = write(name, text);
    return config_error_of([&] { load_config(path); });
  }
  test::ScratchDir dir_{"config"};
};

// Expects e to be the bad-input ConfigError of file, at line (and key when given).
void expect_located(const ConfigError& e,
                    const std::string& file,
                    int64_t line,
                    const std::string& key = {}) {
  std::string what = e.what();
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_EQ(e.file(), file);
  EXPECT_EQ(e.line(), line) << what;
  EXPECT_NE(what.find(file), std::string::npos) << what;
  EXPECT_NE(what.find("line " + std::to_string(line)), std::string::npos) << what;
  if (!key.empty()) {
    EXPECT_EQ(e.key(), key);
    EXPECT_NE(what.find(key), std::string::npos) << what;
  }
}

TEST_F(LoadConfigTest, KeysNotGivenKeepTheirDefaults) {
  std::string path = write("one_key.yaml", "# only the depth\nmodel:\n  n_layer: 4\n");
  Config c = load_config(path);
  EXPECT_EQ(c.model.n_layer, 4);
  EXPECT_EQ(name(c.optim.name), "adamw");
  EXPECT_EQ(c.optim.lr, 1e-3);
  EXPECT_EQ(c.train.batch_size, 12);
  EXPECT_EQ(name(c.device.kind), "cpu");
  EXPECT_EQ(c.source_file, path);
}

// An empty file is refused (a wrong path or a truncated copy), not run on all defaults.
TEST_F(LoadConfigTest, EmptyFileIsAConfigErrorSayingSo) {
  for (const char* text : {"", "\n  \n\t\n"}) {
    ConfigError e = load_error("empty.yaml", text);
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(e.file(), dir_.file("empty.yaml"));
    EXPECT_NE(std::string(e.what()).find("empty.yaml: the config file is empty"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(LoadConfigTest, CommentsOnlyFileIsAConfigErrorSayingSo) {
  ConfigError e = load_error("comments.yaml", "# nothing set\n# model:\n#   n_layer: 4\n");
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_NE(std::string(e.what()).find("comments.yaml: the config file is empty"),
            std::string::npos)
      << e.what();
}

// A binary file read as YAML: the error names the file and carries no raw byte.
TEST_F(LoadConfigTest, BinaryFileErrorHasOnlyPrintableBytes) {
  std::string text = "\x7f" "ELF\x02\x01\x01";
  for (int i = 0; i < 4000; ++i) text += static_cast<char>((i * 37) % 256);
  ConfigError e = load_error("blob.yaml", text);
  const std::string what = e.what();
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_NE(what.find("blob.yaml"), std::string::npos) << what;
  for (unsigned char c : what) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << what;
  EXPECT_LT(what.size(), 1000u) << what;
}

// Found with the config fuzz target: a bench.variants entry holding raw bytes went into the
// message of the check that refused it; now every check's message is escaped whole.
TEST_F(LoadConfigTest, RefusedListEntryIsEscaped) {
  ConfigError e = load_error("variants.yaml", "bench:\n  variants: fp32,bf1\xca\xd3t8\n");
  const std::string what = e.what();
  EXPECT_NE(what.find("bench.variants: 'bf1\\xca\\xd3t8' is not one of fp32|bf16|int8"),
            std::string::npos)
      << what;
  for (unsigned char c : what) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << what;
}

TEST_F(LoadConfigTest, LongUnknownKeyIsCutWithItsLength) {
  const std::string key(500, 'k');  // yaml-cpp takes plain keys up to 1024 bytes
  ConfigError e = load_error("long.yaml", key + ": 1\n");
  const std::string what = e.what();
  EXPECT_NE(what.find("unknown key '" + std::string(80, 'k') + "... (500 bytes)'"),
            std::string::npos)
      << what;
}

TEST_F(LoadConfigTest, FixtureYamlAndJsonGiveTheSameConfig) {
  Config y = load_config(fixture("small.yaml"));
  Config j = load_config(fixture("small.json"));
  for (const KeyInfo& k : list_keys())
    EXPECT_EQ(get_value(y, k.path), get_value(j, k.path)) << k.path;
  EXPECT_EQ(y.model.n_layer, 2);
  EXPECT_EQ(y.model.bias, false);
  EXPECT_EQ(y.optim.lr, 3e-4);
  EXPECT_EQ(y.profile.peak_flops_per_s, 1.5e12);
  EXPECT_EQ(y.output.name, "tiny run");
  EXPECT_EQ(y.threads, 2);
  EXPECT_EQ(y.source_file, fixture("small.yaml"));
  EXPECT_EQ(j.source_file, fixture("small.json"));
}

TEST_F(LoadConfigTest, IntegralFloatsAreAcceptedForInts) {
  Config c = load_config(write("ints.yaml", "model:\n  n_layer: 3.0\n  n_embd: 1e3\n"));
  EXPECT_EQ(c.model.n_layer, 3);
  EXPECT_EQ(c.model.n_embd, 1000);
}

TEST_F(LoadConfigTest, YamlBoolsAndIntsForFloatsAreAccepted) {
  Config c = load_config(write("b.yml",
                               "model:\n  bias: no\ntrain:\n  activation_checkpointing: yes\n"
                               "optim:\n  lr: 1\n"));
  EXPECT_FALSE(c.model.bias);
  EXPECT_TRUE(c.train.activation_checkpointing);
  EXPECT_EQ(c.optim.lr, 1.0);
}

TEST_F(LoadConfigTest, FlatDottedKeysAndOtherExtensionsReadAsYaml) {
  Config c = load_config(write("flat.cfg", "model.n_layer: 7\nthreads: 3\n"));
  EXPECT_EQ(c.model.n_layer, 7);
  EXPECT_EQ(c.threads, 3);
}

TEST_F(LoadConfigTest, MissingFileIsNamed) {
  std::string path = dir_.file("nope.yaml");
  ConfigError e = config_error_of([&] { load_config(path); });
  EXPECT_EQ(std::string(e.what()), "config file '" + path + "' not found");
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_EQ(e.file(), path);
}

TEST_F(LoadConfigTest, MalformedYamlNamesFileAndLine) {
  std::string path = dir_.file("bad.yaml");
  ConfigError e =
      load_error("bad.yaml", "model:\n  n_layer: 4\n  n_head: 2: 3\ntrain:\n  seed: 1\n");
  expect_located(e, path, 3);
  EXPECT_EQ(e.column(), 12);
  EXPECT_EQ(std::string(e.what()),
            "malformed YAML in " + path + " line 3, col 12: illegal map value");
}

TEST_F(LoadConfigTest, TabIndentedYamlNamesTheLine) {
  std::string path = dir_.file("tab.yaml");
  ConfigError e = load_error("tab.yaml", "model:\n  n_layer: 4\n\tn_head: 2\n");
  expect_located(e, path, 3);
  EXPECT_NE(std::string(e.what()).find("tab"), std::string::npos) << e.what();
}

TEST_F(LoadConfigTest, MalformedJsonNamesFileLineAndColumn) {
  std::string path = dir_.file("bad.json");
  ConfigError e = load_error("bad.json", "{\n  \"model\": {\n    \"n_layer\": 4,\n  }\n}\n");
  expect_located(e, path, 4);
  EXPECT_EQ(e.column(), 3);
  EXPECT_NE(std::string(e.what()).find("malformed JSON in " + path + " line 4, col 3: "),
            std::string::npos)
      << e.what();
}

TEST_F(LoadConfigTest, UnknownKeySuggestsNearestPath) {
  std::string path = dir_.file("typo.yaml");
  ConfigError e = load_error("typo.yaml", "model:\n  n_head: 4\n  n_layr: 2\n");
  EXPECT_EQ(std::string(e.what()), "unknown key 'model.n_layr' in " + path +
                                       " line 3 col 3; did you mean 'model.n_layer'?");
  expect_located(e, path, 3, "model.n_layr");
  EXPECT_EQ(e.column(), 3);
}

TEST_F(LoadConfigTest, UnknownKeyInWrongGroupSuggestsTheRightGroup) {
  ConfigError e = load_error("group.yaml", "train:\n  lr: 0.1\n");
  EXPECT_NE(std::string(e.what()).find("unknown key 'train.lr'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("did you mean 'optim.lr'?"), std::string::npos) << e.what();
}

TEST_F(LoadConfigTest, UnknownGroupSuggestsTheGroup) {
  ConfigError e = load_error("modle.yaml", "threads: 1\nmodle:\n  n_layer: 2\n");
  EXPECT_NE(std::string(e.what()).find("unknown key 'modle'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("did you mean 'model'?"), std::string::npos) << e.what();
  EXPECT_EQ(e.line(), 2);
}

TEST_F(LoadConfigTest, FarFetchedKeyGetsNoSuggestion) {
  ConfigError e = load_error("far.yaml", "model:\n  zebra_count: 2\n");
  EXPECT_EQ(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("llmprof config keys"), std::string::npos) << e.what();
}

TEST_F(LoadConfigTest, UnknownJsonKeyNamesLineAndColumn) {
  std::string path = dir_.file("typo.json");
  ConfigError e =
      load_error("typo.json", "{\n  \"optim\": {\"lr\": 0.01,\n    \"weight_decy\": 0}\n}\n");
  EXPECT_EQ(std::string(e.what()), "unknown key 'optim.weight_decy' in " + path +
                                       " line 3 col 5; did you mean 'optim.weight_decay'?");
  expect_located(e, path, 3, "optim.weight_decy");
}

TEST_F(LoadConfigTest, WrongTypeNamesKeyValueFileLineAndColumn) {
  std::string path = dir_.file("type.yaml");
  ConfigError e = load_error("type.yaml", "model:\n  n_head: 4\n  n_layer: abc\n");
  EXPECT_EQ(std::string(e.what()),
            "model.n_layer: expected an integer, got 'abc' (" + path + " line 3, col 12)");
  expect_located(e, path, 3, "model.n_layer");
  EXPECT_EQ(e.column(), 12);
}

TEST_F(LoadConfigTest, WrongTypeInJsonNamesLineAndColumn) {
  std::string path = dir_.file("type.json");
  ConfigError e = load_error("type.json", "{\"model\": {\n  \"n_layer\": \"four\"}}\n");
  EXPECT_EQ(std::string(e.what()), "model.n_layer: expected an integer, got the string \"four\" (" +
                                       path + " line 2, col 14)");
  expect_located(e, path, 2, "model.n_layer");
}

TEST_F(LoadConfigTest, QuotedNumberIsAStringNotAnInt) {
  ConfigError e = load_error("q.yaml", "train:\n  batch_size: \"8\"\n");
  EXPECT_NE(std::string(e.what()).find("expected an integer, got the string \"8\""),
            std::string::npos)
      << e.what();
}

TEST_F(LoadConfigTest, FractionalValueForIntIsRejected) {
  std::string path = dir_.file("frac.yaml");
  ConfigError e = load_error("frac.yaml", "model:\n  n_layer: 3.5\n");
  EXPECT_EQ(std::string(e.what()),
            "model.n_layer: expected an integer, got '3.5' (" + path + " line 2, col 12)");
}

TEST_F(LoadConfigTest, OutOfRangeNamesRangeFileAndLine) {
  std::string path = dir_.file("range.yaml");
  ConfigError e = load_error("range.yaml", "train:\n  batch_size: 0\n");
  EXPECT_EQ(std::string(e.what()),
            "train.batch_size: 0 is out of range [1, 1048576] (" + path + " line 2, col 15)");
  expect_located(e, path, 2, "train.batch_size");
}

TEST_F(LoadConfigTest, OpenFloatBoundIsExcluded) {
  ConfigError e = load_error("open.yaml", "data:\n  val_fraction: 1.0\n");
  EXPECT_NE(std::string(e.what()).find("data.val_fraction: 1 is out of range (0, 1)"),
            std::string::npos)
      << e.what();
}

TEST_F(LoadConfigTest, BadEnumListsChoices) {
  std::string path = dir_.file("enum.yaml");
  ConfigError e = load_error("enum.yaml", "optim:\n  name: adamx\n");
  EXPECT_EQ(std::string(e.what()),
            "optim.name: 'adamx' is not one of sgd|adam|adamw; did you mean 'adamw'? (" + path +
                " line 2, col 9)");
  expect_located(e, path, 2, "optim.name");
}

TEST_F(LoadConfigTest, BadBoolIsRejected) {
  ConfigError e = load_error("bool.yaml", "model:\n  bias: maybe\n");
  EXPECT_NE(std::string(e.what()).find("model.bias: expected true or false, got 'maybe'"),
            std::string::npos)
      << e.what();
}

TEST_F(LoadConfigTest, GroupThatIsNotAMappingIsRejected) {
  std::string path = dir_.file("group.yaml");
  ConfigError e = load_error("group.yaml", "threads: 1\nmodel: 4\n");
  EXPECT_NE(std::string(e.what()).find("model: expected a mapping"), std::string::npos) << e.what();
  expect_located(e, path, 2, "model");
}

TEST_F(LoadConfigTest, TopLevelListIsRejected) {
  ConfigError e = load_error("list.yaml", "- model\n- data\n");
  EXPECT_NE(std::string(e.what()).find("expected a mapping of config groups"), std::string::npos)
      << e.what();
}

TEST_F(LoadConfigTest, KeyGivenTwiceIsRejected) {
  std::string path = dir_.file("dup.yaml");
  ConfigError e = load_error("dup.yaml", "model:\n  n_layer: 2\n  n_layer: 3\n");
  EXPECT_NE(std::string(e.what()).find("duplicate key 'model.n_layer'"), std::string::npos)
      << e.what();
  expect_located(e, path, 3, "model.n_layer");
}

TEST_F(LoadConfigTest, InconsistentKeysPointAtTheFileLine) {
  std::string path = dir_.file("heads.yaml");
  ConfigError e = load_error("heads.yaml", "model:\n  n_embd: 128\n  n_head: 5\n");
  EXPECT_EQ(std::string(e.what()),
            "model.n_head: 5 does not divide model.n_embd=128 (" + path + " line 3, col 11)");
  expect_located(e, path, 3, "model.n_head");
}

TEST_F(LoadConfigTest, InconsistentKeysInJsonNameTheFile) {
  std::string path = dir_.file("fp16.json");
  ConfigError e = load_error("fp16.json", "{\"train\": {\"precision\": \"fp16\"}}");
  EXPECT_NE(std::string(e.what()).find("fp16 needs device=cuda"), std::string::npos);
  expect_located(e, path, 1, "train.precision");
}

// train.cuda_expandable_segments reads as a bool under train; on the CPU device the error points
// at its line.
TEST_F(LoadConfigTest, CudaExpandableSegmentsParsesOnCudaAndIsRefusedAtItsLineOnCpu) {
  const std::string cuda =
      write("cuda.yaml", "device: cuda\ntrain:\n  cuda_expandable_segments: true\n");
  EXPECT_TRUE(load_config(cuda).train.cuda_expandable_segments);
  EXPECT_FALSE(
      load_config(cuda, {"train.cuda_expandable_segments=false"}).train.cuda_expandable_segments);
  std::string path = dir_.file("cpu.yaml");
  ConfigError e = load_error("cpu.yaml", "train:\n  cuda_expandable_segments: true\n");
  EXPECT_NE(std::string(e.what()).find("needs device=cuda (device=cpu)"), std::string::npos)
      << e.what();
  expect_located(e, path, 2, "train.cuda_expandable_segments");
  ConfigError bad = load_error("bad.yaml", "train:\n  cuda_expandable_segments: maybe\n");
  EXPECT_EQ(bad.key(), "train.cuda_expandable_segments") << bad.what();
}

TEST_F(LoadConfigTest, CrossKeyErrorOnDefaultsNamesTheFile) {
  // n_embd set in the file, n_head left at 4: the blame goes to the key that was written.
  std::string path = dir_.file("embd.yaml");
  ConfigError e = load_error("embd.yaml", "model:\n  n_embd: 130\n");
  EXPECT_EQ(std::string(e.what()),
            "model.n_head: 4 does not divide model.n_embd=130 (" + path + " line 2, col 11)");
  EXPECT_EQ(e.file(), path);
}

TEST_F(LoadConfigTest, LlamaWidthThatHeadsDoNotDivideIsTheDivisibilityError) {
  // head_dim is left at 0: 30 / 4 heads is not a width, so the error is the divisibility one
  // (as for 34), never a head_dim the user did not set.
  std::string path = dir_.file("llama30.yaml");
  ConfigError e = load_error("llama30.yaml", "model:\n  type: llama\n  n_embd: 30\n  n_head: 4\n");
  EXPECT_EQ(std::string(e.what()),
            "model.n_head: 4 does not divide model.n_embd=30 (" + path + " line 4, col 11)");
  expect_located(e, path, 4, "model.n_head");
}

TEST_F(LoadConfigTest, LlamaOddHeadWidthNamesTheKeysSet) {
  std::string path = dir_.file("llama28.yaml");
  ConfigError e = load_error("llama28.yaml", "model:\n  type: llama\n  n_embd: 28\n  n_head: 4\n");
  EXPECT_EQ(std::string(e.what()),
            "model.n_embd: 28 / model.n_head=4 gives heads 7 wide; the rotary embedding needs an "
            "even head width: change either, or set model.head_dim (" +
                path + " line 3, col 11)");
  expect_located(e, path, 3, "model.n_embd");
}

TEST_F(LoadConfigTest, LlamaOddHeadDimSetNamesHeadDim) {
  std::string path = dir_.file("llama_hd.yaml");
  ConfigError e = load_error("llama_hd.yaml",
                             "model:\n  type: llama\n  n_embd: 28\n  n_head: 4\n  head_dim: 9\n");
  EXPECT_NE(std::string(e.what()).find("model.head_dim: the rotary embedding needs an even head "
                                       "width, got 9"),
            std::string::npos)
      << e.what();
  expect_located(e, path, 5, "model.head_dim");
}

}  // namespace
}  // namespace llmprof::config
