#!/usr/bin/env bash
# The chunked kernel's GPU run (issue 8), rerunnable on any machine with an
# NVIDIA GPU, nvcc, CMake and PyTorch: builds gpu/standalone (Eigen's headers
# from $VLA_EIGEN_DIR, default /usr/include/eigen3), runs the chunked CUDA tests
# (kernel vs CPU twin vs double reference, sharded over cores) with the three
# compute-sanitizer tools, then, alone on the GPU, the benchmark (chunked next to
# the fused kernel) and causal bf16 SDPA at the same shapes. Logs go to
# $OUT (or ./chunked-logs).
#   bench/gpu/run_chunked_report.sh [--quick]
# Environment: PREBUILT (a folder holding the two binaries), TEST_KINDS
# (all | carried | scan: the chunked forms the tests run; default all),
# SANITIZE (0: skip compute-sanitizer), BENCH_ARGS (more bench_chunked
# arguments, e.g. --scan-only), TEST_TIMEOUT (seconds per shard, default 150),
# SAN_TIMEOUT (seconds per sanitizer tool, default 240).
set -uo pipefail
cd "$(dirname "$0")/../.."
quick=""
[ "${1:-}" = "--quick" ] && quick=--quick
logs=${OUT:-chunked-logs}
mkdir -p "$logs"
build=${BUILD_DIR:-build-chunked-standalone}
jobs=$(nproc)
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{
  echo "date (UTC): $(date -u '+%F %T')"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv
  nvcc --version | tail -2
  python3 -c "import torch; print('torch', torch.__version__, 'built for CUDA', torch.version.cuda)"
} > "$logs/env.txt" 2>&1
cat "$logs/env.txt"
bin=${PREBUILT:-}
if [ -n "$bin" ] && "$bin/test_gpu_chunked_cuda" --shard 0/100000 > /dev/null 2>&1; then
  stamp "using prebuilt binaries in $bin"
else
  stamp "build"
  if ! { cmake -S gpu/standalone -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DVLA_EIGEN_DIR="${VLA_EIGEN_DIR:-/usr/include/eigen3}" &&
         cmake --build "$build" -j "$jobs" --target test_gpu_chunked_cuda bench_chunked; } > "$logs/build.log" 2>&1; then
    tail -40 "$logs/build.log"; echo "build failed"; exit 1
  fi
  bin=$build/bin
fi
stamp "chunked CUDA tests (sharded) and compute-sanitizer memcheck, racecheck, initcheck (--quick cases)"
shards=$(( jobs > 4 ? jobs - 4 : 1 ))
for i in $(seq 0 $((shards - 1))); do
  timeout "${TEST_TIMEOUT:-150}" "$bin/test_gpu_chunked_cuda" $quick --kinds "${TEST_KINDS:-all}" --shard "$i/$shards" > "$logs/shard_$i.log" 2>&1 &
done
if [ "${SANITIZE:-1}" != 0 ]; then
  for tool in memcheck racecheck initcheck; do
    ( timeout "${SAN_TIMEOUT:-240}" compute-sanitizer --tool $tool --error-exitcode 3 "$bin/test_gpu_chunked_cuda" --quick --kinds "${TEST_KINDS:-all}" > "$logs/$tool.log" 2>&1
      echo "exit status: $?" >> "$logs/$tool.log" ) &
  done
fi
wait
cat "$logs"/shard_*.log | grep -v -E "^(PASSED|FAILED): " > "$logs/tests.log"
echo "shards: $(grep -l '^PASSED' "$logs"/shard_*.log | wc -l) of $shards passed; runs: $(grep -c -E '^(ok|FAIL) ' "$logs/tests.log"), FAIL lines: $(grep -c '^FAIL' "$logs/tests.log")" | tee -a "$logs/tests.log"
rm -f "$logs"/shard_*.log
[ "${SANITIZE:-1}" != 0 ] && grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" "$logs"/{memcheck,racecheck,initcheck}.log
stamp "benchmark (alone on the GPU)"
timeout 150 "$bin/bench_chunked" $quick ${BENCH_ARGS:-} --csv "$logs/bench.csv" > "$logs/bench.log" 2>&1 || echo "bench_chunked: exit $?" >> "$logs/bench.log"
cat "$logs/bench.log"
stamp "SDPA"
PYTHONUNBUFFERED=1 timeout 90 python3 bench/gpu/sdpa_chunked_shapes.py $quick > "$logs/sdpa.log" 2>&1 || echo "sdpa: exit $?" >> "$logs/sdpa.log"
cat "$logs/sdpa.log"
stamp "done"
