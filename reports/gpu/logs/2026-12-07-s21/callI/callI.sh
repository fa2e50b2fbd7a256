#!/usr/bin/env bash
# NOT RUN (prepared at the end of session 21, whose device time was spent). For the next session's first call,
# on an H200 if one comes (issue 8's targets are stated for the H200). Builds (build-call/s21i.tar.xz, ignored by
# git; rebuild with `cmake --build build-focus-L512 --target bench_chunked test_gpu_chunked_cuda` on tree 5fd583f
# for RD, and bd21bd6 for E):
#   E  = the kernels of bd21bd6 (the session's start; 8.39 measured it on an H200);
#   RD = tree 5fd583f (docs/CHUNKED.md 8.42 to 8.44: five kept changes).
# Questions: (1) RD's quick lines equal E's on this card; (2) every scan case of RD with the sanitizers on this
# card; (3) issue 8's table: RD and E alternating, SDPA between, four rounds.
set -u
. bench/gpu/call_steps.sh
call_setup s21i
quick E; quick RD; same E RD
every RD san
rounds E RD  # focus E RD, SDPA, focus RD E, SDPA, focus E RD
sdpa; N=4; focus RD E
table E RD
stamp done
