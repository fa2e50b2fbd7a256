#!/usr/bin/env bash
# NOT RUN: no machine started for it; call B took its place with one more build (G) and did not run either.
# Session 20, call A (H200 wanted). Builds (build-call/s20a.tar.xz):
#   E  = HEAD's kernels (bd21bd6; bench_chunked built with -lineinfo, the same code), from session 19's s19c;
#   P4 = E with state_config's v6 pass at 4 warps a block below 64 heads (D = 64) instead of 8
#        (reports/gpu/patches/2026-12-07-pass-four-warps.patch), from s19c;
#   F  = E with the state prep's forward substitution in registers at C <= 32 (scan_prep_core.cuh, docs/CHUNKED.md
#        8.41): the same FMAs in the same order, ~40% fewer shared-memory loads in that phase;
#   FP4 = F and P4 together (their every case with the sanitizers covers both changes).
# Questions: (1) issue 8's table on the shipped kernels (the T = 16,384 target); (2) is F's state prep faster, with the
# same bits (its quick lines equal E's); (3) is P4's pass faster, its bits within the error model; (4) every scan case
# of FP4 with the sanitizers; (5) where the gate prep (E, -lineinfo) and F's state prep spend their instructions and wavefronts (ncu).
set -u
. bench/gpu/call_steps.sh
call_setup s20a
quick E; quick F; quick P4; quick FP4; same E F; same E P4; same P4 FP4
N=1; focus E F P4 FP4; sdpa
N=2; focus FP4 P4 F E; sdpa
if [ $((SECONDS - t0)) -lt 300 ]; then N=3; focus F E FP4 P4; fi
table E F P4 FP4
grep -h -A4 'pass alone' "$L"/focus_E_*.log "$L"/focus_P4_*.log | grep '^| B='
every FP4 san
for kv in prep_kernel:E state_prep:F; do
  [ $((SECONDS - t0)) -gt 420 ] && { stamp "no more profiles (time)"; break; }
  profile "${kv#*:}" "${kv%:*}" 90
done
stamp done
