#!/usr/bin/env python3
"""Where a kernel's time goes, by CUDA source line, from an Nsight Compute report.

    ncu --set full --import-source yes -k regex:<kernel> --launch-count 1 -o rep <binary> <args>
    ncu -i rep.ncu-rep --page source --csv --print-source cuda,sass > lines.csv
    python3 bench/gpu/ncu_source_lines.py lines.csv [--top 40]

The binary must be built with -lineinfo (e.g. -DCMAKE_CUDA_FLAGS=-lineinfo). Prints, per (file, line), the share
of warp-stall samples (where the warps were when sampled: a latency-bound kernel's time) and of executed
instructions, largest first. Inlined helpers (an fma wrapper, a shuffle) collect the samples of all their call
sites under their own line. The page lists some instructions under more than one line (inlining: 2,806 of 8,208
addresses in scan_gate's page), so the totals exceed the kernel's and the shares are of the page's totals.
"""
import argparse
import csv
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    per_line = {}
    file_name = "?"
    samples_col = executed_col = None
    with open(args.csv, errors="replace") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "File Path":
                file_name = row[1].rsplit("/", 1)[-1]
                continue
            if row[0] == "Line No":  # the header of a file's block (a page without metrics has neither column)
                have = "Warp Stall Sampling (All Samples)" in row and "Instructions Executed" in row
                samples_col = row.index("Warp Stall Sampling (All Samples)") if have else None
                executed_col = row.index("Instructions Executed") if have else None
                continue
            if samples_col is None or not row[0].isdigit():
                continue  # "Function Name" rows, and a line's SASS rows (an empty line number)
            try:
                s, e = float(row[samples_col]), float(row[executed_col])
            except (ValueError, IndexError):
                continue
            key = (file_name, int(row[0]))
            old = per_line.get(key, (0.0, 0.0, row[1].strip()))
            per_line[key] = (old[0] + s, old[1] + e, old[2])
    if not per_line:
        print(f"{args.csv}: no source lines with metrics (built without -lineinfo, or not a 'cuda,sass' source page?)",
              file=sys.stderr)
        return 2
    total_s = sum(v[0] for v in per_line.values()) or 1.0
    total_e = sum(v[1] for v in per_line.values()) or 1.0
    print(f"{len(per_line)} lines, {total_s:.0f} stall samples, {total_e:.0f} warp instructions executed")
    print("| samples % | executed % | file:line | source |\n|---|---|---|---|")
    for (fname, line), (s, e, src) in sorted(per_line.items(), key=lambda kv: -kv[1][0])[: args.top]:
        print(f"| {100 * s / total_s:.1f} | {100 * e / total_e:.1f} | {fname}:{line} | `{src[:90]}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
