// The safetensors writer: byte-identical to the independent writer of make_fixtures.py and to the
// serialized bytes the reference implementation's own tests pin (safetensors/src/tensor.rs
// test_serialization, test_empty, test_serialization_forced_alignement); round trips through the
// reader; refuses bad input before writing anything.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "hf/fixture_paths.h"
#include "llmprof/error.h"
#include "llmprof/hf/safetensors.h"
#include "support/test_support.h"

namespace llmprof::hf {
namespace {

std::string le_u64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

TensorToWrite tensor(const std::string& name,
                     DType dtype,
                     std::vector<int64_t> shape,
                     const std::string& bytes) {
  return {name, dtype, std::move(shape), bytes.data(), bytes.size()};
}

// Rewrites a fixture from what the reader sees in it, the tensors given in reverse file order
// (the writer must sort them itself), and compares the bytes.
void expect_rewrite_identical(const std::string& fixture) {
  SCOPED_TRACE(fixture);
  const SafetensorsFile in = SafetensorsFile::open(test::hf_fixture(fixture));
  std::vector<TensorToWrite> tensors;
  for (const TensorView& t : in.tensors()) {
    tensors.push_back({t.name, t.dtype, t.shape, t.data, t.size_bytes});
  }
  std::reverse(tensors.begin(), tensors.end());
  test::ScratchDir dir;
  const std::string out = dir.file("out.safetensors");
  write_safetensors(
      out, tensors,
      in.has_metadata() ? std::optional<SafetensorsMetadata>(in.metadata()) : std::nullopt);
  const std::string want = test::read_file(test::hf_fixture(fixture));
  const std::string got = test::read_file(out);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got, want) << "first difference at byte "
                       << (std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin());
}

TEST(WriteSafetensors, ByteIdenticalToThePythonWriterForEveryValidFixture) {
  for (const char* f : {"f32.safetensors", "f16.safetensors", "bf16.safetensors",
                        "mixed.safetensors", "empty.safetensors", "empty_metadata.safetensors"}) {
    expect_rewrite_identical(f);
  }
}

TEST(WriteSafetensors, HandBuiltInputMatchesThePythonWriter) {
  // f32.safetensors from values typed here, not read back: make_fixtures.py's F32_WEIGHT/F32_BIAS.
  const std::string weight = f32_bytes({0.0f, 1.0f, -2.5f, 3.25f, 1e-38f, 65504.0f});
  const std::string bias = f32_bytes({-0.0f, INFINITY, NAN, -INFINITY, 1.401298464324817e-45f});
  test::ScratchDir dir;
  write_safetensors(
      dir.file("f.safetensors"),
      {tensor("weight", DType::kF32, {2, 3}, weight), tensor("bias", DType::kF32, {5}, bias)},
      SafetensorsMetadata{{"format", "pt"}});
  EXPECT_EQ(test::read_file(dir.file("f.safetensors")),
            test::read_file(test::hf_fixture("f32.safetensors")));
}

TEST(SafetensorsHeader, MatchesTheReferenceImplementationsOwnSerializationTests) {
  // test_serialization: "attn.0" F32 [1, 2, 3]; 64 bytes of JSON, no padding needed.
  const std::string data = f32_bytes({0, 1, 2, 3, 4, 5});
  EXPECT_EQ(safetensors_header({tensor("attn.0", DType::kF32, {1, 2, 3}, data)}, std::nullopt),
            le_u64(64) + R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})");
  // test_serialization_forced_alignement: "attn0" F32 [1, 1, 2, 3]; 65 bytes padded to 72.
  EXPECT_EQ(safetensors_header({tensor("attn0", DType::kF32, {1, 1, 2, 3}, data)}, std::nullopt),
            le_u64(72) + R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}})" +
                std::string(7, ' '));
  // test_empty: no tensors, without and with metadata.
  EXPECT_EQ(safetensors_header({}, std::nullopt), le_u64(8) + "{}" + std::string(6, ' '));
  EXPECT_EQ(safetensors_header({}, SafetensorsMetadata{{"framework", "pt"}}),
            le_u64(40) + R"({"__metadata__":{"framework":"pt"}})" + std::string(5, ' '));
}

