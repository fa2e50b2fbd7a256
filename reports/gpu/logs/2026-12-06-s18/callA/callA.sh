#!/usr/bin/env bash
# Session 18, call A: E = the tree of e15188a (session 17's final: the readout's S_c rows and n_c loaded first,
# packed_lower.hpp's index used by the gate kernels and the sweep; never run on a device). SP = E with
# reports/gpu/patches/2026-12-06-state-prep-cp-async.patch (the state prep's a^ and k^ rows by cp.async, one round
# trip a block; the same values, so the same bits).
# Binaries: `cmake --build build-focus-L512 --target bench_chunked test_gpu_chunked_cuda` (gpu/standalone, sm_90),
# once on each tree. Quick scan tests of both (their lines must agree); focus of both; causal bf16 SDPA; every scan
# case of the faster build with memcheck, racecheck and initcheck beside; focus and SDPA again; every scan case of
# the other build where the call has run under 260 s; focus again; quick tests of the carried kinds of the faster
# build where it has run under 360 s; issue 8's table of each build (bench/gpu/issue8_table.py) from all its focus
# runs against both SDPA runs. The steps: bench/gpu/call_steps.sh.
set -u
. bench/gpu/call_steps.sh
call_setup s18a
quick E; quick SP; same E SP
N=1; focus E SP; sdpa
first=E; second=SP
if [ "$(python3 -c "print(1 if float('$(w16 SP 1)' or 9) < float('$(w16 E 1)' or 9) else 0)")" = 1 ]; then first=SP; second=E; fi
echo "whole scan at 16k: E $(w16 E 1), SP $(w16 SP 1): every case of $first first"
every $first san
N=2; focus SP E; sdpa
if [ $((SECONDS - t0)) -gt 260 ]; then stamp "no second every-case run (time)"; table E SP; stamp done; exit 0; fi
every $second san
N=3; focus E SP
table E SP
if [ $((SECONDS - t0)) -gt 360 ]; then stamp "no carried kinds (time)"; stamp done; exit 0; fi
carried $first
stamp done
