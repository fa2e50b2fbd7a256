#!/usr/bin/env bash
# The GPU report of the fused kernels, rerunnable by anyone on a machine with an
# NVIDIA GPU, nvcc, CMake and PyTorch (the project's Debian dependencies are not
# needed: gpu/standalone builds core/, gpu/, the CUDA test and the benchmark).
# Builds, runs the CUDA tests (kernel vs CPU twin vs double reference), the three
# compute-sanitizer tools, the latency microbenchmarks, the benchmark, the
# PyTorch baselines and the layout sweep, and writes reports/gpu/<date>-<gpu>.md
# after every stage (and, when $OUT is set, a copy plus the raw logs as logs.tgz
# under $OUT), so a run stopped at a time limit keeps what it measured. About 9
# minutes on the H200 (tests and sanitizers ~5).
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
targets="test_gpu_cuda bench_gpu bench_gpu_variants bench_gpu_latency"  # the fused kernels' (the chunked one has its own script)
if ! { cmake -S gpu/standalone -B "$build" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$jobs" --target $targets; } > "$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log"
  echo "gpu_report: build failed"
  exit 1
fi
grep -E "registers|spill" "$logs/build.log" | head -20
bin=$build/bin

stamp "CUDA tests (sharded over cores) and compute-sanitizer (memcheck, racecheck, initcheck) in parallel"
shards=$(( jobs > 4 ? jobs - 3 : 1 ))  # test_gpu_cuda balances its shards by cost
for i in $(seq 0 $((shards - 1))); do
  timeout 330 "$bin/test_gpu_cuda" $quick --shard "$i/$shards" > "$logs/test_shard_$i.log" 2>&1 &
done
for tool in memcheck racecheck initcheck; do
  ( timeout 330 compute-sanitizer --tool $tool --error-exitcode 3 "$bin/test_gpu_cuda" --quick > "$logs/$tool.log" 2>&1
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

# The report so far (rewritten after each stage, and copied with the raw logs
# to $OUT when set): a run cut off at a time limit still leaves what it measured.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed 's/nvidia //; s/[^a-z0-9]\+/-/g; s/-$//')
report=reports/gpu/$(date -u +%F)-${gpu:-gpu}${quick:+-quick}.md
mkdir -p reports/gpu
write_report() {
  python3 bench/gpu/make_report.py "$logs" "$report" && echo "wrote $report ($1)"
  if [ -n "${OUT:-}" ]; then
    cp "$report" "$OUT/"
    tar -czf "$OUT/logs.tgz" -C "$logs" .
  fi
}
write_report "tests"

stamp "benchmark"
timeout 60 "$bin/bench_gpu_latency" > "$logs/latency.md" 2>&1 || echo "bench_gpu_latency: exit $?" >> "$logs/latency.md"
cat "$logs/latency.md"
timeout 300 "$bin/bench_gpu" $quick --csv "$logs/bench.csv" > "$logs/bench.log" 2>&1 || echo "bench_gpu: exit $?" >> "$logs/bench.log"
grep -E "^\| 1 \| 16 \|" "$logs/bench.log"
write_report "benchmark"
stamp "PyTorch baselines"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/gpu/torch_baselines.py $quick --csv "$logs/torch.csv" > "$logs/torch.log" 2>&1 ||
  echo "torch_baselines: exit $?" >> "$logs/torch.log"
tail -30 "$logs/torch.log"
write_report "PyTorch baselines"
[ -z "$quick" ] && { timeout 150 "$bin/bench_gpu_variants" > "$logs/variants.log" 2>&1; cat "$logs/variants.log"; write_report "layouts"; }
stamp "done"
