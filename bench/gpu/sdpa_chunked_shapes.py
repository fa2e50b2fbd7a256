#!/usr/bin/env python3
"""Causal bf16 scaled_dot_product_attention at the chunked benchmark's shapes
(bench/gpu/bench_chunked.cu), timed with CUDA events after warm-up, median of
repeats: the softmax baseline of issue 8. Prints a Markdown table."""
import sys

import torch
import torch.nn.functional as F

from torch_baselines import time_events  # this script's folder is on sys.path when it runs


def main():
    quick = "--quick" in sys.argv
    shapes = [(1, 16, 4096)] if quick else [(1, 16, 4096), (1, 16, 16384), (1, 16, 65536), (8, 128, 4096)]
    D = 64
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    print("\n| B | H | T | D | SDPA causal bf16 median ms | tokens/s |\n|---|---|---|---|---|---|")
    for B, H, T in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        q, k, v = (torch.rand(B, H, T, D, device="cuda", dtype=torch.bfloat16, generator=g) * 2 - 1 for _ in range(3))
        ms = time_events(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), 1, 11)
        print(f"| {B} | {H} | {T} | {D} | {ms:.4g} | {B * H * T / (ms * 1e-3):.3g} |")


if __name__ == "__main__":
    main()
