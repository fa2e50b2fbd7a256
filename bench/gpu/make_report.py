#!/usr/bin/env python3
"""Assembles the GPU report (Markdown) from the logs of scripts/gpu_report.sh.

usage: make_report.py LOGDIR OUT.md
LOGDIR holds env.txt (and env_previous.txt when the logs of an earlier run were merged in), build.log, test_full.log, memcheck.log, racecheck.log,
initcheck.log, bench.log, bench.csv, torch.csv, script.sh (any may be missing:
the report says so).
"""
import csv
import math
import os
import re
import sys


def read(d, name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return None
    with open(p, errors="replace") as fh:
        return fh.read()


def block(text, limit=None):
    if text is None:
        return "_(missing)_\n"
    lines = text.rstrip("\n").split("\n")
    if limit and len(lines) > limit:
        lines = lines[: limit // 2] + [f"... ({len(lines) - limit} lines elided) ..."] + lines[-limit // 2:]
    return "```\n" + "\n".join(lines) + "\n```\n"


def sanitizer_line(text):
    if text is None:
        return "not run"
    found = re.findall(r"(ERROR SUMMARY: .*|RACECHECK SUMMARY: .*)", text)
    rc = re.findall(r"^exit status: (\d+)", text, re.M)
    return "; ".join(found) + (f" (exit status {rc[-1]})" if rc else "")


def load_csv(d, name):
    t = read(d, name)
    if t is None:
        return []
    return list(csv.DictReader(t.splitlines()))


def f(x, fmt="{:.3f}"):
    try:
        return fmt.format(float(x))
    except (TypeError, ValueError):
        return "-"


# H200 SXM datasheet: FP32 (non-tensor) 67 TFLOP/s, HBM3e 4.8 TB/s.
PEAK_FP32_FLOPS = 67e12
PEAK_HBM_BYTES = 4.8e12
# The dependent chain of one step of one head (reports/gpu/FLOOR.md, "The floor"), from the segment latencies measured
# on the H200 (bench_latency, clock64, 1980 MHz) and the kernel's layout at D (G lanes per row, CW = D / G columns per
# lane, L = log2 G shuffle levels): CW dependent FFMAs for a lane's partials and again for the dots (4.4 cycles each),
# a reduce-scatter of 35.25 cycles per level (141 for 4), the exchange through shared memory and a barrier (83), the
# dots' trees (29 per level), the S side's square root, IEEE reciprocal and update (122). At D = 64 (G = 16) that is
# the ~498 cycles = 0.25 us FLOOR.md sums; at D = 32 (G = 8) and 128 (G = 16, CW = 8) the same segments give the
# model's value. Not modelled at D = 16 (one warp per head: no barrier; its exchange was not measured).
CHAIN_G = {32: 8, 64: 16, 128: 16}
CLOCK_HZ = 1.98e9


def chain_floor_us(D):
    if D not in CHAIN_G:
        return None
    G = CHAIN_G[D]
    cw, levels = D // G, G.bit_length() - 1
    cycles = 2 * cw * 4.4 + 35.25 * levels + 83 + 29 * levels + 122
    return cycles / CLOCK_HZ * 1e6


def floor_section(by, loop):
    """The 1000x target against what the H200 allows: per (B, H, D), at the largest T timed, the loop's time per step
    over the lower bound of any recurrent kernel's step (max of the FLOP, byte and, where measured, chain floors)."""
    rows = {}
    for (B, H, T, D), kinds in by.items():
        best = [float(r["us_per_step"]) for k, r in kinds.items() if k in ("fp32", "bf16") and r.get("us_per_step")]
        lp = loop.get((B, H, T, D), {}).get("ms_per_step")
        if best and lp:
            key = (int(B), int(H), int(D))
            if key not in rows or int(T) > rows[key][0]:
                rows[key] = (int(T), min(best), float(lp) * 1e3)
    if not rows:
        return ""
    s = ["\n## The 1000x target against the floor (per step, the largest T timed)\n",
         "FLOPs: 12 D^2 per head and step (the kernel's four matrix-vector products and two rank-1 updates, an FMA "
         "counted as 2), at the datasheet's 67 TFLOP/s FP32 over the whole GPU. Bytes: q, k, v in and o out in fp32 "
         "plus the state norm, 4 (4 D + 1) B per head and step, at 4.8 TB/s. Chain: the dependent chain of one step "
         "of one head (reports/gpu/FLOOR.md): the segment latencies measured at D = 64 summed for D's layout (lanes per row, "
         "columns per lane); none at D = 16, where the bound below omits it and so underestimates. Best ratio = loop / max(floors): no recurrent kernel doing this work can be faster "
         "than the loop by more.\n\n",
         "| B*H | D | T | kernel us/step (best of fp32, bf16) | FLOP floor us | bytes floor us | chain floor us | "
         "loop us/step | kernel vs loop | most the floors allow | 1000x |\n",
         "|---|---|---|---|---|---|---|---|---|---|---|\n"]
    for (B, H, D), (T, us, lp) in sorted(rows.items(), key=lambda kv: (kv[0][0] * kv[0][1], kv[0][2])):
        bh = B * H
        flop = bh * 12.0 * D * D / PEAK_FP32_FLOPS * 1e6
        byt = bh * 4.0 * (4 * D + 1) / PEAK_HBM_BYTES * 1e6
        chain = chain_floor_us(D)
        floor = max(flop, byt, chain or 0.0)
        got, best = lp / us, lp / floor
        verdict = ("met" if got >= 1000 else
                   "impossible: the floor allows less" if best < 1000 else
                   f"not met: the floor allows it; the kernel runs at {floor / us:.0%} of the floor's speed" if chain else
                   f"not met: FLOPs and bytes allow it (no chain model at this D; FLOP floor {flop / us:.0%} of the kernel's step)")
        s.append(f"| {bh} | {D} | {T} | {us:.3f} | {flop:.3f} | {byt:.4f} | {f'{chain:.2f}' if chain else 'no model'} | "
                 f"{lp:.1f} | {got:.0f}x | {best:.0f}x | {verdict} |\n")
    return "".join(s)


def main():
    d, out = sys.argv[1], sys.argv[2]
    env = read(d, "env.txt") or ""
    ours = load_csv(d, "bench.csv")
    torch_rows = load_csv(d, "torch.csv")
    loop = {(r["B"], r["H"], r["T"], r["D"]): r for r in torch_rows if r["baseline"] == "torch_loop_fp32"}
    sdpa = {(r["B"], r["H"], r["T"], r["D"]): r for r in torch_rows if r["baseline"] == "sdpa_causal_bf16"}
    by = {}
    for r in ours:
        by.setdefault((r["B"], r["H"], r["T"], r["D"]), {})[r["kind"]] = r

    s = []
    s.append("# Fused VLA kernels on an H200: tests, sanitizers, benchmark\n")
    s.append("Made by `scripts/gpu_report.sh` (reproduce: run it on a machine with an H200, nvcc and PyTorch; "
             "it writes this file). Environment as read on the machine:\n")
    s.append(block(env))
    prev = read(d, "env_previous.txt")
    if prev is not None:
        s.append("The report is split over two runs of the same kernel source (the sha256 lines agree); the stages "
                 "not run above come from this earlier run:\n")
        s.append(block(prev))
    s.append("## CUDA tests (kernel vs CPU twin vs double reference, error model)\n")
    t = read(d, "test_full.log")
    summary = re.findall(r"^(PASSED|FAILED): .*$", t or "", re.M)
    s.append(f"`test_gpu_cuda` (full): **{re.search(r'^(PASSED|FAILED): .*$', t or '', re.M).group(0) if summary else 'no summary line'}**\n")
    s.append(block(t, limit=400))
    s.append("## compute-sanitizer (on `test_gpu_cuda --quick`: every D, every precision, T up to 67)\n")
    s.append("| tool | result |\n|---|---|\n")
    for tool in ("memcheck", "racecheck", "initcheck"):
        s.append(f"| {tool} | {sanitizer_line(read(d, tool + '.log'))} |\n")
    s.append("\n")
    s.append("## Benchmark\n")
    s.append("Median of repeated launches timed with CUDA events after one warm-up launch; inputs uniform in [-1, 1] "
             "(`bench/gpu/bench_gpu.cu`). PyTorch loop: `bench/gpu/torch_baselines.py`, float32, timed over a short run "
             "and **extrapolated** per step to T. SDPA: `torch.nn.functional.scaled_dot_product_attention(is_causal=True)`, "
             "bf16, timed in full. Times in ms.\n\n")
    # (proofs_check finds the table by its header's first columns: "| B | H | T | D | fp32 | bf16 |")
    s.append("| B | H | T | D | fp32 | bf16 | bf16-state | us/step (bf16) | torch loop (extrap.) | loop / bf16 | SDPA bf16 | SDPA / bf16 | layout |\n")
    s.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    keys = sorted(set(by) | set(sdpa), key=lambda k: (int(k[0]) * int(k[1]), int(k[3]), int(k[2])))
    for k in keys:
        row = by.get(k, {})
        def ms(kind):
            r = row.get(kind)
            if r is None:
                return "-"
            return f(r["median_ms"]) if r["median_ms"] else ("skipped" if r.get("note") else "-")
        bf = row.get("bf16", {}).get("median_ms")
        lp = loop.get(k, {}).get("median_ms")
        sd = sdpa.get(k, {}).get("median_ms")
        ratio = lambda a, b: f(float(a) / float(b), "{:.0f}x") if a and b else "-"
        ratio2 = lambda a, b: f(float(a) / float(b), "{:.2f}x") if a and b else "-"
        layout = "/".join(sorted({r.get("layout") or "-" for r in row.values()})) if row else "-"
        s.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {ms('fp32')} | {ms('bf16')} | {ms('bf16-state')} | "
                 f"{f(row.get('bf16', {}).get('us_per_step'), '{:.3f}')} | {f(lp, '{:.1f}')} | {ratio(lp, bf)} | {f(sd)} | {ratio2(sd, bf)} | {layout} |\n")
    notes = [r for r in ours if r.get("note")] + [r for r in torch_rows if r.get("note", "").startswith("skipped")]
    if notes:
        s.append("\nSkipped: " + "; ".join(f"{r.get('kind', r.get('baseline'))} B={r['B']} H={r['H']} T={r['T']} D={r['D']}: {r['note']}"
                                          for r in notes) + "\n")
    # Crossover at B=1, H=16, D=64.
    for kind in ("fp32", "bf16"):
        r = by.get(("1", "16", "65536", "64"), {}).get(kind)
        pts = sorted((int(k[2]), float(v["median_ms"])) for k, v in sdpa.items()
                     if k[0] == "1" and k[1] == "16" and k[3] == "64" and v["median_ms"])
        if r and r["median_ms"] and len(pts) >= 2:
            per = float(r["us_per_step"]) / 1e3  # ms per step
            cross = None
            for (t0, m0), (t1, m1) in zip(pts, pts[1:]):
                if m0 <= per * t0 and m1 >= per * t1:  # SDPA crosses ours between t0 and t1 (log-log interpolation)
                    a = math.log(m1 / m0) / math.log(t1 / t0)
                    # m0 (T/t0)^a = per T  ->  T = (per t0^a / m0)^(1/(a-1))
                    cross = (per * t0 ** a / m0) ** (1 / (a - 1))
            note = ""
            if cross is None and pts[-1][1] < per * pts[-1][0]:  # SDPA still faster at the largest T: extend its last slope
                (t0, m0), (t1, m1) = pts[-2], pts[-1]
                a = math.log(m1 / m0) / math.log(t1 / t0)
                if a > 1:
                    cross = (per * t0 ** a / m0) ** (1 / (a - 1))
                    note = f" (extrapolated with SDPA's slope T^{a:.2f} between T={t0} and T={t1})"
            s.append(f"\nB=1, H=16, D=64, {kind}: {per * 1e3:.3f} us per step at T=65536; SDPA points "
                     + ", ".join(f"T={t}: {m:.3f} ms" for t, m in pts)
                     + (f"; crossover (SDPA slower beyond) at T ~ {cross:,.0f}{note}" if cross else "; no crossover found")
                     + "\n")
    s.append(floor_section(by, loop))
    s.append("\n## Latencies on the dependent chain (clock64, one block or cluster, `bench/gpu/bench_latency.cu`)\n")
    s.append("The terms of the per-step floor; the analysis is reports/gpu/FLOOR.md.\n\n")
    s.append((read(d, "latency.md") or "_(not run)_") + "\n")
    s.append("\n## Block layouts (timing experiments, fp32, `bench/gpu/bench_variants.cu`)\n")
    s.append((read(d, "variants.log") or "_(not run)_") + "\n")
    s.append("\n## Kernel resources and raw benchmark log\n")
    s.append(block(read(d, "bench.log"), limit=200))
    s.append("## Build log (tail)\n")
    s.append(block(read(d, "build.log"), limit=60))
    s.append("## The script\n")
    s.append(block(read(d, "script.sh")))
    with open(out, "w") as fh:
        fh.write("".join(s))


if __name__ == "__main__":
    main()
