#!/usr/bin/env python3
"""bench/gpu/issue8_table.py on planted logs: each verdict follows from the ranges over the runs (met only when
every scan run beats every SDPA run, not met only when every run is slower, undecided where they overlap; the 5x
target on the worst pair), and bad logs (mixed devices, a missing shape, a malformed number, a file that is not a
log) are refused with exit 2, a message naming the file, and nothing on stdout."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu", "issue8_table.py")
H200 = "NVIDIA H200"


def focus_log(whole16, whole64, fused64, wholebh, fusedbh=19.3, device=H200, chunk=32):
    def row(b, h, t, whole, fused):
        # | B | H | T | whole | no norms | 9 kernel and stage columns | fused | segment steps |
        return f"| {b} | {h} | {t} | **{whole}** | {whole} | " + " | ".join(["0.1"] * 9) + f" | {fused} | 256 |"

    return "\n".join([
        f"device: {device}, 132 SMs", "",
        f"scan focus (chunked-scan-bf16, C = {chunk}, D = 64; ms, medians of 21):",
        "| B | H | T | whole scan | whole, o and S only (no norms) | gate: prep | prefix | seg_inverse | steps | stage |"
        " state: prep | pass | readout | stage | fused bf16 | segment steps |",
        "|" + "---|" * 16,
        row(1, 16, 16384, whole16, 0),
        row(1, 16, 65536, whole64, fused64),
        row(8, 128, 4096, wholebh, fusedbh),
    ]) + "\n"


def sdpa_log(ms16, ms64=18.0, msbh=4.8, device=H200):
    return "\n".join([
        f"torch 2.11.0+cu130, {device}", "",
        "| B | H | T | D | SDPA causal bf16 median ms | tokens/s |",
        "|---|---|---|---|---|---|",
        "| 1 | 16 | 4096 | 64 | 0.13 | 5e+08 |",
        f"| 1 | 16 | 16384 | 64 | {ms16} | 2e+08 |",
        f"| 1 | 16 | 65536 | 64 | {ms64} | 6e+07 |",
        f"| 8 | 128 | 4096 | 64 | {msbh} | 9e+08 |",
    ]) + "\n"


class Issue8Table(unittest.TestCase):
    def run_tool(self, focus, sdpa):
        with tempfile.TemporaryDirectory() as d:
            fp, sp = [], []
            for i, text in enumerate(focus):
                fp.append(os.path.join(d, f"focus_{i}.log"))
                with open(fp[-1], "w") as fh:
                    fh.write(text)
            for i, text in enumerate(sdpa):
                sp.append(os.path.join(d, f"sdpa_{i}.log"))
                with open(sp[-1], "w") as fh:
                    fh.write(text)
            r = subprocess.run([sys.executable, SCRIPT, "--focus", *fp, "--sdpa", *sp], capture_output=True, text=True)
            return r.returncode, r.stdout, r.stderr

    def row(self, out, shape):
        lines = [l for l in out.splitlines() if l.startswith(f"| {shape} |")]
        self.assertEqual(len(lines), 1, out)
        return lines[0]

    def test_met_only_when_every_scan_run_beats_every_sdpa_run(self):
        rc, out, _ = self.run_tool([focus_log(1.25, 4.7, 32.0, 15.6), focus_log(1.26, 4.7, 32.0, 15.6)],
                                   [sdpa_log(1.27), sdpa_log(1.29)])
        self.assertEqual(rc, 0)
        self.assertIn("**met**", self.row(out, "1, 16, 16,384"))
        self.assertIn("Device: NVIDIA H200; chunked-scan-bf16 at C = 32; 2 focus run(s), 2 SDPA run(s).", out)

    def test_not_met_when_every_scan_run_is_slower(self):
        rc, out, _ = self.run_tool([focus_log(1.276, 4.7, 32.0, 15.6), focus_log(1.283, 4.7, 32.0, 15.6)],
                                   [sdpa_log(1.225), sdpa_log(1.237)])
        self.assertEqual(rc, 0)
        self.assertIn("**not met**", self.row(out, "1, 16, 16,384"))
        self.assertIn("scan/SDPA 1.032-1.047", self.row(out, "1, 16, 16,384"))

    def test_overlapping_ranges_are_undecided(self):
        # One scan run beats one SDPA run, another does not: no verdict from noise.
        rc, out, _ = self.run_tool([focus_log(1.27, 4.7, 32.0, 15.6), focus_log(1.30, 4.7, 32.0, 15.6)],
                                   [sdpa_log(1.28), sdpa_log(1.29)])
        self.assertEqual(rc, 0)
        self.assertIn("**undecided", self.row(out, "1, 16, 16,384"))

    def test_the_5x_target_is_judged_on_the_worst_pair(self):
        # Best pair 25.5 / 4.9 = 5.2x, worst pair 24.5 / 5.0 = 4.9x: not met.
        rc, out, _ = self.run_tool([focus_log(1.2, 5.0, 25.5, 15.6), focus_log(1.2, 4.9, 24.5, 15.6)], [sdpa_log(1.3)])
        self.assertEqual(rc, 0)
        self.assertIn("**not met** (worst pair 4.90x)", self.row(out, "1, 16, 65,536"))
        rc, out, _ = self.run_tool([focus_log(1.2, 4.7, 32.0, 15.6)], [sdpa_log(1.3)])
        self.assertIn("**met** (worst pair 6.81x)", self.row(out, "1, 16, 65,536"))

    def test_throughput_row(self):
        rc, out, _ = self.run_tool([focus_log(1.2, 4.7, 32.0, 16.0, fusedbh=20.0)], [sdpa_log(1.3, msbh=4.0)])
        self.assertEqual(rc, 0)
        row = self.row(out, "8, 128, 4,096")
        # 8 * 128 * 4096 head-tokens over 16 ms, 20 ms, 4 ms.
        for rate in ("2.62e+08", "2.1e+08", "1.05e+09"):
            self.assertIn(rate, row)

    def refused(self, focus, sdpa, needle):
        rc, out, err = self.run_tool(focus, sdpa)
        self.assertEqual(rc, 2, err)
        self.assertEqual(out, "")
        self.assertIn(needle, err)

    def test_mixed_devices_are_refused(self):
        self.refused([focus_log(1.2, 4.7, 32.0, 15.6), focus_log(1.2, 4.7, 32.0, 15.6, device="NVIDIA H100 80GB HBM3")],
                     [sdpa_log(1.3)], "focus_1.log: device 'NVIDIA H100 80GB HBM3'")
        self.refused([focus_log(1.2, 4.7, 32.0, 15.6)], [sdpa_log(1.3, device="NVIDIA H100 80GB HBM3")],
                     "timings of different cards are not compared")

    def test_mixed_chunk_sizes_are_refused_and_the_chunk_size_is_printed(self):
        self.refused([focus_log(1.2, 4.7, 32.0, 15.6), focus_log(1.1, 4.7, 32.0, 15.6, chunk=64)], [sdpa_log(1.3)],
                     "focus_1.log: C = 64, but")
        rc, out, _ = self.run_tool([focus_log(1.1, 4.7, 32.0, 15.6, chunk=64)], [sdpa_log(1.3)])
        self.assertEqual(rc, 0)
        self.assertIn("chunked-scan-bf16 at C = 64;", out)

    def test_a_missing_shape_names_the_file(self):
        text = "\n".join(l for l in focus_log(1.2, 4.7, 32.0, 15.6).splitlines() if "| 65536 |" not in l)
        self.refused([focus_log(1.2, 4.7, 32.0, 15.6), text], [sdpa_log(1.3)], "focus_1.log: no focus row for B, H, T = (1, 16, 65536)")

    def test_a_malformed_number_is_refused(self):
        self.refused([focus_log("1.2x", 4.7, 32.0, 15.6)], [sdpa_log(1.3)], "the whole scan at (1, 16, 16384) is not a number")

    def test_a_file_that_is_not_a_log_is_refused(self):
        self.refused([sdpa_log(1.3)], [sdpa_log(1.3)], "focus_0.log: no 'device:' line")
        self.refused([focus_log(1.2, 4.7, 32.0, 15.6)], ["nothing here\n"], "sdpa_0.log: no 'torch VERSION, DEVICE' line")


if __name__ == "__main__":
    unittest.main()
