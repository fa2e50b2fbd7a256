#!/usr/bin/env python3
"""The GPU report's floor table (bench/gpu/make_report.py): each shape's verdict on the 1000x target follows from
the floors, recomputed here from their definitions (12 D^2 FLOP per head and step at 67 TFLOP/s, 4 (4 D + 1) B at
4.8 TB/s, the chain of FLOOR.md's segment latencies: 0.25 us at D = 64, 0.219 at 32, 0.269 at 128, none at 16), on
planted logs whose verdicts differ."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu", "make_report.py")

# (B, H, D, kernel us/step, loop us/step, expected verdict prefix)
SHAPES = [
    (1, 16, 32, 0.299, 384.8, "met"),                       # 1287x
    (1, 16, 64, 0.477, 372.8, "not met: the floor allows it"),  # chain 0.25 us: at most 1491x
    (8, 128, 128, 11.623, 432.9, "impossible"),             # FLOP floor 3.005 us: at most 144x
    (8, 128, 32, 1.786, 301.1, "not met: the floor allows it"),  # chain 0.219 us above the FLOP floor 0.188: at most 1377x
    (8, 128, 16, 0.80, 301.1, "not met: FLOPs and bytes allow it"),  # no chain model at D = 16: FLOP floor 0.047 us
    (1, 16, 64, 0.30, 299.0, "not met: the floor allows it"),   # 997x: just short of 1000x (B=1, H=16 again: T differs)
]


def flop_floor_us(bh, d):
    return bh * 12.0 * d * d / 67e12 * 1e6


# FLOOR.md's chain at D = 64 (~498 cycles at 1980 MHz) and the same segments at D = 32 (G = 8: 3 shuffle levels, 4
# columns a lane) and D = 128 (G = 16, 8 columns a lane), written out here from the segments, not from the script.
CHAIN_US = {32: (2 * 4 * 4.4 + 3 * 35.25 + 83 + 3 * 29 + 122) / 1980.0,
            64: (2 * 4 * 4.4 + 4 * 35.25 + 83 + 4 * 29 + 122) / 1980.0,
            128: (2 * 8 * 4.4 + 4 * 35.25 + 83 + 4 * 29 + 122) / 1980.0}


class FloorTable(unittest.TestCase):
    def run_report(self, shapes):
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "bench.csv"), "w", newline="") as fb, open(os.path.join(d, "torch.csv"), "w", newline="") as ft:
            wb, wt = csv.writer(fb), csv.writer(ft)
            wb.writerow("B,H,T,D,kind,median_ms,us_per_step,tokens_per_s,gflops,reps,note,layout".split(","))
            wt.writerow("baseline,B,H,T,D,median_ms,ms_per_step,reps,note".split(","))
            for i, (B, H, D, us, loop, _) in enumerate(shapes):
                T = 4096 * (i + 1)
                for kind, scale in (("fp32", 1.0), ("bf16", 1.01)):  # the table takes the faster of the two
                    wb.writerow([B, H, T, D, kind, us * scale * T / 1e3, us * scale, 0, 0, 5, "", "cluster"])
                wt.writerow(["torch_loop_fp32", B, H, T, D, loop * T / 1e3, loop / 1e3, 3, "extrapolated"])
        out = os.path.join(d, "report.md")
        subprocess.run([sys.executable, SCRIPT, d, out], check=True)
        with open(out) as fh:
            text = fh.read()
        section = text[text.index("## The 1000x target against the floor"):]
        return [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ") and line[2].isdigit()]

    def test_verdicts_follow_the_floors(self):
        rows = self.run_report(SHAPES)
        self.assertEqual(len(rows), len(SHAPES) - 1)  # (1, 16, 64) twice: the largest T is the row kept
        by = {(int(r[0]), int(r[1])): [c.strip() for c in r] for r in rows}
        self.assertAlmostEqual(CHAIN_US[64], 0.25, places=2)  # the model reproduces FLOOR.md's sum at D = 64
        for B, H, D, us, loop, verdict in SHAPES:  # (1, 16, 64) twice: checked below
            r = by[(B * H, D)] if (B, H, D) != (1, 16, 64) else None
            if r is None:
                continue
            self.assertAlmostEqual(float(r[3]), us, places=3)  # the faster kind
            self.assertAlmostEqual(float(r[4]), flop_floor_us(B * H, D), places=3)
            self.assertTrue(r[10].startswith(verdict), (B, H, D, r[10]))
            floor = max(flop_floor_us(B * H, D), B * H * 4.0 * (4 * D + 1) / 4.8e12 * 1e6, CHAIN_US.get(D, 0.0))
            self.assertEqual(r[9], f"{loop / floor:.0f}x")
            self.assertEqual(r[6], f"{CHAIN_US[D]:.2f}" if D in CHAIN_US else "no model")
        # The largest T of (1, 16, 64) is the planted 997x row: not met although the floor allows 1196x.
        r = by[(16, 64)]
        self.assertEqual(r[8], f"{299.0 / 0.30:.0f}x")
        self.assertTrue(r[10].startswith("not met: the floor allows it"), r[10])

    def test_no_rows_no_section(self):
        d = tempfile.mkdtemp()
        out = os.path.join(d, "report.md")
        subprocess.run([sys.executable, SCRIPT, d, out], check=True)
        with open(out) as fh:
            self.assertNotIn("The 1000x target against the floor", fh.read())


if __name__ == "__main__":
    unittest.main()
