// Hostile input to the typed documents' shared reader (json_doc): values nested far deeper than
// any llmprof writes, and non-ASCII bytes in a value of the wrong type (env, eval, bench, and the
// checkpoint reader's tensor names). Found against the libFuzzer targets (inputs kept in
// tests/fuzz/regressions/).
#include <gtest/gtest.h>

#include <string>

#include "rundir/doc_test.h"
#include "llmprof/rundir/bench_doc.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/rundir/env.h"
#include "llmprof/rundir/eval_doc.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::rundir {
namespace {

using doc_test::expect_data_error;

// n nested empty arrays: "[[...]]".
std::string nested_arrays(int n) { return std::string(n, '[') + std::string(n, ']'); }

TEST(DocInput, DeepUnknownFieldIsADataErrorNotAStackOverflow) {
  const std::string text = "{\"schema_version\": 1, \"extra\": " + nested_arrays(100000) + "}";
  expect_data_error([&] { parse_env(text, "env.json"); },
                    "env.json: extra nests arrays or objects over 64 levels deep");
  const std::string bench =
      "{\"schema_version\": 1, \"rows\": [], \"extra\": " + nested_arrays(100000) + "}";
  expect_data_error([&] { parse_bench_doc(bench, "bench.json"); },
                    "bench.json: extra nests arrays");
}

TEST(DocInput, UnknownFieldNestedWithinTheLimitIsKeptAndWrittenBack) {
  const std::string text = "{\"schema_version\": 1, \"extra\": " + nested_arrays(64) + "}";
  const Env env = parse_env(text, "env.json");
  ASSERT_EQ(env.unknown.count("/extra"), 1u);
  EXPECT_EQ(env.unknown.at("/extra"), nested_arrays(64));
  EXPECT_EQ(parse_env(env_text(env), "env.json").unknown.at("/extra"), nested_arrays(64));
}

TEST(DocInput, DeepValueOfTheWrongTypeIsDescribedNotDumped) {
  const std::string text = "{\"schema_version\": 1, \"sets\": " + nested_arrays(100000) + "}";
  expect_data_error([&] { parse_eval_doc(text, "eval.json"); },
                    "eval.json: sets is an array of 1 items nested over 32 levels deep");
  const std::string env = "{\"schema_version\": 1, \"device\": " + nested_arrays(100000) + "}";
  expect_data_error([&] { parse_env(env, "env.json"); }, "nested over 32 levels deep");
  const std::string meta = "{\"model_type\": \"gpt\", \"tensors\": [{\"name\": " +
                           nested_arrays(100000) + ", \"shape\": [1]}]}";
  expect_data_error([&] { parse_checkpoint_meta(meta, "checkpoint.json"); },
                    "checkpoint.json: tensors[0].name is an array of 1 items nested over 32");
}

TEST(DocInput, NonAsciiValueOfTheWrongTypeIsEscapedInTheMessage) {
  // "threads": "\u00e9" arrives as the two UTF-8 bytes C3 A9.
  const std::string text = "{\"schema_version\": 1, \"threads\": \"\xc3\xa9\"}";
  try {
    parse_env(text, "env.json");
    ADD_FAILURE() << "no DataError thrown";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("env.json: threads is"), std::string::npos) << what;
    for (char c : what) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << what;
  }
}

TEST(DocInput, EveryDocumentThatIsNotAnObjectSaysSoInOneWording) {
  // One reader opening (json_doc's parse_object) for the five documents: the file and the type.
  expect_data_error([] { parse_summary("[1]", "s.json"); }, "s.json: not a JSON object (an array)");
  expect_data_error([] { parse_env("\"x\"", "e.json"); }, "e.json: not a JSON object (a string)");
  expect_data_error([] { parse_eval_doc("3", "v.json"); }, "v.json: not a JSON object (a number)");
  expect_data_error([] { parse_bench_doc("null", "b.json"); },
                    "b.json: not a JSON object (a null)");
  expect_data_error([] { parse_checkpoint_meta("true", "c.json"); },
                    "c.json: not a JSON object (a boolean)");
  expect_data_error([] { parse_summary("{\"a\": ", "s.json"); }, "s.json line 1, col");
}

}  // namespace
}  // namespace llmprof::rundir
