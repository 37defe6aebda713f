#!/usr/bin/env python3
"""Writes the safetensors fixtures of tests/hf/fixtures, independently of the C++ code under test.

Standard library only (struct, json). The layout follows the reference writer
(huggingface/safetensors, safetensors/src/tensor.rs: prepare() and Metadata's Serialize):
  - u64 little-endian N, then N bytes of compact JSON, then the data;
  - tensors sorted by dtype, descending in the Dtype enum's order, then by name (bytes);
  - "__metadata__" first when given, then the tensors as
    {"dtype": .., "shape": [..], "data_offsets": [begin, end]} in that order;
  - the JSON padded with spaces to a multiple of 8 bytes.
Expected values go to expected.json as float32 bit patterns, computed here with struct's own
binary16 ('e') and binary32 ('f') codecs, not with the converter under test.

    python3 tests/hf/make_fixtures.py            # rewrites tests/hf/fixtures
"""

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")

# The reference implementation's Dtype enum, in declaration order (it derives Ord from it).
DTYPE_ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
               "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32",
               "C64", "F64", "I64", "U64"]


def serialize(tensors, metadata=None):
    """tensors: {name: (dtype, shape, data bytes)} -> the bytes the reference writer produces."""
    order = sorted(tensors, key=lambda n: (-DTYPE_ORDER.index(tensors[n][0]), n.encode("utf-8")))
    header = {}
    if metadata is not None:
        header["__metadata__"] = dict(sorted(metadata.items()))
    offset = 0
    for name in order:
        dtype, shape, data = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(tensors[n][2] for n in order), order


def raw(header, data=b"", n=None):
    """A hand-made file: header text (str or bytes) as it is, n overriding its length."""
    if isinstance(header, str):
        header = header.encode("utf-8")
    return struct.pack("<Q", len(header) if n is None else n) + header + data


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def u16(bits):
    return struct.pack("<%dH" % len(bits), *bits)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def half_bits_to_f32_bits(h):
    return f32_bits(struct.unpack("<e", struct.pack("<H", h))[0])


def bf16_bits_to_f32_bits(b):
    return b << 16  # bfloat16 is the upper half of a binary32


INF = float("inf")
NAN = float("nan")

# binary16 bit patterns: zeros, subnormals (smallest, largest, negative), the smallest normal,
# ordinary values, the largest finite, infinities, NaNs.
HALF_BITS = [0x0000, 0x8000, 0x0001, 0x0200, 0x03FF, 0x8001, 0x0400, 0x3C00, 0xC000, 0x3555,
             0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00]
# bfloat16: 1, -0, subnormals, the smallest normal, the largest finite, infinities, NaN, others.
BF16_BITS = [0x3F80, 0x8000, 0x0001, 0x007F, 0x0080, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x4049,
             0xC2F7]
F32_WEIGHT = [0.0, 1.0, -2.5, 3.25, 1e-38, 65504.0]
F32_BIAS = [-0.0, INF, NAN, -INF, 1.401298464324817e-45]  # the last: the smallest subnormal


def valid_files():
    """name -> (tensors, metadata) of every valid fixture."""
    mixed = {
        "lm_head.weight": ("F32", [2, 2], f32([1.0, 2.0, 3.0, 4.0])),
        "wte.weight": ("F16", [3], u16([0x3C00, 0x0001, 0xFC00])),
        "a.bf16": ("BF16", [2], u16([0x3F80, 0xC000])),
        "b.i64": ("I64", [2], struct.pack("<2q", -1, 2 ** 40)),
        "empty": ("F32", [0, 3], b""),
        "scalar": ("F32", [], f32([42.0])),
        "h.0.\u00e4\"q\tz": ("F16", [1], u16([0x3800])),
        "Z_upper": ("F32", [1], f32([0.5])),
        "u8": ("U8", [3], bytes([1, 2, 3])),
    }
    return {
        "f32.safetensors": ({"weight": ("F32", [2, 3], f32(F32_WEIGHT)),
                             "bias": ("F32", [5], f32(F32_BIAS))}, {"format": "pt"}),
        "f16.safetensors": ({"h": ("F16", [len(HALF_BITS)], u16(HALF_BITS))}, None),
        "bf16.safetensors": ({"b": ("BF16", [len(BF16_BITS)], u16(BF16_BITS))}, None),
        "mixed.safetensors": (mixed, {"format": "pt", "note": "line\nbreak \u0001 \u00fcn\u00ef"}),
        "empty.safetensors": ({}, None),
        "empty_metadata.safetensors": ({}, {"framework": "pt"}),
    }


