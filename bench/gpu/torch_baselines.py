#!/usr/bin/env python3
"""PyTorch baselines for the fused-kernel benchmark (run on the GPU machine).

(a) A naive sequential PyTorch loop of the same VLA recurrence (docs/SPEC.md,
    `paper` preset, float32): one step per Python iteration, batched over heads.
    Timed over a short run (--loop-steps steps after warm-up) and reported per
    step; the time at a full T is that per-step time times T (extrapolated, and
    labelled so).
(b) torch's causal scaled_dot_product_attention in bf16 at the same B, H, T, D
    (the softmax baseline), timed in full with CUDA events, median of repeats.

Writes CSV rows: baseline,B,H,T,D,median_ms,ms_per_step,reps,note
"""
import argparse
import csv
import statistics
import sys

import torch
import torch.nn.functional as F


def vla_loop(q, k, v, lam0=1.0):
    """The spec's recurrence, written plainly: [BH, T, D] float32 in, o out."""
    BH, T, D = q.shape
    A = (torch.eye(D, device=q.device) / lam0).expand(BH, D, D).clone()
    S = torch.zeros(BH, D, D, device=q.device)
    n = torch.zeros(BH, D, device=q.device)
    o = torch.empty_like(v)
    norms = torch.empty(BH, T, device=q.device)
    for t in range(T):
        pk = F.elu(k[:, t]) + 1
        kh = pk / pk.norm(dim=-1, keepdim=True)
        u = kh
        z = torch.bmm(A, u.unsqueeze(-1)).squeeze(-1)  # z = A_{t-1} u
        delta = 1 + (u * z).sum(-1, keepdim=True)
        A = A - z.unsqueeze(-1) * (z / delta).unsqueeze(-2)  # Sherman-Morrison
        w = torch.bmm(A, kh.unsqueeze(-1)).squeeze(-1)  # w = A_t k^
        a = w / w.norm(dim=-1, keepdim=True)
        r = v[:, t] - torch.bmm(S, kh.unsqueeze(-1)).squeeze(-1)
        S = S + r.unsqueeze(-1) * a.unsqueeze(-2)
        n = n + pk
        pq = F.elu(q[:, t]) + 1
        y = torch.bmm(S, pq.unsqueeze(-1)).squeeze(-1)
        o[:, t] = y / (n * pq).sum(-1, keepdim=True)
        norms[:, t] = S.flatten(1).norm(dim=-1)
    return o, S, A, norms


def time_events(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    return statistics.median(ms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--loop-steps", type=int, default=64)
    ap.add_argument("--max-gib", type=float, default=100.0)
    args = ap.parse_args()
    dev = torch.device("cuda")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)
    bhs = [(1, 16)] if args.quick else [(1, 16), (1, 128), (8, 128)]
    Ts = [4096] if args.quick else [4096, 16384, 65536]
    Ds = [64] if args.quick else [32, 64, 128]
    rows = []
    g = torch.Generator(device=dev).manual_seed(0)

    # (a) the naive loop: per-step time from a short run (independent of T).
    for B, H in bhs:
        for D in Ds:
            L = args.loop_steps
            q, k, v = (torch.randn(B * H, L, D, device=dev, generator=g) for _ in range(3))
            ms = time_events(lambda: vla_loop(q, k, v), 1, 3)
            per_step = ms / L
            for T in Ts:
                rows.append(["torch_loop_fp32", B, H, T, D, per_step * T, per_step, 3,
                             f"extrapolated from {L} steps"])
            print(f"torch loop B={B} H={H} D={D}: {per_step * 1e3:.1f} us/step", flush=True)
            del q, k, v

    # (b) causal softmax attention, bf16, full size. T = 43008 (~43k) added at
    # B=1, H=16, D=64 for the crossover with the recurrent kernel.
    shapes = [(B, H, T, D) for B, H in bhs for D in Ds for T in Ts]
    if not args.quick:
        shapes.append((1, 16, 43008, 64))
    for B, H, T, D in shapes:
        gib = 4 * B * H * T * D * 2 / 2**30
        if gib > args.max_gib:
            rows.append(["sdpa_causal_bf16", B, H, T, D, "", "", 0, f"skipped: {gib:.0f} GiB"])
            continue
        q, k, v = (torch.randn(B, H, T, D, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(3))
        f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        est = time_events(f, 1, 1)
        reps = 3 if est > 500 else 7
        ms = time_events(f, 1, reps)
        rows.append(["sdpa_causal_bf16", B, H, T, D, ms, ms / T, reps, ""])
        print(f"sdpa B={B} H={H} T={T} D={D}: {ms:.3f} ms", flush=True)
        del q, k, v
        torch.cuda.empty_cache()

    with open(args.csv, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["baseline", "B", "H", "T", "D", "median_ms", "ms_per_step", "reps", "note"])
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
