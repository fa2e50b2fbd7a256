#!/usr/bin/env bash
# Session 21, call C (call A got no machine). Builds (build-call/s21b.tar.xz):
#   E    = HEAD's kernels (bd21bd6), session 20's build (s20b);
#   FP4  = E with F (the state prep's forward substitution in registers: same bits, kept after call B) and the v6
#          pass at 4 warps below 64 heads (P4);
#   FP4A = FP4 with the v6 pass's ring of 4 and chunk c + 1's kt fragments converted during chunk c's update
#          (state_pass_dmma_kernel kt_ahead): the same values, so the same bits as FP4;
#   GD   = FP4A with the gate prep's u stored as doubles for the Gram's DMMAs (no per-fragment conversions):
#          the same bits.
# Questions: (1) do FP4A's and GD's quick lines equal FP4's (same bits), and FP4's E's; (2) every scan case of
# the candidates with the sanitizers; (3) each against E, alternating, beside SDPA, with issue 8's table.
set -u
. bench/gpu/call_steps.sh
call_setup s21b
quick E; quick FP4; quick FP4A; quick GD; same E FP4; same FP4 FP4A; same FP4 GD
every GD san
N=1; focus E FP4 FP4A GD; sdpa
N=2; focus GD FP4A FP4 E; sdpa
N=3; focus FP4A E GD FP4
table E FP4 FP4A GD
grep -h -A6 'pass alone' "$L"/focus_FP4A_1.log
if [ $((SECONDS - t0)) -lt 300 ]; then every FP4A san; fi
if [ $((SECONDS - t0)) -lt 380 ]; then profile GD state_pass_dmma 80; fi
stamp done
