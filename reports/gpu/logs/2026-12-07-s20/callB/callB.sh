#!/usr/bin/env bash
# Run in session 21 (2026-12-07, H100): logs in reports/gpu/logs/2026-12-07-s21/callB/, report
# reports/gpu/2026-12-07-h100-state-prep-pass.md. (Session 20 prepared it; no machine started then.)
# Session 20, call B (H200 wanted; replaces call A, which no machine started for). Builds (build-call/s20b.tar.xz):
#   E   = HEAD's kernels (bd21bd6; bench_chunked built with -lineinfo, the same code), from session 19's s19c;
#   F   = E with the state prep's forward substitution in registers at C <= 32, D >= 64 (scan_prep_core.cuh,
#         docs/CHUNKED.md 8.41): the same FMAs in the same order, 168 shared-memory loads a column instead of 288;
#   G   = F with the state prep's T product on an 8 x 16 thread grid (6 wavefronts a warp and four columns, not 8);
#   GP4 = G with state_config's v6 pass at 4 warps a block below 64 heads (reports/gpu/patches/2026-12-07-pass-four-warps.patch).
# Questions: (1) issue 8's table on the shipped kernels (the T = 16,384 target); (2) are F's and G's state preps
# faster, with the same bits (quick lines equal E's); (3) does GP4's pass move the bits, within the error model, and
# is the whole scan faster (E's focus also times the pass alone at 4 and 8 warps); (4) every scan case of GP4 with
# the sanitizers; (5) where the gate prep (E, -lineinfo) and G's state prep spend their instructions and wavefronts.
set -u
. bench/gpu/call_steps.sh
call_setup s20b
quick E; quick F; quick G; quick GP4; same E F; same E G; same E GP4
N=1; focus E F G GP4; sdpa
N=2; focus GP4 G F E; sdpa
table E F G GP4
grep -h -A4 'pass alone' "$L"/focus_E_*.log | grep '^| B='
every GP4 san
if [ $((SECONDS - t0)) -lt 330 ]; then N=3; focus F E GP4 G; table E F G GP4; fi
for kv in prep_kernel:E state_prep:G; do
  [ $((SECONDS - t0)) -gt 440 ] && { stamp "no more profiles (time)"; break; }
  profile "${kv#*:}" "${kv%:*}" 80
done
stamp done
