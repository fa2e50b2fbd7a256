#!/usr/bin/env bash
# NOT RUN: no machine started for it (six attempts); call B asked its first question with the wide readout beside it.
# Session 19, call A: E = the tree of HEAD with bench_chunked's --chunk (the focus at C = 64) and its table of the v6
# pass by block shape. Question 1: is chunked-scan-bf16 at C = 64 (256 chunk steps in the pass at T = 16,384, not 512)
# faster than at C = 32 on the current kernels? (Last measured in docs/CHUNKED.md 8.14 with the v4 pass.)
# Question 2: where the gate prep, state prep and steps kernels spend their instructions (Nsight Compute by source line).
# Binaries: bench_chunked built with -lineinfo (`cmake -S gpu/standalone -B build-prof -DCMAKE_BUILD_TYPE=Release
# -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-lineinfo -DVLA_EIGEN_DIR=/usr/include/eigen3 && cmake --build
# build-prof --target bench_chunked`), test_gpu_chunked_cuda from build-focus-L512 (the same tree, no -lineinfo).
# Quick scan tests (both chunk sizes are among their cases); focus at C = 32 and 64 alternating, three rounds;
# causal bf16 SDPA twice; issue 8's table of each chunk size; ncu of three kernels; every scan case with the
# sanitizers where time allows.
set -u
. bench/gpu/call_steps.sh
call_setup s19a
quick E
rounds E E:64
table E E64
for k in prep_kernel state_prep steps_warp; do
  [ $((SECONDS - t0)) -gt 330 ] && { stamp "no more profiles (time)"; break; }
  profile E $k 100
done
if [ $((SECONDS - t0)) -gt 380 ]; then stamp "no every-case run (time)"; stamp done; exit 0; fi
every E san
stamp done
