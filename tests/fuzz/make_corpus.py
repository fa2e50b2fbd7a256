#!/usr/bin/env python3
"""Writes the fuzz seed corpus (valid and malformed safetensors files) into corpus/.

Kept for reproducibility; the files it makes are committed. Run from this folder.
"""
import json
import os
import struct

os.makedirs("corpus", exist_ok=True)


def pack(header, buf, raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(h)) + h + buf


def tensors(spec, meta=None):
    """spec: list of (name, dtype, shape, bytes)."""
    header, buf = {}, b""
    for name, dtype, shape, data in spec:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(buf), len(buf) + len(data)]}
        buf += data
    if meta is not None:
        header["__metadata__"] = meta
    return header, buf


def f64(*xs): return struct.pack("<%dd" % len(xs), *xs)
def f32(*xs): return struct.pack("<%df" % len(xs), *xs)
def bf16(*xs): return b"".join(struct.pack("<f", x)[2:] for x in xs)  # exact for these values
def f16(*xs): return struct.pack("<%de" % len(xs), *xs)


q = [0.5, -1.0, 2.0, 0.25]
seeds = {
    "valid_f64_stream": tensors([("q", "F64", [1, 2, 1, 2], f64(*q)), ("k", "F64", [1, 2, 1, 2], f64(*q)),
                                 ("v", "F64", [1, 2, 1, 2], f64(1, 2, 3, 4))], {"seed": "1"}),
    "valid_bf16_stream_u": tensors([("q", "BF16", [1, 2, 1, 2], bf16(*q)), ("k", "BF16", [1, 2, 1, 2], bf16(*q)),
                                    ("v", "BF16", [1, 2, 1, 1], bf16(1, 2)), ("u", "BF16", [1, 2, 1, 2], bf16(*q))]),
    "valid_mixed_stream": tensors([("q", "F32", [1, 1, 2, 2], f32(*q)), ("k", "F16", [1, 1, 2, 2], f16(*q)),
                                   ("v", "BF16", [1, 1, 2, 3], bf16(1, 2, 3, 4, 5, 6))]),
    "valid_scalar_empty": tensors([("s", "F32", [], f32(3.0)), ("e", "F64", [0, 4], b"")], {"a": "b"}),
    "nan_stream": tensors([("q", "F64", [1, 1, 1, 2], f64(float("nan"), 1)), ("k", "F64", [1, 1, 1, 2], f64(1, 1)),
                           ("v", "F64", [1, 1, 1, 2], f64(float("inf"), 1))]),
    "zero_key_stream": tensors([("q", "F32", [1, 1, 1, 2], f32(1, 1)), ("k", "F32", [1, 1, 1, 2], f32(0, 0)),
                                ("v", "F32", [1, 1, 1, 2], f32(1, 1)), ("u", "F32", [1, 1, 1, 2], f32(0, 0))]),
    "wrong_rank_stream": tensors([("q", "F64", [2, 2], f64(*q)), ("k", "F64", [1, 2, 1, 2], f64(*q)),
                                  ("v", "F64", [1, 2, 1, 2], f64(*q))]),
    "shape_mismatch_stream": tensors([("q", "F64", [1, 2, 1, 2], f64(*q)), ("k", "F64", [1, 1, 2, 2], f64(*q)),
                                      ("v", "F64", [1, 2, 2, 1], f64(*q))]),
}
# Candidate outputs for `vla check` (B=1, T=2, H=1, Dk=Dv=2).
o4 = f32(0.5, -0.25, 1.0, 2.0)
seeds.update({
    "cand_valid_all": tensors([("o", "F32", [1, 2, 1, 2], o4), ("S", "F32", [1, 1, 2, 2], o4), ("A", "F64", [1, 1, 2, 2], f64(1, 0, 0, 1)),
                               ("state_norm", "BF16", [1, 2, 1], bf16(1, 2))]),
    "cand_o_only_nan": tensors([("o", "F64", [1, 2, 1, 2], f64(float("nan"), 1, 2, float("inf")))]),
    "cand_missing_o": tensors([("S", "F32", [1, 1, 2, 2], o4)]),
    "cand_wrong_shape": tensors([("o", "F32", [1, 2, 1, 2], o4), ("state_norm", "F32", [1, 1, 2], f32(1, 2))]),
    "cand_extra_tensor": tensors([("o", "F32", [1, 2, 1, 2], o4), ("S_final", "F32", [1, 1, 2, 2], o4)]),
})
for name, (header, buf) in seeds.items():
    with open(os.path.join("corpus", name), "wb") as f:
        f.write(pack(header, buf))

good_h, good_b = seeds["valid_f64_stream"]
raw = pack(good_h, good_b)
malformed = {
    "truncated": raw[:-5],
    "bad_json": pack(None, b"", raw_header=b'{"q":{"dtype":"F64",'),
    "bad_utf8": pack(None, b"", raw_header=b'{"\xff":{}}'),
    "duplicate": pack(None, f64(1), raw_header=b'{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},'
                                               b'"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}'),
    "hole": pack({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, f64(1)),
    "overlap": pack({"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]},
                     "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, f64(1)),
    "negative_shape": pack({"a": {"dtype": "F64", "shape": [-1], "data_offsets": [0, 8]}}, f64(1)),
    "huge_shape": pack({"a": {"dtype": "F64", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}}, f64(1)),
    "trailing": raw + b"\x00\x01",
    "header_length_beyond": struct.pack("<Q", 1 << 40) + b"{}",
}
for name, data in malformed.items():
    with open(os.path.join("corpus", "bad_" + name), "wb") as f:
        f.write(data)
