#!/usr/bin/env python3
"""bench/gpu/ncu_source_lines.py on a planted Nsight Compute source page (`--print-source cuda,sass` CSV): per
(file, line) shares of stall samples and executed instructions, summed over the line's rows across functions,
largest first; SASS rows (no line number) are not counted twice; a page without metrics is refused."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu", "ncu_source_lines.py")
HEADER = '"Line No","Source","Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","# Samples","Instructions Executed"'


def page(blocks):
    out = []
    for path, func, rows in blocks:
        out.append(f'"File Path","{path}"')
        out.append(f'"Function Name","{func}"')
        out.append(HEADER)
        for line, src, samples, executed in rows:
            out.append(f'"{line}","{src}","-","-","{samples}","0","{samples}","{executed}"')
            # the line's SASS rows: same metrics again, without a line number (must not be added)
            out.append(f'"","","0x10","      FFMA R1, R2, R3, R1","{samples}","0","{samples}","{executed}"')
    return "\n".join(out) + "\n"


class SourceLines(unittest.TestCase):
    def run_tool(self, text, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(text)
        try:
            return subprocess.run([sys.executable, SCRIPT, f.name, *args], capture_output=True, text=True)
        finally:
            os.unlink(f.name)

    def test_shares_sorted_and_summed_over_functions(self):
        text = page([("/x/a.cu", "k1", [(10, "loop", 60, 100), (11, "fma", 20, 300)]),
                     ("/x/b.hpp", "k1", [(5, "inline", 10, 100)]),
                     ("/x/a.cu", "k2", [(10, "loop", 10, 100)])])
        r = self.run_tool(text)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l for l in r.stdout.splitlines() if l.startswith("| ") and "file:line" not in l]
        self.assertEqual(rows[0], "| 70.0 | 33.3 | a.cu:10 | `loop` |")  # 60 + 10 of 100 samples, 200 of 600 executed
        self.assertEqual(rows[1], "| 20.0 | 50.0 | a.cu:11 | `fma` |")
        self.assertEqual(rows[2], "| 10.0 | 16.7 | b.hpp:5 | `inline` |")
        self.assertIn("3 lines, 100 stall samples, 600 warp instructions executed", r.stdout)

    def test_top_limits_rows(self):
        text = page([("/x/a.cu", "k", [(i, f"s{i}", i, 1) for i in range(1, 11)])])
        r = self.run_tool(text, "--top", "3")
        rows = [l for l in r.stdout.splitlines() if l.startswith("| ") and "file:line" not in l]
        self.assertEqual([l.split("|")[3].strip() for l in rows], ["a.cu:10", "a.cu:9", "a.cu:8"])

    def test_page_without_metrics_is_refused(self):
        r = self.run_tool('"File Name","/x/a.cu"\n"Line No","Source"\n"1","int x;"\n')
        self.assertEqual(r.returncode, 2)
        self.assertIn("no source lines with metrics", r.stderr)
        self.assertEqual(r.stdout, "")


if __name__ == "__main__":
    unittest.main()
