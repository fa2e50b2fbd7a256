#!/usr/bin/env bash
# Where a step of the fused kernel spends its time (run on the GPU machine):
# Nsight Compute's warp-state and source counters for the D = 64 fp32 kernel at
# B=1, H=16, T=4096 (latency-bound: 16 blocks on 132 SMs), and the block-layout
# sweep of bench_gpu_variants. Writes under $OUT (or /tmp/vla-gpu-profile).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/vla-gpu-profile}
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu-standalone}
{ cmake -S gpu/standalone -B "$build" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$(nproc)"; } > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
timeout 240 ncu --clock-control none -k regex:vla_fused_kernel --launch-count 1 \
  --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
  --section InstructionStats --section SourceCounters "$build/bin/bench_gpu" --quick > "$out/ncu.txt" 2>&1
echo "ncu exit $?" >> "$out/ncu.txt"
grep -E "Stall|stall|Issued|Eligible|Active Warps|Warp Cycles|Executed Ipc|Instructions|Pipe|Shared|shfl|SHFL" "$out/ncu.txt" | head -80
timeout 200 "$build/bin/bench_gpu_variants" > "$out/variants.log" 2>&1
cat "$out/variants.log"
