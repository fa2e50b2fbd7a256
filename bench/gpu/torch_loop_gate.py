#!/usr/bin/env python3
"""The benchmark's PyTorch loop (torch_baselines.vla_loop, the denominator of issue
3's "1000x the PyTorch loop") as an external kernel of the gate (docs/GATE.md, "A
kernel outside this repository"): runs it on every exported case whose options it
implements (the paper preset's maths with any lambda0: elu1 features, ratio
readout, both normalisations, u = k^, no floors or ridge steps) and writes its
outputs under the case's name. Then, where `vla` is built:

    vla gate --export-cases CASES --dtype fp32 [--quick]           # here or anywhere
    python3 bench/gpu/torch_loop_gate.py --cases CASES --out OUTS  # needs torch (GPU if present)
    vla gate --external OUTS --cases CASES --skip-missing          # the cases it skips: outside its domain

Only torch (and numpy where present) is needed: the safetensors files are read and
written here (8-byte header length, JSON header, raw little-endian data).
"""
import argparse
import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "examples")]
from torch_baselines import vla_loop  # noqa: E402  (the benchmarked loop, unchanged)
from external_kernel_server import options  # noqa: E402  (a case's `vla run` arguments as a dict)

DTYPES = {"F32": torch.float32, "F64": torch.float64, "BF16": torch.bfloat16}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    data = raw[8 + n :]
    tensors = {}
    for name, t in header.items():
        b, e = t["data_offsets"]
        x = torch.frombuffer(bytearray(data[b:e]), dtype=DTYPES[t["dtype"]]) if e > b else torch.empty(0, dtype=DTYPES[t["dtype"]])
        tensors[name] = x.reshape(t["shape"])
    return tensors, meta


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, x in tensors.items():
        x = x.detach().to("cpu", torch.float32).contiguous()
        try:
            blob = x.numpy().tobytes()
        except (RuntimeError, ImportError):  # torch built without numpy
            blob = bytes(x.view(torch.uint8).reshape(-1).tolist())
        header[name] = {"dtype": "F32", "shape": list(x.shape), "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    os.replace(tmp, path)


def supported(opt, has_u):
    """What vla_loop implements: the paper preset's maths at any lambda0."""
    want = {"feature-map": "elu1", "readout": "ratio", "normalize": "both", "u-unit-scaled": "false",
            "delta-floor": "0", "ridge-every": "0", "den-floor": "0"}
    return not has_u and all(opt.get(k) == v for k, v in want.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", required=True, help="the folder vla gate --export-cases wrote (--dtype fp32)")
    ap.add_argument("--out", required=True, help="a new folder for the outputs")
    args = ap.parse_args()
    with open(os.path.join(args.cases, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest["dtype"] != "fp32":
        sys.exit(f"torch_loop_gate: the loop is float32; export the cases with --dtype fp32 (these are {manifest['dtype']})")
    os.makedirs(args.out, exist_ok=False)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(f"torch {torch.__version__} on {dev}; {len(manifest['cases'])} cases in {args.cases}", flush=True)
    ran = 0
    for c in manifest["cases"]:
        opt = options(c["spec_arguments"])
        if not supported(opt, c["has_u"]):
            continue
        x, _ = read_safetensors(os.path.join(args.cases, c["file"]))
        B, T, H, D = x["q"].shape
        # [B, T, H, D] -> [B H, T, D], the loop's layout
        q, k, v = (x[n].to(dev, torch.float32).permute(0, 2, 1, 3).reshape(B * H, T, D).contiguous() for n in ("q", "k", "v"))
        with torch.no_grad():
            o, S, A, norms = vla_loop(q, k, v, lam0=float(opt["lambda0"]))
        write_safetensors(os.path.join(args.out, c["file"]), {
            "o": o.reshape(B, H, T, D).permute(0, 2, 1, 3),
            "S": S.reshape(B, H, D, D),
            "A": A.reshape(B, H, D, D),
            "state_norm": norms.reshape(B, H, T).permute(0, 2, 1),
        })
        ran += 1
        print(f"  {c['file']}", flush=True)
    print(f"torch_loop_gate: ran {ran} of {len(manifest['cases'])} cases (the others use options the loop does not implement)")


if __name__ == "__main__":
    main()
