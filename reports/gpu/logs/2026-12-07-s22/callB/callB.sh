#!/usr/bin/env bash
# Session 22, call B: the float steps at two warps a segment (steps_pair_kernel, docs/CHUNKED.md 8.45)
# (build-call/s22b.tar.xz, ignored by git):
#   HD = HEAD 7f58317 (one warp a segment);
#   P1 = HD + steps_pair_kernel, automatic at D = 64, its step loop not unrolled (128 registers, no spills);
#   P2 = P1 with the step loop unrolled by 2 (-DVLA_PAIR_UNROLL=2: 88 bytes spilled).
# Questions: (1) P1's and P2's quick lines equal HD's (the same bits by construction); (2) every scan case of
# P1 with the sanitizers (the forced layouts, pair included, must give the automatic run's bits); (3) the
# three side by side, SDPA between, four rounds; issue 8's table.
set -u
. bench/gpu/call_steps.sh
call_setup s22b
quick HD; quick P1; quick P2; same HD P1; same HD P2
every P1 san
N=1; focus HD P1 P2; sdpa
N=2; focus P2 P1 HD; sdpa
N=3; focus P1 HD P2; sdpa
N=4; focus HD P2 P1
table HD P1 P2
stamp done
