#!/usr/bin/env python3
"""A template for putting a kernel of your own under vla-verify's gate, fuzzer,
report and benchmark (docs/GATE.md, "A kernel outside this repository"):

    vla gate  --external-serve 'python3 examples/external_kernel_server.py' --dtype fp32 [--quick]
    vla fuzz  --external-serve 'python3 examples/external_kernel_server.py' --dtype fp32 --seconds 60
    vla report --external-serve 'python3 examples/external_kernel_server.py' --external-dtype fp32

vla starts this process once and sends one line per stream on its standard input,
INPUT<TAB>OUTPUT<TAB>OPTIONS (a safetensors stream q, k, v [B,T,H,D] and optional u;
the file to write o [B,T,H,Dv] and S, A, state_norm to; the options as `vla run`
arguments), and reads one answer per line: "ok", "skip REASON" or "error MESSAGE".

The kernel here is the spec (docs/SPEC.md) written plainly in Python floats (double
precision), standard library only, so that this file runs anywhere vla does and is
tested in CI (tests/gate/test_external.cpp). Replace kernel() with a call into yours;
keep the protocol loop. It skips streams too large for pure Python.
"""
import json
import math
import shlex
import struct
import sys

MAX_WORK = 300_000  # B*H*T*Dk*Dk above which this pure-Python kernel skips a stream


def read_safetensors(path):
    """{name: (shape, flat list of floats)} and the metadata, for F64, F32 and BF16 tensors."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack_from("<Q", raw, 0)
    header = json.loads(raw[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, t in header.items():
        b, e = t["data_offsets"]
        data = raw[base + b : base + e]
        if t["dtype"] == "F64":
            vals = list(struct.unpack(f"<{len(data) // 8}d", data))
        elif t["dtype"] == "F32":
            vals = list(struct.unpack(f"<{len(data) // 4}f", data))
        elif t["dtype"] == "BF16":  # the upper half of a float32
            vals = [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in struct.unpack(f"<{len(data) // 2}H", data)]
        else:
            raise ValueError(f"tensor {name}: dtype {t['dtype']} not handled by this template")
        out[name] = (t["shape"], vals)
    return out, meta


def write_safetensors(path, tensors):
    """tensors: {name: (shape, flat list)}, written as F64 (exact for any float this kernel makes)."""
    header, blobs, off = {}, [], 0
    for name, (shape, vals) in tensors.items():
        blob = struct.pack(f"<{len(vals)}d", *vals)
        header[name] = {"dtype": "F64", "shape": shape, "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def options(text):
    words, out, i = shlex.split(text), {}, 0
    while i < len(words):
        w = words[i]
        if "=" in w:
            k, v = w[2:].split("=", 1)
            i += 1
        else:
            k, v = w[2:], words[i + 1]
            i += 2
        out[k] = v
    return out


def div(x, d):
    """IEEE division (Python raises on a zero divisor): the spec's undefined ratio readout is a non-finite o."""
    if d != 0:
        return x / d
    if x == 0 or math.isnan(x):
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, d)


