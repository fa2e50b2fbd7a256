#!/usr/bin/env bash
# Session 19, call C (H200 wanted): E = HEAD's kernels (43495e3: bench_chunked --focus [--chunk 64] with its table of
# the v6 pass by block shape; bench_chunked built with -lineinfo, the same code), P4 = E with state_config's v6
# pass at 4 warps a block below 64 heads (D = 64) instead of 8 (reports/gpu/patches/2026-12-07-pass-four-warps.patch):
# call B (H100) timed the pass alone at 0.398-0.401 ms with 4 warps against 0.404-0.406 with 8 at B = 1, H = 16,
# T = 16,384 (1.562 against 1.580-1.586 at T = 65,536). At C = 32 the 4-warp block splits no k (KS = 1): r's sums
# in another order, so the bits may move (within the error model; the quick lines are compared).
# Quick scan tests of both; focus of both alternating, three rounds; causal bf16 SDPA twice; issue 8's table of
# each; every scan case of P4 with the sanitizers. (Cut to fit the session's last 240 s of device time: the third
# focus round only before 90 s, every case only before 100 s.)
set -u
. bench/gpu/call_steps.sh
call_setup s19c
quick E; quick P4; same E P4
rounds E P4 90
table E P4
grep -h -A4 'pass alone' "$L"/focus_E_*.log | grep '^| B='
if [ $((SECONDS - t0)) -gt 100 ]; then stamp "no every-case run (time)"; stamp done; exit 0; fi
every P4 san
stamp done