TEST(SafetensorsHeader, SortsByDtypeDescendingThenNameBytewise) {
  const std::string b2(2, '\0'), b4(4, '\0'), b8(8, '\0');
  const std::string h =
      safetensors_header({tensor("b", DType::kF16, {1}, b2), tensor("a", DType::kF16, {1}, b2),
                          tensor("z", DType::kBF16, {1}, b2), tensor("y", DType::kF32, {1}, b4),
                          tensor("Y", DType::kF32, {1}, b4), tensor("x", DType::kI64, {1}, b8),
                          tensor("u", DType::kU8, {2}, b2)},
                         std::nullopt);
  std::vector<size_t> at;
  for (const char* key : {"\"x\"", "\"Y\"", "\"y\"", "\"z\"", "\"a\"", "\"b\"", "\"u\""}) {
    at.push_back(h.find(key));
    ASSERT_NE(at.back(), std::string::npos) << key;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << h.substr(8);
  EXPECT_NE(h.find(R"("x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]})"), std::string::npos);
  EXPECT_NE(h.find(R"("u":{"dtype":"U8","shape":[2],"data_offsets":[22,24]})"), std::string::npos);
  EXPECT_EQ((h.size() - 8) % 8, 0u);
}

TEST(WriteSafetensors, RoundTripsThroughTheReader) {
  const std::vector<float> w = {1.5f, -0.0f, 3e-40f, NAN, 1e30f, -7.0f};
  const std::string wb = f32_bytes(w);
  const std::string hb = std::string("\x00\x3c\x01\x00\x00\xfc", 6);  // 1, 2^-24, -inf
  const std::string bb = std::string("\x80\x3f\x49\x40", 4);          // 1, 3.140625
  test::ScratchDir dir;
  const std::string path = dir.file("rt.safetensors");
  write_safetensors(path,
                    {tensor("w", DType::kF32, {2, 3}, wb), tensor("h", DType::kF16, {3}, hb),
                     tensor("b", DType::kBF16, {1, 2}, bb), tensor("e", DType::kF32, {4, 0}, "")},
                    SafetensorsMetadata{{"format", "pt"}, {"by", "llmprof"}});
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.names(), (std::vector<std::string>{"e", "w", "b", "h"}));
  const std::vector<float> got = f.read_float("w");
  ASSERT_EQ(got.size(), w.size());
  EXPECT_EQ(std::memcmp(got.data(), w.data(), wb.size()), 0) << "bits, NaN and -0 included";
  EXPECT_EQ(f.read_float("h"), (std::vector<float>{1.0f, std::ldexp(1.0f, -24), -INFINITY}));
  EXPECT_EQ(f.read_float("b"), (std::vector<float>{1.0f, 3.140625f}));
  EXPECT_EQ(f.at("b").shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(f.at("e").shape, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(f.metadata(), (SafetensorsMetadata{{"by", "llmprof"}, {"format", "pt"}}));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(WriteSafetensors, BadInputIsADataErrorNamingTensorAndLeavesNoFile) {
  test::ScratchDir dir;
  const std::string path = dir.file("bad.safetensors");
  const std::string b12(12, '\0'), b16(16, '\0');
  struct Case {
    std::vector<TensorToWrite> tensors;
    const char* says;
  };
  const Case cases[] = {
      {{tensor("w", DType::kF32, {2, 2}, b12)}, "tensor 'w': 12 bytes given, F32 [2, 2] takes 16"},
      {{tensor("w", DType::kF32, {1}, b16.substr(0, 4)),
        tensor("w", DType::kF32, {1}, b12.substr(0, 4))},
       "tensor 'w': the name is given twice"},
      {{tensor("__metadata__", DType::kF32, {4}, b16)}, "reserved"},
      {{tensor("w", DType::kF32, {-1, 4}, b16)}, "negative dimension"},
      {{tensor("w", DType::kF4, {3}, b16.substr(0, 2))}, "do not fill whole bytes"},
      {{{"w", DType::kF32, {4}, nullptr, 16}}, "no data given"},
      {{tensor("bad\xff", DType::kF32, {4}, b16)}, "not valid UTF-8"},
  };
  for (const Case& c : cases) {
    try {
      write_safetensors(path, c.tensors);
      ADD_FAILURE() << c.says;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  }
}

TEST(WriteSafetensors, UnwritableFolderIsAnIoError) {
  test::ScratchDir dir;
  const std::string b4(4, '\0');
  EXPECT_THROW(
      write_safetensors(dir.file("no/such/dir/x.safetensors"), {tensor("w", DType::kF32, {1}, b4)}),
      IoError);
}

}  // namespace
}  // namespace llmprof::hf
