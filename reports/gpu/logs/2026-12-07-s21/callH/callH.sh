#!/usr/bin/env bash
# Session 21, call H (the session's last device time). Builds (build-call/s21h.tar.xz):
#   SW4 = the committed tree (b6fbc7e; call G's build);
#   RD  = SW4 with the readout's den input loaded at the kernel's start with S_c and n_c (state_readout_kernel),
#         not after the den phase's dot products (call F: 3.5% of the readout's stall samples on that line). The
#         same value, so the same bits.
# Questions: (1) RD's quick lines equal SW4's; (2) every scan case of RD with the sanitizers; (3) the readout's
# time against SW4's, alternating.
set -u
. bench/gpu/call_steps.sh
call_setup s21h
quick SW4; quick RD; same SW4 RD
every RD san
N=1; focus SW4 RD
N=2; focus RD SW4
N=3; focus SW4 RD
stamp done
