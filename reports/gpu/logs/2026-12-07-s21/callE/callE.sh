#!/usr/bin/env bash
# Session 21, call E: the tree to ship, on the device (build-call/s21e.tar.xz):
#   E    = HEAD's kernels (bd21bd6), session 20's build (s20b);
#   FP4G = the working tree: F (the state prep's forward substitution in registers), P4 (the v6 pass at 4 warps
#          below 64 heads, ring of 3) and the gate prep's u as doubles for the Gram (call C's GD without kt_ahead).
# Questions: (1) FP4G's quick lines equal E's (F and the Gram change are the same bits; P4 moved none in calls B
# and C); (2) every scan case of FP4G with the sanitizers; (3) FP4G against E, alternating, beside SDPA, with
# issue 8's table.
set -u
. bench/gpu/call_steps.sh
call_setup s21e
quick E; quick FP4G; same E FP4G
every FP4G san
N=1; focus E FP4G; sdpa
N=2; focus FP4G E; sdpa
N=3; focus E FP4G
if [ $((SECONDS - t0)) -lt 200 ]; then sdpa; N=4; focus FP4G E; fi
table E FP4G
stamp done
