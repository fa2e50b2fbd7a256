#!/usr/bin/env bash
# Session 22, call A: the committed tree (7f58317) on the device, against session 21's start (build-call/s22a.tar.xz,
# ignored by git; rebuild with `cmake --build build-focus-L512 --target bench_chunked test_gpu_chunked_cuda`):
#   E  = the kernels of bd21bd6 (session 21's start; 8.39 measured it on an H200);
#   HD = HEAD 7f58317 (docs/CHUNKED.md 8.42 to 8.44, and the den_of review, which no device has run).
# Questions: (1) HD's quick lines equal E's; (2) every scan case of HD with the sanitizers; (3) issue 8's table:
# HD and E alternating, SDPA between, five rounds.
set -u
. bench/gpu/call_steps.sh
call_setup s22a
quick E; quick HD; same E HD
every HD san
rounds E HD  # focus E HD, SDPA, focus HD E, SDPA, focus E HD
sdpa; N=4; focus HD E
sdpa; N=5; focus E HD
table E HD
stamp done
