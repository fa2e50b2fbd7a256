#!/usr/bin/env bash
# Session 23, call C: the readout's occupancy and dispatch order (build-call/s23a.tar.xz: HD = HEAD as shipped, from
# session 22's call A; the others HEAD with reports/gpu/patches/2026-12-07-readout-occupancy-order.patch and a macro):
#   R6, R8  -DVLA_SCAN_READOUT_MIN_BLOCKS=6 / 8 (the readout's launch bound: 80 / 64 registers, 104 / 320 bytes
#           spilled; shipped: 5 blocks an SM, 96 registers, no spill)
#   LF      -DVLA_SCAN_READOUT_LATE_FIRST (the readout's blocks take the chunks the pass wrote last first)
#   RL      both R6 and LF
# The quick tests of each and whether their lines equal HD's, three focus rounds beside SDPA, issue 8's tables. The
# every-case runs planned beside them were left out: the session's device time was short.
set -u
. bench/gpu/call_steps.sh
call_setup s23a
for V in HD R6 R8 LF RL; do quick $V; done
for V in R6 R8 LF RL; do same HD $V; done
N=1; focus HD R6 R8 LF RL; sdpa
N=2; focus RL LF R8 R6 HD; sdpa
N=3; focus R6 HD RL R8 LF; sdpa
table HD R6 R8 LF RL
stamp done
