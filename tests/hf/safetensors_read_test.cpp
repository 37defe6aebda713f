// The safetensors reader on the fixtures of tests/hf/make_fixtures.py: exact values from every
// valid file (checked against expected.json, computed there with Python's own codecs), and a
// DataError naming the file (and the tensor at fault) for every malformed one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "hf/fixture_paths.h"
#include "llmprof/error.h"
#include "llmprof/hf/safetensors.h"
#include "support/test_support.h"

namespace llmprof::hf {
namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(HalfToFloat, HandComputedValuesIncludingSubnormalsInfAndNan) {
  EXPECT_EQ(bits_of(half_to_float(0x0000)), 0x00000000u);
  EXPECT_EQ(bits_of(half_to_float(0x8000)), 0x80000000u) << "-0 keeps its sign";
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24)) << "smallest subnormal";
  EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24)) << "largest subnormal";
  EXPECT_EQ(half_to_float(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14)) << "smallest normal";
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f) << "largest finite";
  EXPECT_EQ(half_to_float(0x7c00), INFINITY);
  EXPECT_EQ(half_to_float(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  // A signalling NaN keeps its payload: mantissa 1 lands at binary32 bit 13.
  EXPECT_EQ(bits_of(half_to_float(0x7c01)), 0x7f802000u);
  EXPECT_EQ(bits_of(half_to_float(0xfe00)), 0xffc00000u);
}

TEST(HalfToFloat, EveryFiniteHalfHasTheValueOfItsFields) {
  // exponent field e, mantissa m: subnormal (e == 0) m * 2^-24, normal (1024 + m) * 2^(e - 25).
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const uint32_t e = h >> 10, m = h & 0x3ffu;
    const double want =
        e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, static_cast<int>(e) - 25);
    ASSERT_EQ(half_to_float(static_cast<uint16_t>(h)), want) << "half 0x" << std::hex << h;
    ASSERT_EQ(half_to_float(static_cast<uint16_t>(h | 0x8000u)), -want)
        << "half 0x" << std::hex << h;
  }
}

TEST(Bf16ToFloat, IsTheUpperHalfOfABinary32) {
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
  EXPECT_EQ(bf16_to_float(0x0001), std::ldexp(1.0f, -133)) << "smallest subnormal";
  EXPECT_EQ(bf16_to_float(0xff80), -INFINITY);
  EXPECT_EQ(bits_of(bf16_to_float(0x8000)), 0x80000000u);
  EXPECT_TRUE(std::isnan(bf16_to_float(0x7fc0)));
}

TEST(DType, NamesRoundTripAndSizes) {
  for (int i = 0; i <= static_cast<int>(DType::kU64); ++i) {
    const DType d = static_cast<DType>(i);
    ASSERT_EQ(dtype_from_name(dtype_name(d)), d) << dtype_name(d);
  }
  EXPECT_STREQ(dtype_name(DType::kBF16), "BF16");
  EXPECT_STREQ(dtype_name(DType::kF8E4M3), "F8_E4M3");
  EXPECT_EQ(dtype_bits(DType::kF4), 4);
  EXPECT_EQ(dtype_bits(DType::kF16), 16);
  EXPECT_EQ(dtype_bits(DType::kC64), 64);
  EXPECT_FALSE(dtype_from_name("float32").has_value());
  EXPECT_FALSE(dtype_from_name("f32").has_value());
}

