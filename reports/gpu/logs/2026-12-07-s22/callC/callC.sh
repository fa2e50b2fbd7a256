#!/usr/bin/env bash
# Session 22, call C: a probe (wrong results by design; not a candidate): how much of the v6 pass's time at
# T = 16,384 is its float-to-double fragment conversions (build-call/s22c.tar.xz, ignored by git):
#   HD = HEAD 7f58317;
#   X1 = HD with the kt fragments (r's B operand) reinterpreted, not converted (-DVLA_PROBE_NO_KT_CVT);
#   X2 = X1 with the a^ fragments (the update's B operand) likewise (-DVLA_PROBE_NO_A_CVT).
# Only the pass's column and the pass-alone table are read: what removing those conversions could gain at most.
set -u
. bench/gpu/call_steps.sh
call_setup s22c
N=1; focus HD X1 X2
N=2; focus X2 X1 HD
N=3; focus X1 HD X2
for V in HD X1 X2; do for n in 1 2 3; do echo "$V $n: $(grep '^| 1 | 16 | 16384 ' $L/focus_${V}_$n.log | cut -d'|' -f12) pass-alone $(grep '^| B=1 H=16 T=16384 ' $L/focus_${V}_$n.log | cut -d'|' -f3)"; done; done
stamp done
