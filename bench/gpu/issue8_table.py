#!/usr/bin/env python3
"""Issue 8's targets, decided from the logs of one device call: `bench_chunked --focus` logs (one or more runs of
one build) and `sdpa_chunked_shapes.py` logs (one or more runs), as bench/gpu/run_scan_focus.sh writes them.

usage: issue8_table.py --focus F1.log [F2.log ...] --sdpa S1.log [S2.log ...]

Prints issue 8's table (Markdown) with each target's verdict computed from the ranges over the runs:
* T = 16,384 (B = 1, H = 16): the scan faster than causal bf16 SDPA. "met" only when the slowest scan run beats the
  fastest SDPA run, "not met" when the fastest scan run is slower than the slowest SDPA run, otherwise "undecided"
  (the ranges overlap: more runs are needed). Timing noise never turns into a verdict.
* T = 65,536 (B = 1, H = 16): the fused bf16 kernel at least 5 times the scan's time, judged on the worst pair
  (the fastest fused run against the slowest scan run).
* B = 8, H = 128, T = 4,096: throughput (head-tokens/s) of the scan, the fused kernel and SDPA; no target.
Every focus log must be of one chunk size C (printed with the table). Every log must name the same device (the
focus logs' "device:" line, the SDPA logs' torch line): timings of different cards are never compared. A missing
shape, an unreadable log or mixed devices is an error (exit 2) that names the file, and nothing is printed to stdout.
"""
import argparse
import re
import sys

SCAN_SPEEDUP_TARGET = 5.0  # issue 8: >= 5x the fused recurrent kernel at T = 65,536


class LogError(Exception):
    pass


def read(path):
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError as e:
        raise LogError(f"{path}: cannot read ({e.strerror})")


def table_rows(text, ncols):
    """Rows of Markdown tables whose first three cells are integers (B, H, T), as lists of cells."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) >= ncols and all(re.fullmatch(r"\d+", c) for c in cells[:3]):
            rows.append(cells)
    return rows


def number(cell, path, what):
    try:
        return float(cell)
    except ValueError:
        raise LogError(f"{path}: {what} is not a number: {cell!r}")


def parse_log(path, device_re, device_what, hint, ncols, row, table_what):
    """(device, {(B, H, T): row(cells, key)}) over the log's table rows of ncols cells; row returns None to skip one."""
    text = read(path)
    m = re.search(device_re, text, re.M)
    if not m:
        raise LogError(f"{path}: no {device_what} line (not {hint}?)")
    out = {}
    for cells in table_rows(text, ncols):
        key = tuple(int(c) for c in cells[:3])
        value = row(cells, key)
        if value is not None:
            out[key] = value
    if not out:
        raise LogError(f"{path}: no rows of the {table_what} table")
    return m.group(1).strip(), out


def parse_focus(path):
    """(device, chunk size C, {(B, H, T): (whole scan ms, fused bf16 ms or None)})"""
    def row(cells, key):
        fused = number(cells[14], path, f"the fused kernel at {key}")
        return number(cells[3], path, f"the whole scan at {key}"), (fused if fused > 0 else None)  # 0: not measured there

    device, rows = parse_log(path, r"^device: (.+?), \d+ SMs", "'device:'", "a bench_chunked --focus log", 16, row, "focus")
    m = re.search(r"^scan focus \([^,]+, C = (\d+),", read(path), re.M)
    if not m:
        raise LogError(f"{path}: no 'scan focus (..., C = N, ...' line: the chunk size is unknown")
    return device, int(m.group(1)), rows


def parse_sdpa(path):
    """(device, {(B, H, T): ms}) for D = 64"""
    def row(cells, key):
        return number(cells[4], path, f"SDPA at {key}") if cells[3] == "64" else None

    return parse_log(path, r"^torch [^,]+, (.+)$", "'torch VERSION, DEVICE'", "an sdpa_chunked_shapes.py log", 6, row, "SDPA")


def gather(paths, parse):
    device, runs = None, []
    for p in paths:
        dev, rows = parse(p)
        if device is not None and dev != device:
            raise LogError(f"{p}: device {dev!r}, but an earlier log ran on {device!r}: timings of different cards are not compared")
        device = dev
        runs.append((p, rows))
    return device, runs


