#!/usr/bin/env bash
# The GPU report of the fused kernels, rerunnable by anyone on a machine with an
# NVIDIA GPU, nvcc, CMake and PyTorch (the project's Debian dependencies are not
# needed: gpu/standalone builds core/, gpu/, the CUDA test and the benchmark).
# Builds, runs the CUDA tests (kernel vs CPU twin vs double reference), the three
# compute-sanitizer tools, the benchmark and the PyTorch baselines, and writes
# reports/gpu/<date>-<gpu>.md (and, when $OUT is set, a copy plus the raw logs
# as logs.tgz under $OUT).
#   scripts/gpu_report.sh [--quick]      --quick: small shapes (a smoke run)
set -uo pipefail
cd "$(dirname "$0")/.."
quick=""
[ "${1:-}" = "--quick" ] && quick=--quick
logs=$(mktemp -d /tmp/vla-gpu-logs.XXXXXX)
build=${BUILD_DIR:-build-gpu-standalone}
jobs=$(nproc)
cp "$0" "$logs/script.sh"
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }

{
  echo "date (UTC): $(date -u '+%F %T')"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,persistence_mode --format=csv
  nvcc --version | tail -2
  echo "cmake: $(cmake --version | head -1)"
  echo "host compiler: $(c++ --version | head -1)"
  python3 -c "import torch; print('torch', torch.__version__, 'built for CUDA', torch.version.cuda)"
  echo "kernel: $(uname -r); cores: $jobs"
} > "$logs/env.txt" 2>&1
cat "$logs/env.txt"

stamp "build"
if ! { cmake -S gpu/standalone -B "$build" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$jobs"; } > "$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log"
  echo "gpu_report: build failed"
  exit 1
fi
grep -E "registers|spill" "$logs/build.log" | head -20
bin=$build/bin

stamp "CUDA tests (sharded over cores) and compute-sanitizer (memcheck, racecheck, initcheck) in parallel"
shards=$(( jobs > 4 ? jobs - 4 : 1 ))
for i in $(seq 0 $((shards - 1))); do
  timeout 420 "$bin/test_gpu_cuda" $quick --shard "$i/$shards" > "$logs/test_shard_$i.log" 2>&1 &
done
for tool in memcheck racecheck initcheck; do
  ( timeout 420 compute-sanitizer --tool $tool --error-exitcode 3 "$bin/test_gpu_cuda" --quick > "$logs/$tool.log" 2>&1
    echo "exit status: $?" >> "$logs/$tool.log" ) &
done
wait
fails=0
for i in $(seq 0 $((shards - 1))); do
  grep -v -E "^(PASSED|FAILED): " "$logs/test_shard_$i.log" >> "$logs/test_full.log"
  grep -q "^PASSED: " "$logs/test_shard_$i.log" || fails=$((fails + 1))
done
runs=$(grep -c -E "^(ok|FAIL) " "$logs/test_full.log")
bad=$(grep -c -E "^FAIL " "$logs/test_full.log")
if [ "$fails" = 0 ]; then echo "PASSED: $bad of $runs kernel runs failed ($shards shards)" >> "$logs/test_full.log";
else echo "FAILED: $bad of $runs kernel runs failed; $fails of $shards shards did not pass" >> "$logs/test_full.log"; fi
tail -1 "$logs/test_full.log"
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" "$logs"/{memcheck,racecheck,initcheck}.log

stamp "benchmark"
timeout 300 "$bin/bench_gpu" $quick --csv "$logs/bench.csv" > "$logs/bench.log" 2>&1 || echo "bench_gpu: exit $?" >> "$logs/bench.log"
tail -40 "$logs/bench.log"
[ -z "$quick" ] && { timeout 150 "$bin/bench_gpu_variants" > "$logs/variants.log" 2>&1; cat "$logs/variants.log"; }
stamp "PyTorch baselines"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/gpu/torch_baselines.py $quick --csv "$logs/torch.csv" > "$logs/torch.log" 2>&1 ||
  echo "torch_baselines: exit $?" >> "$logs/torch.log"
tail -30 "$logs/torch.log"

stamp "report"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed 's/nvidia //; s/[^a-z0-9]\+/-/g; s/-$//')
report=reports/gpu/$(date -u +%F)-${gpu:-gpu}${quick:+-quick}.md
mkdir -p reports/gpu
python3 bench/gpu/make_report.py "$logs" "$report" && echo "wrote $report"
if [ -n "${OUT:-}" ]; then
  cp "$report" "$OUT/"
  tar -czf "$OUT/logs.tgz" -C "$logs" .
fi
stamp "done"
