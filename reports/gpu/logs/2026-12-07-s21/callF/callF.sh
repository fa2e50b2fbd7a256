#!/usr/bin/env bash
# Session 21, call F: where the committed tree's (2629008) kernels spend their time at B = 1, H = 16, T = 16,384,
# by source line. Build (build-call/s21f.tar.xz): P = the tree with -lineinfo (`cmake -S gpu/standalone -B build-prof
# -DCMAKE_CUDA_FLAGS=-lineinfo ...`, then `cmake --build build-prof --target bench_chunked`; the same code as
# the shipped build). Nsight Compute (--set full, source lines by stall samples) on one launch of each of the pass,
# the float steps, the readout, the gate prep and the state prep, the chains first.
set -u
. bench/gpu/call_steps.sh
call_setup s21f
for k in state_pass_dmma steps_warp state_readout prep_kernel state_prep; do
  [ $((SECONDS - t0)) -gt 200 ] && { stamp "no more profiles (time)"; break; }
  profile P "$k" 60
done
stamp done