def expected_values(dtype, data):
    if dtype == "F32":
        return {"f32_bits": list(struct.unpack("<%dI" % (len(data) // 4), data))}
    if dtype == "F16":
        return {"f32_bits": [half_bits_to_f32_bits(h)
                             for h in struct.unpack("<%dH" % (len(data) // 2), data)]}
    if dtype == "BF16":
        return {"f32_bits": [bf16_bits_to_f32_bits(b)
                             for b in struct.unpack("<%dH" % (len(data) // 2), data)]}
    if dtype == "I64":
        return {"i64": list(struct.unpack("<%dq" % (len(data) // 8), data))}
    return {"bytes": list(data)}


def tensor(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def entry_json(entries):
    return json.dumps(entries, separators=(",", ":"))


def malformed_files():
    """name -> file bytes; what each must be refused for is in tests/hf/safetensors_test.cpp."""
    w4 = tensor("F32", [1], 0, 4)
    return {
        "bad_short_file.safetensors": b"\x08\x00\x00",
        "bad_header_too_large.safetensors": raw("{}", n=2 ** 40),
        "bad_header_beyond_file.safetensors": raw("{}      ", n=64),
        "bad_header_not_json.safetensors": raw('{"w": {"dtype": "F32", '),
        "bad_header_not_object.safetensors": raw("[1, 2]  "),
        "bad_header_not_utf8.safetensors": raw(b'{"\xff":1}'),
        "bad_duplicate_key.safetensors":
            raw('{"a":%s,"a":%s}' % (entry_json(w4), entry_json(tensor("F32", [1], 4, 8))),
                f32([1.0, 2.0])),
        "bad_metadata_value.safetensors":
            raw(entry_json({"__metadata__": {"format": 1}, "w": w4}), f32([1.0])),
        "bad_entry_not_object.safetensors": raw(entry_json({"w": 5})),
        "bad_missing_dtype.safetensors":
            raw(entry_json({"w": {"shape": [1], "data_offsets": [0, 4]}}), f32([1.0])),
        "bad_dtype_unknown.safetensors":
            raw(entry_json({"w": tensor("F128", [1], 0, 16)}), bytes(16)),
        "bad_dtype_not_string.safetensors":
            raw(entry_json({"w": tensor(32, [1], 0, 4)}), f32([1.0])),
        "bad_shape_type.safetensors":
            raw(entry_json({"w": tensor("F32", "2x2", 0, 16)}), bytes(16)),
        "bad_shape_negative.safetensors":
            raw(entry_json({"w": tensor("F32", [-1, 4], 0, 16)}), bytes(16)),
        "bad_shape_overflow.safetensors":
            raw(entry_json({"w": tensor("F32", [2 ** 62, 2 ** 62], 0, 4)}), bytes(4)),
        "bad_bytes_overflow.safetensors":
            raw(entry_json({"w": tensor("F64", [2 ** 61], 0, 8)}), bytes(8)),
        "bad_sub_byte.safetensors":
            raw(entry_json({"w": tensor("F4", [3], 0, 2)}), bytes(2)),
        "bad_offsets_type.safetensors":
            raw(entry_json({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}}), bytes(4)),
        "bad_offsets_negative.safetensors":
            raw(entry_json({"w": tensor("F32", [1], -4, 0)}), bytes(4)),
        "bad_offsets_reversed.safetensors":
            raw(entry_json({"w": tensor("F32", [1], 8, 4)}), bytes(8)),
        "bad_shape_bytes_mismatch.safetensors":
            raw(entry_json({"w": tensor("F32", [2, 2], 0, 12)}), bytes(12)),
        "bad_truncated_data.safetensors":
            raw(entry_json({"w": tensor("F32", [4], 0, 16)}), bytes(8)),
        "bad_overlap.safetensors":
            raw(entry_json({"a": tensor("F32", [2], 0, 8), "b": tensor("F32", [2], 4, 12)}),
                bytes(12)),
        "bad_hole.safetensors":
            raw(entry_json({"a": tensor("F32", [2], 0, 8), "b": tensor("F32", [2], 12, 20)}),
                bytes(20)),
        "bad_hole_at_start.safetensors":
            raw(entry_json({"a": tensor("F32", [2], 4, 12)}), bytes(12)),
        "bad_trailing_bytes.safetensors":
            raw(entry_json({"a": tensor("F32", [2], 0, 8)}), bytes(12)),
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    expected = {}
    for name, (tensors, metadata) in valid_files().items():
        data, order = serialize(tensors, metadata)
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        expected[name] = {
            "order": order,
            "metadata": metadata,
            "tensors": {n: dict(dtype=tensors[n][0], shape=tensors[n][1],
                                **expected_values(tensors[n][0], tensors[n][2]))
                        for n in order},
        }
    # The real reader takes JSON whitespace around the header object (test_whitespace_padded_header
    # and test_whitespace_leading_padded_header in tensor.rs); N need not be a multiple of 8.
    padded = b'\n {"w":' + entry_json(tensor("F32", [1], 0, 4)).encode() + b'}\t\r\n'
    with open(os.path.join(OUT, "whitespace.safetensors"), "wb") as f:
        f.write(raw(padded, f32([7.0])))
    expected["whitespace.safetensors"] = {
        "order": ["w"], "metadata": None,
        "tensors": {"w": {"dtype": "F32", "shape": [1], "f32_bits": [f32_bits(7.0)]}}}
    for name, data in malformed_files().items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
