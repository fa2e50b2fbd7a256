#!/usr/bin/env bash
# Session 21, call G. Builds (build-call/s21g.tar.xz):
#   E     = the kernels of bd21bd6 (session 20's build);
#   FP4G  = the committed tree (2629008; call E's build);
#   SW4   = FP4G with the float steps' gate output loop (steps_warp_kernel: each chunk's a^ rows divided by their
#           norms and stored) unrolled by 4 instead of 1. Call F's profile put that loop at 23% of the steps
#           kernel's stall samples for 8% of its instructions: one warp a scheduler waits on each step's loads,
#           division and stores in turn. The same divisions, so the same bits;
#   SW8   = the same unrolled by 8.
# Questions: (1) SW4's and SW8's quick lines equal FP4G's; (2) every scan case of both with the sanitizers;
# (3) the steps kernel's time and the whole scan's against FP4G and E, beside SDPA, with issue 8's table.
set -u
. bench/gpu/call_steps.sh
call_setup s21g
quick FP4G; quick SW4; quick SW8; same FP4G SW4; same FP4G SW8
N=1; focus FP4G SW4 SW8 E; sdpa
N=2; focus SW8 SW4 FP4G E; sdpa
N=3; focus SW4 E FP4G SW8
table E FP4G SW4 SW8
every SW4 san
every SW8 san
stamp done
