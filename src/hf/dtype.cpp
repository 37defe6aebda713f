// Safetensors element types: the name table both ways, sizes, and exact conversion to float.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstring>
#include <limits>

#include "llmprof/error.h"
#include "llmprof/hf/safetensors.h"
#include "safetensors_detail.h"

namespace llmprof::hf {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this reader copies it as it lies");

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  int bits;
};

// In enum order, so kDTypes[int(d)].dtype == d.
constexpr std::array<DTypeInfo, 22> kDTypes = {{
    {DType::kBool, "BOOL", 8},
    {DType::kF4, "F4", 4},
    {DType::kF6E2M3, "F6_E2M3", 6},
    {DType::kF6E3M2, "F6_E3M2", 6},
    {DType::kU8, "U8", 8},
    {DType::kI8, "I8", 8},
    {DType::kF8E5M2, "F8_E5M2", 8},
    {DType::kF8E4M3, "F8_E4M3", 8},
    {DType::kF8E8M0, "F8_E8M0", 8},
    {DType::kF8E4M3Fnuz, "F8_E4M3FNUZ", 8},
    {DType::kF8E5M2Fnuz, "F8_E5M2FNUZ", 8},
    {DType::kI16, "I16", 16},
    {DType::kU16, "U16", 16},
    {DType::kF16, "F16", 16},
    {DType::kBF16, "BF16", 16},
    {DType::kI32, "I32", 32},
    {DType::kU32, "U32", 32},
    {DType::kF32, "F32", 32},
    {DType::kC64, "C64", 64},
    {DType::kF64, "F64", 64},
    {DType::kI64, "I64", 64},
    {DType::kU64, "U64", 64},
}};

const DTypeInfo& info(DType dtype) { return kDTypes.at(static_cast<size_t>(dtype)); }

float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

const char* dtype_name(DType dtype) { return info(dtype).name; }

int dtype_bits(DType dtype) { return info(dtype).bits; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& d : kDTypes) {
    if (name == d.name) return d.dtype;
  }
  return std::nullopt;
}

// binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; binary32: 1, 8 (bias 127), 23.
// Normal numbers rebias the exponent (+112) and shift the mantissa up 13 bits. A subnormal half
// (exponent 0) is m * 2^-24; it is normalised by shifting m up until its leading 1 reaches bit 10,
// taking one off the exponent per shift, which gives a normal binary32 (the smallest, 2^-24, has
// binary32 exponent 103). Exponent 31 is inf (m == 0) or NaN, payload kept.
float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return bits_to_float(sign);  // +-0
    int32_t e = 1;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    mantissa &= 0x3ffu;
    return bits_to_float(sign | (static_cast<uint32_t>(e + 112) << 23) | (mantissa << 13));
  }
  return bits_to_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float bf16_to_float(uint16_t bits) { return bits_to_float(static_cast<uint32_t>(bits) << 16); }

std::vector<float> to_float(const TensorView& tensor) {
  const size_t n = static_cast<size_t>(tensor.numel);
  std::vector<float> out(n);
  switch (tensor.dtype) {
    case DType::kF32:
      if (n > 0) std::memcpy(out.data(), tensor.data, n * sizeof(float));
      return out;
    case DType::kF16:
    case DType::kBF16: {
      const bool half = tensor.dtype == DType::kF16;
      for (size_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, tensor.data + 2 * i, sizeof b);  // no alignment assumed
        out[i] = half ? half_to_float(b) : bf16_to_float(b);
      }
      return out;
    }
    default:
      throw DataError(fmt::format("tensor '{}' is {}: only F32, F16 and BF16 tensors read as float",
                                  tensor.name, dtype_name(tensor.dtype)));
  }
}

}  // namespace llmprof::hf

namespace llmprof::hf::detail {

TensorSizeResult tensor_size(DType dtype, const std::vector<int64_t>& shape) {
  constexpr uint64_t kMaxNumel = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return {std::nullopt, fmt::format("shape {} has a negative dimension", shape_text(shape))};
    const uint64_t u = static_cast<uint64_t>(d);
    if (u != 0 && numel > kMaxNumel / u) {
      return {std::nullopt, fmt::format("shape {} has more than 2^63 elements", shape_text(shape))};
    }
    numel *= u;
  }
  const uint64_t bits = static_cast<uint64_t>(dtype_bits(dtype));
  if (numel > std::numeric_limits<uint64_t>::max() / bits) {
    return {std::nullopt, fmt::format("shape {} of {} overflows a 64-bit byte count",
                                      shape_text(shape), dtype_name(dtype))};
  }
  if ((numel * bits) % 8 != 0) {
    return {std::nullopt, fmt::format("{} elements of {} ({} bits each) do not fill whole bytes",
                                      numel, dtype_name(dtype), bits)};
  }
  return {TensorSize{numel, numel * bits / 8}, {}};
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace llmprof::hf::detail