def values(runs, key, pick, kind):
    out = []
    for p, rows in runs:
        if key not in rows:
            raise LogError(f"{p}: no {kind} row for B, H, T = {key}")
        v = pick(rows[key])
        if v is not None:
            out.append(v)
    return out


def span(xs, fmt="{:.4g}"):
    lo, hi = min(xs), max(xs)
    return fmt.format(lo) if lo == hi else fmt.format(lo) + "-" + fmt.format(hi)


def decide(focus_paths, sdpa_paths):
    parsed = {p: parse_focus(p) for p in focus_paths}  # path: (device, C, rows), each log read once
    chunks = {}
    for p, (_, c, _) in parsed.items():
        chunks.setdefault(c, p)
    if len(chunks) > 1:
        (c1, p1), (c2, p2) = list(chunks.items())[:2]
        raise LogError(f"{p2}: C = {c2}, but {p1} ran C = {c1}: one table is one build at one chunk size")
    chunk = next(iter(chunks))
    fdev, focus = gather(focus_paths, lambda p: (parsed[p][0], parsed[p][2]))
    sdev, sdpa = gather(sdpa_paths, parse_sdpa)
    if fdev != sdev:
        raise LogError(f"the focus logs ran on {fdev!r} and the SDPA logs on {sdev!r}: timings of different cards are not compared")

    k16, k64, kbh = (1, 16, 16384), (1, 16, 65536), (8, 128, 4096)
    scan16 = values(focus, k16, lambda r: r[0], "focus")
    sdpa16 = values(sdpa, k16, lambda r: r, "SDPA")
    if max(scan16) < min(sdpa16):
        v16 = "met"
    elif min(scan16) > max(sdpa16):
        v16 = "not met"
    else:
        v16 = "undecided (the ranges overlap)"

    scan64 = values(focus, k64, lambda r: r[0], "focus")
    fused64 = values(focus, k64, lambda r: r[1], "focus")
    if not fused64:
        raise LogError(f"{focus_paths[0]}: the fused kernel was not measured at B, H, T = {k64}")
    worst = min(fused64) / max(scan64)
    v64 = "met" if worst >= SCAN_SPEEDUP_TARGET else "not met"
    sdpa64 = values(sdpa, k64, lambda r: r, "SDPA")

    tokens = kbh[0] * kbh[1] * kbh[2]
    scanbh = values(focus, kbh, lambda r: r[0], "focus")
    fusedbh = values(focus, kbh, lambda r: r[1], "focus")
    sdpabh = values(sdpa, kbh, lambda r: r, "SDPA")
    rate = lambda ms: [tokens / (x * 1e-3) for x in ms]

    lines = [
        f"Device: {fdev}; chunked-scan-bf16 at C = {chunk}; {len(focus)} focus run(s), {len(sdpa)} SDPA run(s).",
        "",
        "| B, H, T | scan | fused bf16 | SDPA causal bf16 | target | verdict |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| 1, 16, 16,384 | {span(scan16)} ms | - | {span(sdpa16)} ms | scan faster than SDPA | **{v16}** "
        f"(scan/SDPA {span([s / d for s in scan16 for d in sdpa16], '{:.3f}')}) |",
        f"| 1, 16, 65,536 | {span(scan64)} ms | {span(fused64)} ms | {span(sdpa64)} ms | fused >= {SCAN_SPEEDUP_TARGET:g}x the scan "
        f"| **{v64}** (worst pair {worst:.2f}x) |",
        f"| 8, 128, 4,096 | {span(scanbh)} ms = {span(rate(scanbh), '{:.3g}')} head-tokens/s | "
        + (f"{span(fusedbh)} ms = {span(rate(fusedbh), '{:.3g}')}" if fusedbh else "not measured")
        + f" | {span(sdpabh)} ms = {span(rate(sdpabh), '{:.3g}')} | throughput | - |",
    ]
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--focus", nargs="+", required=True, help="bench_chunked --focus logs of one build")
    ap.add_argument("--sdpa", nargs="+", required=True, help="sdpa_chunked_shapes.py logs")
    a = ap.parse_args(argv)
    try:
        text = decide(a.focus, a.sdpa)
    except LogError as e:
        print(f"issue8_table.py: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
