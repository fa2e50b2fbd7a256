#!/usr/bin/env bash
# Session 22, call E: the v6 pass's a^ fragments widened to double on the integer pipe (exact for zeros and normal
# floats, the same bits as F2F; a warp with any other value takes the F2F) (build-call/s22e.tar.xz, ignored by git):
#   HD = HEAD 7f58317;
#   W1 = HD -DVLA_PASS_ALU_SHARE=1: every a^ fragment on the integer pipe;
#   W2 = HD -DVLA_PASS_ALU_SHARE=2: every other k-block's (the rest by F2F, beside them).
# Call C measured what the a^ conversions cost the pass at most (~23 us of 0.40 ms at T = 16,384).
# Questions: (1) W1's and W2's quick lines equal HD's; (2) the pass and the whole scan, rotating, SDPA between;
# (3) every scan case with the sanitizers for the faster W, if either is faster.
set -u
. bench/gpu/call_steps.sh
call_setup s22e
quick HD; quick W1; quick W2; same HD W1; same HD W2
N=1; focus HD W1 W2; sdpa
N=2; focus W2 W1 HD; sdpa
N=3; focus W1 W2 HD; sdpa
N=4; focus HD W2 W1
for V in HD W1 W2; do echo "$V pass-alone: $(grep -h '^| B=1 H=16 T=16384 ' $L/focus_${V}_*.log | cut -d'|' -f3 | tr -d ' (shipped)' | sort -n | tr '\n' ' ')"; done
table HD W1 W2
every W2 san
stamp done