// Every valid fixture against expected.json: order, shapes, metadata and each element's bits.
// NaNs compare as NaN with the same sign (Python's binary16 codec drops NaN payloads).
TEST(SafetensorsFile, ReadsEveryValidFixtureExactly) {
  const nlohmann::json expected =
      nlohmann::json::parse(test::read_file(test::hf_fixture("expected.json")));
  ASSERT_GE(expected.size(), 7u);
  int elements = 0;
  for (auto file = expected.begin(); file != expected.end(); ++file) {
    SCOPED_TRACE(file.key());
    const SafetensorsFile f = SafetensorsFile::open(test::hf_fixture(file.key()));
    EXPECT_EQ(f.names(), file.value()["order"].get<std::vector<std::string>>());
    EXPECT_EQ(f.has_metadata(), !file.value()["metadata"].is_null());
    if (f.has_metadata()) {
      EXPECT_EQ(f.metadata(), (file.value()["metadata"].get<std::map<std::string, std::string>>()));
    }
    for (auto t = file.value()["tensors"].begin(); t != file.value()["tensors"].end(); ++t) {
      SCOPED_TRACE(t.key());
      const TensorView* view = f.find(t.key());
      ASSERT_NE(view, nullptr);
      EXPECT_STREQ(dtype_name(view->dtype), t.value()["dtype"].get<std::string>().c_str());
      EXPECT_EQ(view->shape, t.value()["shape"].get<std::vector<int64_t>>());
      if (t.value().contains("f32_bits")) {
        const auto want = t.value()["f32_bits"].get<std::vector<uint32_t>>();
        const std::vector<float> got = to_float(*view);
        ASSERT_EQ(got.size(), want.size());
        ASSERT_EQ(static_cast<size_t>(view->numel), want.size());
        for (size_t i = 0; i < want.size(); ++i, ++elements) {
          if (std::isnan(from_bits(want[i]))) {
            EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
            EXPECT_EQ(std::signbit(got[i]), std::signbit(from_bits(want[i]))) << "element " << i;
          } else {
            EXPECT_EQ(bits_of(got[i]), want[i]) << "element " << i << ": " << got[i];
          }
        }
      } else if (t.value().contains("i64")) {
        const auto want = t.value()["i64"].get<std::vector<int64_t>>();
        ASSERT_EQ(view->size_bytes, want.size() * 8);
        for (size_t i = 0; i < want.size(); ++i) {
          int64_t v;
          std::memcpy(&v, view->data + 8 * i, 8);
          EXPECT_EQ(v, want[i]);
        }
      } else {
        const auto want = t.value()["bytes"].get<std::vector<uint8_t>>();
        EXPECT_EQ(std::vector<uint8_t>(view->data, view->data + view->size_bytes), want);
      }
    }
  }
  EXPECT_GT(elements, 40);
}

TEST(SafetensorsFile, MixedFixtureHasScalarsEmptyTensorsAndEscapedNames) {
  const SafetensorsFile f = SafetensorsFile::open(test::hf_fixture("mixed.safetensors"));
  const TensorView& scalar = f.at("scalar");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.numel, 1);
  EXPECT_EQ(to_float(scalar), std::vector<float>{42.0f});
  const TensorView& empty = f.at("empty");
  EXPECT_EQ(empty.numel, 0);
  EXPECT_EQ(empty.size_bytes, 0u);
  EXPECT_TRUE(to_float(empty).empty());
  EXPECT_EQ(f.read_float("h.0.\xc3\xa4\"q\tz"), std::vector<float>{0.5f});
  EXPECT_EQ(f.metadata().at("note"), "line\nbreak \x01 \xc3\xbcn\xc3\xaf");
  EXPECT_EQ(f.header_size_bytes() % 8, 0u);
  EXPECT_EQ(f.find("missing"), nullptr);
}

TEST(SafetensorsFile, RefusesNonFloatDtypesAsFloatNamingFileTensorAndDtype) {
  const SafetensorsFile f = SafetensorsFile::open(test::hf_fixture("mixed.safetensors"));
  try {
    f.read_float("b.i64");
    FAIL() << "I64 read as float";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("mixed.safetensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'b.i64' is I64"), std::string::npos) << e.what();
  }
  EXPECT_THROW(to_float(f.at("u8")), DataError);
  try {
    f.at("nope");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor 'nope'"), std::string::npos) << e.what();
  }
}

TEST(SafetensorsFile, MovedFileKeepsItsViewsValid) {
  SafetensorsFile a = SafetensorsFile::open(test::hf_fixture("f32.safetensors"));
  const TensorView* weight = a.find("weight");
  SafetensorsFile b = std::move(a);
  EXPECT_EQ(b.find("weight"), weight) << "views live in the moved vector";
  EXPECT_EQ(to_float(*weight)[3], 3.25f);
  SafetensorsFile c = SafetensorsFile::open(test::hf_fixture("bf16.safetensors"));
  c = std::move(b);  // unmaps bf16, takes f32's mapping
  EXPECT_EQ(c.read_float("weight")[2], -2.5f);
  EXPECT_EQ(c.path(), test::hf_fixture("f32.safetensors"));
}

