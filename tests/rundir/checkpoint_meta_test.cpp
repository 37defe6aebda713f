// checkpoint.json's typed document: the fields the loader needs, errors that name the file and
// the field, write-then-read, files written before it rewrite byte-identical, unknown keys kept.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "llmprof/error.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
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
  EXPECT_EQ(m.tensor_names(), (std::vector<std::string>{"wte.weight", "ln_f.bias"}));
  EXPECT_EQ(m.tensors[0].shape, (std::vector<int64_t>{64, 32}));
  EXPECT_TRUE(m.tensors[1].shape.empty());
  EXPECT_EQ(m.rows_of({"word_embeddings.weight", "wte.weight"}), std::optional<int64_t>(64));
  EXPECT_FALSE(m.rows_of({"ln_f.bias"}).has_value());  // written without a shape
}

TEST(CheckpointMeta, AMissingOrMistypedFieldIsADataErrorNamingFileAndField) {
  test::ScratchDir dir;
  const std::string file = dir.file("checkpoint.json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"tensors": []})", "model_type is missing"},
      {R"({"model_type": 3, "tensors": []})", "model_type is 3, not a string"},
      {R"({"model_type": "gpt", "step": "x", "tensors": []})", "step is \"x\", not an integer"},
      {R"({"model_type": "gpt"})", "tensors is missing"},
      {R"({"model_type": "gpt", "tensors": {}})", "tensors is {}, not a list"},
      {R"({"model_type": "gpt", "tensors": [{"name": "a"}, 7]})", "tensors[1].name is missing"},
      {R"({"model_type": "gpt", "tensors": [{"name": null}]})",
       "tensors[0].name is null, not a string"},
      {R"({"model_type": "gpt", "tensors": [{"name": "a", "shape": [2.5]}]})",
       "tensors.0.shape is [2.5], not a list of integers"},
      {R"({"schema_version": 2, "model_type": "gpt", "tensors": []})",
       "schema_version 2 is newer than this llmprof reads (1)"},
      {R"({"model_type": "gpt", "tensors": [], "tokenizer": {"type": "char", "sha256": "ab",
           "dir": "tokenizer", "files": []}})",
       "tokenizer.sha256 is \"ab\", not 64 lowercase hex digits"},
      {R"([1, 2])", ": not a JSON object (an array)"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string e = error_of(dir, text);
    EXPECT_NE(e.find(file), std::string::npos) << text << " -> " << e;
    EXPECT_NE(e.find(expected), std::string::npos) << text << " -> " << e;
  }
  EXPECT_NE(error_of(dir, "{\"model_type\": ").find(file + " line 1, col"), std::string::npos)
      << "bad JSON: the file, line and column";
}

// A checkpoint with every field: what the writer writes the reader reads back, byte for byte.
TEST(CheckpointMeta, WriteThenReadGivesTheSameFields) {
  CheckpointMeta m;
  m.model_type = "distilbert";
  m.task = "mlm";
  m.step = 4;
  m.model = CheckpointModelShape{1, 2, 32, 32, 64, 32, 2};
  m.tensors = {{"word_embeddings.weight", {30522, 32}}, {"ln.bias", {32}}};
  m.tokenizer = CheckpointTokenizer{"wordpiece", std::string(64, 'a'), 30522, true, "tokenizer",
                                    {"vocab.txt", "tokenizer_config.json"}, "/data/vocab.txt"};
  m.hf_config = "hf_config.json";
  const std::string text = checkpoint_meta_text(m);
  const CheckpointMeta read = parse_checkpoint_meta(text, "c/checkpoint.json");
  EXPECT_EQ(read.schema_version, kCheckpointSchemaVersion);
  EXPECT_EQ(read.model_type, "distilbert");
  ASSERT_TRUE(read.model.has_value());
  EXPECT_EQ(read.model->ffn_dim, 64);
  EXPECT_EQ(read.model->num_labels, 2);
  EXPECT_EQ(read.rows_of({"word_embeddings.weight"}), std::optional<int64_t>(30522));
  ASSERT_TRUE(read.tokenizer.has_value());
  EXPECT_EQ(read.tokenizer->files, m.tokenizer->files);
  EXPECT_FALSE(read.tokenizer_ref.has_value());
  EXPECT_EQ(read.hf_config, "hf_config.json");
  EXPECT_TRUE(read.unknown.empty());
  EXPECT_EQ(checkpoint_meta_text(read), text);
}

// A tokenizer without files (a test's fake) is recorded by kind and path, and read back so.
TEST(CheckpointMeta, ATokenizerWithoutFilesIsItsKindAndPath) {
  CheckpointMeta m;
  m.model_type = "gpt";
  m.tokenizer_ref = CheckpointTokenizerRef{"char", ""};
  const std::string text = checkpoint_meta_text(m);
  EXPECT_NE(text.find("\"tokenizer\": {\n    \"type\": \"char\",\n    \"vocab_path\": \"\"\n  }"),
            std::string::npos)
      << text;
  const CheckpointMeta read = parse_checkpoint_meta(text, "x");
  EXPECT_FALSE(read.tokenizer.has_value());
  ASSERT_TRUE(read.tokenizer_ref.has_value());
  EXPECT_EQ(read.tokenizer_ref->type, "char");
}

TEST(CheckpointMeta, FilesWrittenBeforeTheTypedDocumentRewriteByteIdentical) {
  const std::string root = std::string(LLMPROF_SOURCE_DIR) + "/tests/rundir/fixtures/main-f279ee2";
  int files = 0;
  for (const char* name : {"checkpoint-gpt", "checkpoint-mlm"}) {
    const std::string path = root + "/" + name + "/checkpoint.json";
    const std::string text = test::read_file(path);
    const CheckpointMeta m = parse_checkpoint_meta(text, path);
    EXPECT_EQ(checkpoint_meta_text(m), text) << path;
    EXPECT_TRUE(m.unknown.empty()) << path << ": " << m.unknown.begin()->first;
    EXPECT_TRUE(m.tokenizer.has_value()) << path;
    ++files;
  }
  EXPECT_EQ(files, 2);
}

TEST(CheckpointMeta, UnknownKeysAreKeptWhenTheFileIsRewritten) {
  const std::string text = R"({"model_type": "gpt", "tensors": [{"name": "a", "dtype": "f32"}],
                               "optimizer": {"kind": "adamw"}, "model": {"n_kv_head": 2}})";
  const CheckpointMeta m = parse_checkpoint_meta(text, "u.json");
  ASSERT_EQ(m.unknown.size(), 3u);
  EXPECT_EQ(m.unknown.at("/optimizer"), R"({"kind":"adamw"})");
  EXPECT_EQ(m.unknown.at("/tensors/0/dtype"), "\"f32\"");
  EXPECT_EQ(m.unknown.at("/model/n_kv_head"), "2");
  const std::string rewritten = checkpoint_meta_text(m);
  EXPECT_NE(rewritten.find("\"dtype\": \"f32\""), std::string::npos) << rewritten;
  EXPECT_EQ(checkpoint_meta_text(parse_checkpoint_meta(rewritten, "u")), rewritten);
}

// docs/checkpoint.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(CheckpointMeta, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = checkpoint_meta_fields_doc();
  doc_test::expect_committed_doc("checkpoint.md", generated);
  for (const char* field : {"`tensors[].shape`", "`tokenizer.sha256`", "`model.n_layer`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