def kernel(q, k, v, u, opt):
    """One head: lists of T vectors in, (o rows, S, A, norms) out. docs/SPEC.md, every option."""
    dk, dv = len(q[0]), len(v[0])
    elu1 = opt["feature-map"] == "elu1"
    norm_key = opt["normalize"] in ("both", "key")
    norm_gate = opt["normalize"] in ("both", "gate")
    lam0, dfloor, every, ridge, dfl = (float(opt["lambda0"]), float(opt["delta-floor"]), int(opt["ridge-every"]),
                                       float(opt["ridge"]), float(opt["den-floor"]))
    unit_scaled = opt["u-unit-scaled"] == "true"
    ratio = opt["readout"] == "ratio"
    phi = (lambda x: x + 1.0 if x > 0 else math.exp(x)) if elu1 else (lambda x: x)
    A = [[(1.0 / lam0 if i == j else 0.0) for j in range(dk)] for i in range(dk)]
    S = [[0.0] * dk for _ in range(dv)]
    n = [0.0] * dk
    o, norms = [], []
    for t in range(len(q)):
        pk = [phi(x) for x in k[t]]
        nk = math.sqrt(sum(x * x for x in pk))
        kh = [x / nk for x in pk] if norm_key else pk
        ut = list(u[t]) if u is not None else list(kh)
        if unit_scaled:
            nu = math.sqrt(sum(x * x for x in ut))
            ut = [x / nu / math.sqrt(dk) for x in ut]
        z = [sum(A[i][j] * ut[j] for j in range(dk)) for i in range(dk)]
        delta = 1.0 + sum(a * b for a, b in zip(ut, z))
        if dfloor > 0:
            delta = max(delta, dfloor)
        g = [x / delta for x in z]
        for i in range(dk):
            for j in range(dk):
                A[i][j] -= z[i] * g[j]
        if every > 0 and (t + 1) % every == 0:
            for i in range(dk):
                A[i][i] += ridge
        w = [sum(A[i][j] * kh[j] for j in range(dk)) for i in range(dk)]
        if norm_gate:
            nw = math.sqrt(sum(x * x for x in w))
            w = [x / nw for x in w]
        r = [v[t][i] - sum(S[i][j] * kh[j] for j in range(dk)) for i in range(dv)]
        for i in range(dv):
            for j in range(dk):
                S[i][j] += r[i] * w[j]
        n = [a + b for a, b in zip(n, pk)]
        pq = [phi(x) for x in q[t]]
        y = [sum(S[i][j] * pq[j] for j in range(dk)) for i in range(dv)]
        if ratio:
            den = sum(a * b for a, b in zip(n, pq))
            if dfl > 0:
                den = max(den, dfl)
            y = [div(x, den) for x in y]
        o.append(y)
        norms.append(math.sqrt(sum(x * x for row in S for x in row)))
    return o, S, A, norms


def serve_one(inp, out, opts):
    x, _ = read_safetensors(inp)
    opt = options(opts)
    (B, T, H, D), q = x["q"]
    _, k = x["k"]
    (_, _, _, Dv), v = x["v"]
    u = x["u"][1] if "u" in x else None
    if B * H * T * D * D > MAX_WORK:
        return f"skip B*H*T*D^2 = {B * H * T * D * D} is beyond this pure-Python template's {MAX_WORK}"
    at = lambda flat, b, t, h, d: flat[((b * T + t) * H + h) * d : ((b * T + t) * H + h + 1) * d]
    o_all, S_all, A_all, n_all = [0.0] * (B * T * H * Dv), [], [], [0.0] * (B * T * H)
    for b in range(B):
        for h in range(H):
            rows = lambda flat, d: [at(flat, b, t, h, d) for t in range(T)]
            o, S, A, norms = kernel(rows(q, D), rows(k, D), rows(v, Dv), rows(u, D) if u is not None else None, opt)
            for t in range(T):
                o_all[((b * T + t) * H + h) * Dv : ((b * T + t) * H + h + 1) * Dv] = o[t]
                n_all[(b * T + t) * H + h] = norms[t]
            S_all += [x for row in S for x in row]
            A_all += [x for row in A for x in row]
    write_safetensors(out, {"o": ([B, T, H, Dv], o_all), "S": ([B, H, Dv, D], S_all), "A": ([B, H, D, D], A_all),
                            "state_norm": ([B, T, H], n_all)})
    return "ok"


def main():
    for line in sys.stdin:
        inp, out, opts = line.rstrip("\n").split("\t")
        try:
            answer = serve_one(inp, out, opts)
        except Exception as e:  # the protocol's error answer: vla fails the stream and says why
            answer = f"error {type(e).__name__}: {e}".replace("\n", " ")
        print(answer, flush=True)


if __name__ == "__main__":
    main()