TEST(SafetensorsFile, MissingFileOrDirectoryIsADataErrorNamingIt) {
  test::ScratchDir dir;
  for (const std::string& path : {dir.file("absent.safetensors"), dir.path()}) {
    try {
      SafetensorsFile::open(path);
      FAIL() << path;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

struct Malformed {
  const char* file;
  const char* tensor;  // the tensor the message must name, or "" for a whole-file fault
  const char* says;    // a phrase the message must hold
};

// Each bad_* fixture and what it must be refused for.
const Malformed kMalformed[] = {
    {"bad_short_file", "", "shorter than the 8-byte header length"},
    {"bad_header_too_large", "", "over the format's limit"},
    {"bad_header_beyond_file", "", "reaches past the end of the file"},
    {"bad_header_not_json", "", "not valid JSON"},
    {"bad_header_not_object", "", "not a JSON object"},
    {"bad_header_not_utf8", "", "not valid JSON"},
    {"bad_duplicate_key", "", "repeats the key 'a'"},
    {"bad_metadata_value", "", "__metadata__ 'format' is 1"},
    {"bad_entry_not_object", "w", "expected an object"},
    {"bad_missing_dtype", "w", "no 'dtype'"},
    {"bad_dtype_unknown", "w", "unknown dtype \"F128\""},
    {"bad_dtype_not_string", "w", "dtype is not a string"},
    {"bad_shape_type", "w", "shape is not an array"},
    {"bad_shape_negative", "w", "negative dimension"},
    {"bad_shape_overflow", "w", "more than 2^63 elements"},
    {"bad_bytes_overflow", "w", "overflows a 64-bit byte count"},
    {"bad_sub_byte", "w", "do not fill whole bytes"},
    {"bad_offsets_type", "w", "expected [begin, end]"},
    {"bad_offsets_negative", "w", "expected a non-negative integer"},
    {"bad_offsets_reversed", "w", "end before they begin"},
    {"bad_shape_bytes_mismatch", "w", "span 12 bytes, but F32 [2, 2] needs 16"},
    {"bad_truncated_data", "w", "reach past the end of the data"},
    {"bad_overlap", "b", "overlap tensor 'a'"},
    {"bad_hole", "b", "a hole after tensor 'a'"},
    {"bad_hole_at_start", "a", "data bytes [0, 4) before it belong to no tensor"},
    {"bad_trailing_bytes", "", "4 trailing bytes"},
};

TEST(SafetensorsFile, EveryMalformedFixtureIsADataErrorNamingFileAndTensor) {
  for (const Malformed& m : kMalformed) {
    const std::string path = test::hf_fixture(std::string(m.file) + ".safetensors");
    SCOPED_TRACE(path);
    ASSERT_FALSE(test::read_file(path).empty() && std::string(m.file) != "bad_short_file")
        << "fixture missing: run tests/hf/make_fixtures.py";
    try {
      SafetensorsFile::open(path);
      ADD_FAILURE() << "accepted";
    } catch (const DataError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("'" + path + "'"), std::string::npos) << what;
      EXPECT_NE(what.find(m.says), std::string::npos) << what;
      if (*m.tensor != '\0') {
        EXPECT_NE(what.find(std::string("tensor '") + m.tensor + "'"), std::string::npos) << what;
      }
    }
  }
}

TEST(SafetensorsFile, EveryMalformedFixtureIsCovered) {
  // A bad_* file the script writes but the table above forgets would go untested.
  const nlohmann::json expected =
      nlohmann::json::parse(test::read_file(test::hf_fixture("expected.json")));
  size_t bad_files = 0;
  for (const std::string& name : test::hf_fixture_names()) {
    if (name.rfind("bad_", 0) == 0) {
      ++bad_files;
      bool listed = false;
      for (const Malformed& m : kMalformed)
        listed = listed || name == std::string(m.file) + ".safetensors";
      EXPECT_TRUE(listed) << name;
    } else if (name.size() > 12 && name.substr(name.size() - 12) == ".safetensors") {
      EXPECT_TRUE(expected.contains(name)) << name << " has no expected values";
    }
  }
  EXPECT_EQ(bad_files, std::size(kMalformed));
}

// Truncating a valid file is refused, never a crash or an out-of-bounds read: every prefix near
// either end and every 5th between, and single-byte corruptions of the header length.
TEST(SafetensorsFile, EveryTruncationAndLengthCorruptionIsRefusedCleanly) {
  const std::string good = test::read_file(test::hf_fixture("mixed.safetensors"));
  test::ScratchDir dir;
  const std::string path = dir.file("t.safetensors");
  for (size_t n = 0; n < good.size(); n += (n < 24 || n + 24 > good.size()) ? 1 : 5) {
    test::write_file(path, good.substr(0, n));
    EXPECT_THROW(SafetensorsFile::open(path), DataError) << "prefix of " << n << " bytes";
  }
  for (int byte = 0; byte < 8; ++byte) {
    for (int v : {0x00, 0x01, 0x7f, 0xff}) {
      std::string bad = good;
      if (static_cast<unsigned char>(bad[byte]) == v) continue;
      bad[byte] = static_cast<char>(v);
      test::write_file(path, bad);
      EXPECT_THROW(SafetensorsFile::open(path), DataError) << "byte " << byte << " = " << v;
    }
  }
}

// Any single byte of a header changed to a JSON-significant or invalid one: opened cleanly or
// refused with a DataError, and what opens reads within its data.
TEST(SafetensorsFile, EveryHeaderByteCorruptionOpensCleanlyOrIsRefused) {
  const std::string good = test::read_file(test::hf_fixture("f32.safetensors"));
  test::ScratchDir dir;
  const std::string path = dir.file("c.safetensors");
  int opened = 0, refused = 0;
  for (size_t at = 8; at < good.size() - 44; ++at) {  // the last 44 bytes are the data
    for (char v : {'9', '"', ']', '\xff'}) {
      if (good[at] == v) continue;
      std::string bad = good;
      bad[at] = v;
      test::write_file(path, bad);
      try {
        const SafetensorsFile f = SafetensorsFile::open(path);
        for (const TensorView& t : f.tensors()) {
          ASSERT_LE(t.data + t.size_bytes, f.tensors().back().data + f.tensors().back().size_bytes);
          if (t.dtype == DType::kF32 || t.dtype == DType::kF16) to_float(t);
        }
        ++opened;
      } catch (const DataError&) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 300);
  EXPECT_GT(opened, 0) << "a changed digit in a name still makes a valid file";
}

// Found with the safetensors fuzz target: a shape nested 100,000 arrays deep overflowed the stack
// while the error message dumped it; now a DataError naming the file and the tensor.
TEST(SafetensorsFile, DeeplyNestedShapeIsAShortDataError) {
  const std::string path = test::fuzz_regression("safetensors", "deep_nested_shape.safetensors");
  const std::string msg = test::data_error_of([&] { SafetensorsFile::open(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("an array of 1 items nested over 32 levels deep"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 400u + path.size()) << msg;
}

// Found with the safetensors fuzz target: a header holding the bytes 0xfb, 0xff put them raw in the
// message, through the JSON parser's "last read: '...'"; now escaped.
TEST(SafetensorsFile, HeaderParseErrorEscapesTheBytesItQuotes) {
  const std::string path =
      test::fuzz_regression("safetensors", "raw_byte_in_parse_error.safetensors");
  const std::string msg = test::data_error_of([&] { SafetensorsFile::open(path); });
  EXPECT_NE(msg.find("\\xfb"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\xfb'), std::string::npos) << msg;
}

// Found with the safetensors fuzz target in CI: a __metadata__ key holding the byte 0x01 went raw
// into the message about its non-string value; now escaped.
TEST(SafetensorsFile, MetadataKeyIsEscaped) {
  const std::string path =
      test::fuzz_regression("safetensors", "raw_byte_in_metadata_key.safetensors");
  const std::string msg = test::data_error_of([&] { SafetensorsFile::open(path); });
  EXPECT_NE(msg.find("__metadata__ 'f\\x01rmat' is 0, expected a string"), std::string::npos)
      << msg;
  EXPECT_EQ(msg.find('\x01'), std::string::npos) << msg;
}

}  // namespace
}  // namespace llmprof::hf
