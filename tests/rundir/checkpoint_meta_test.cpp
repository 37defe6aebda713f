// checkpoint.json: the fields the loader needs, and errors that name the file and the field.
#include <gtest/gtest.h>

#include "llmprof/error.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

// The message of the DataError reading `text` as checkpoint.json throws ("" when none).
std::string error_of(const test::ScratchDir& dir, const std::string& text) {
  test::write_file(dir.file("checkpoint.json"), text);
  try {
    read_checkpoint_meta(dir.file("checkpoint.json"));
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckpointMeta, ReadsTheFieldsTheLoaderChecks) {
  test::ScratchDir dir;
  test::write_file(dir.file("checkpoint.json"),
                   R"({"schema_version": 1, "model_type": "gpt", "task": "lm", "step": 40,
                       "tensors": [{"name": "wte.weight", "shape": [64, 32]}, {"name": "ln_f.bias"}]})");
  const CheckpointMeta m = read_checkpoint_meta(dir.file("checkpoint.json"));
  EXPECT_EQ(m.model_type, "gpt");
  EXPECT_EQ(m.task, "lm");
  EXPECT_EQ(m.step, 40);
  EXPECT_EQ(m.tensors, (std::vector<std::string>{"wte.weight", "ln_f.bias"}));
}

TEST(CheckpointMeta, AMissingOrMistypedFieldIsADataErrorNamingFileAndField) {
  test::ScratchDir dir;
  const std::string file = dir.file("checkpoint.json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"tensors": []})", "model_type is missing"},
      {R"({"model_type": 3, "tensors": []})", "model_type is not a string"},
      {R"({"model_type": "gpt", "step": "x", "tensors": []})", "step is not an integer"},
      {R"({"model_type": "gpt"})", "tensors is missing"},
      {R"({"model_type": "gpt", "tensors": {}})", "tensors is not a list"},
      {R"({"model_type": "gpt", "tensors": [{"name": "a"}, 7]})", "tensors[1].name is missing"},
      {R"({"model_type": "gpt", "tensors": [{"name": null}]})", "tensors[0].name is not a string"},
      {R"([1, 2])", "is not a JSON object"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string e = error_of(dir, text);
    EXPECT_NE(e.find(file), std::string::npos) << text << " -> " << e;
    EXPECT_NE(e.find(expected), std::string::npos) << text << " -> " << e;
  }
  EXPECT_NE(error_of(dir, "{\"model_type\": ").find(file + " line 1, col"), std::string::npos)
      << "bad JSON: the file, line and column";
}

}  // namespace
}  // namespace llmprof::rundir
