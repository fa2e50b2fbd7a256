#!/usr/bin/env bash
# Session 19, call B (call A never got a machine): W = HEAD's tree with the readout with wide rows
# (gpu/cuda/scan_readout_wide.cuh, StateConfig::readout = 1, state_config's choice at D = 32 and 64) and
# bench_chunked --focus [--chunk 64], whose second table times the v6 pass by block shape and both readout kernels
# on the same data. Questions: (1) is the wide readout faster than state_readout_kernel (4 rows x D/8 a thread)?
# (2) is the scan faster at C = 64 than at C = 32? (3) issue 8's table. Binaries: `cmake --build build-focus-L512
# --target bench_chunked test_gpu_chunked_cuda` (gpu/standalone, sm_90). Quick scan tests (the wide readout is the
# launcher's: every scan case at D = 32 and 64 runs it); focus at C = 32 and 64 alternating, three rounds; causal
# bf16 SDPA twice; issue 8's table at each chunk size; every scan case with the sanitizers; the carried kinds.
set -u
. bench/gpu/call_steps.sh
call_setup s19b
quick W
rounds W W:64
table W W64
grep -h -A5 'readout kernels' "$L"/focus_W_*.log "$L"/focus_W64_*.log | grep '^| B='
if [ $((SECONDS - t0)) -gt 380 ]; then stamp "no every-case run (time)"; stamp done; exit 0; fi
every W san
stamp done
