#!/usr/bin/env bash
# Session 18, call B: the readout's chunks in turn, the next chunk's inputs in flight (docs/CHUNKED.md 8.39).
# E = e15188a (call A's E); P4 = E with state_readout_kernel taking chunks in turn, two buffers, four blocks an
# SM (the launch bound: 128 registers, 8-16 bytes spilled at D = 64); P3 = P4 at three blocks an SM (no spills).
# The same arithmetic per chunk: the quick scan tests' lines of P4 and P3 must equal E's.
# Binaries: `cmake --build build-focus-L512 --target bench_chunked test_gpu_chunked_cuda` (gpu/standalone, sm_90)
# on each tree (P4.patch, P3.patch against e15188a). Quick scan tests of all three; focus of all three twice,
# SDPA after each round; every scan case of the faster of P4 and P3 with the sanitizers; focus a third round;
# issue 8's table of each build; quick carried kinds of the faster build. The steps: bench/gpu/call_steps.sh.
set -u
. bench/gpu/call_steps.sh
call_setup s18b
quick E; quick P4; quick P3; same E P4; same E P3
N=1; focus E P4 P3; sdpa
N=2; focus P3 P4 E; sdpa
# the faster of P4 and P3 over both rounds (the whole scan at B = 1, H = 16, T = 16,384)
best=P4
if [ "$(python3 -c "print(1 if float('$(w16 P3 1)' or 9) + float('$(w16 P3 2)' or 9) < float('$(w16 P4 1)' or 9) + float('$(w16 P4 2)' or 9) else 0)")" = 1 ]; then best=P3; fi
echo "whole scan at 16k: E $(w16 E 1) $(w16 E 2), P4 $(w16 P4 1) $(w16 P4 2), P3 $(w16 P3 1) $(w16 P3 2): every case of $best"
every $best san
N=3; focus E P4 P3
table E P4 P3
if [ $((SECONDS - t0)) -gt 330 ]; then stamp "no carried kinds (time)"; stamp done; exit 0; fi
carried $best
stamp done
