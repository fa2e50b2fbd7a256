#!/usr/bin/env bash
# The measurements behind the per-step floor of the fused kernel (reports/gpu/FLOOR.md),
# rerunnable on a machine with an H200 and nvcc: latencies of the dependent
# chain's operations (clock64 microbenchmarks), the kernel's per-step time at
# B=1, H=16 (bench_gpu --quick) and the block-layout sweep. Writes under $OUT
# (or /tmp/vla-gpu-floor).
#   bench/gpu/run_floor.sh [--no-build]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/vla-gpu-floor}
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu-standalone}
if [ "${1:-}" != "--no-build" ]; then
  { cmake -S gpu/standalone -B "$build" -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$build" -j "$(nproc)" --target bench_gpu bench_gpu_latency bench_gpu_variants; } > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
fi
timeout 60 "$build/bin/bench_gpu_latency" > "$out/latency.md" 2>&1; cat "$out/latency.md"
timeout 90 "$build/bin/bench_gpu" --quick > "$out/bench_quick.log" 2>&1; tail -6 "$out/bench_quick.log"
timeout 150 "$build/bin/bench_gpu_variants" > "$out/variants.md" 2>&1; cat "$out/variants.md"
