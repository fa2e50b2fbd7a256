#!/usr/bin/env bash
# The check of the fused kernels' block layouts in one short device call (kernel
# v5: the thread-block cluster layout beside v4b's few- and many-heads layouts):
# builds test_gpu_cuda and bench_gpu (gpu/standalone, every core), runs
# test_gpu_cuda --quick, bench_gpu at B=1 H=16 in each layout, then the three
# compute-sanitizer tools on --quick and, with FULL=1, the full CUDA tests sharded
# over every core beside them; the fp32 kernels' SASS and resource usage go to
# $OUT (sass_fp32.txt.gz) for the per-role instruction counts of FLOOR.md. The
# complete report of the kernels is scripts/gpu_report.sh.
#   bench/gpu/run_layout_check.sh            (environment: FULL=1, SAN_TIMEOUT=s, TEST_TIMEOUT=s)
set -u
cd "$(dirname "$0")/../.."
O=${OUT:-/tmp/out}
mkdir -p "$O"
build=${BUILD_DIR:-build-gpu-standalone}
t0=$SECONDS
st() { echo "[$((SECONDS - t0)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv,noheader
st build
if ! { cmake -S gpu/standalone -B "$build" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$(nproc)" --target test_gpu_cuda bench_gpu; } > "$O/build.log" 2>&1; then
  tail -40 "$O/build.log"
  exit 1
fi
bin=$build/bin
obj=$(find "$build" -name fused_fp32.cu.o | head -1)
{ cuobjdump -res-usage "$obj"; cuobjdump -sass "$obj"; } 2>&1 | gzip > "$O/sass_fp32.txt.gz"
st quick tests
timeout 120 "$bin/test_gpu_cuda" --quick > "$O/quick.log" 2>&1
echo "exit status $?" >> "$O/quick.log"
grep -E "^FAIL|PASSED|FAILED|exit status" "$O/quick.log" | head -30
st bench
timeout 60 "$bin/bench_gpu" --bh 1x16 --d 32,64,128 --t 4096,16384 --layout cluster > "$O/bench_cluster.log" 2>&1
echo "exit $?" >> "$O/bench_cluster.log"
timeout 40 "$bin/bench_gpu" --bh 1x16 --d 32,64,128 --t 16384 --layout few > "$O/bench_few.log" 2>&1
echo "exit $?" >> "$O/bench_few.log"
timeout 30 "$bin/bench_gpu" --bh 1x16 --d 32,64 --t 16384 --layout many > "$O/bench_many.log" 2>&1
echo "exit $?" >> "$O/bench_many.log"
st sanitizers${FULL:+ and full tests}
for tool in memcheck racecheck initcheck; do
  ( timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool $tool --error-exitcode 3 "$bin/test_gpu_cuda" --quick > "$O/san_$tool.log" 2>&1
    echo "exit status $?" >> "$O/san_$tool.log" ) &
done
if [ -n "${FULL:-}" ]; then
  n=$(nproc)
  for i in $(seq 0 $((n - 1))); do
    timeout "${TEST_TIMEOUT:-300}" "$bin/test_gpu_cuda" --shard "$i/$n" > "/tmp/shard_$i.log" 2>&1 &
  done
fi
wait
st done
if [ -n "${FULL:-}" ]; then
  cat /tmp/shard_*.log > "$O/tests.log"
  grep -h -E "^(PASSED|FAILED)" /tmp/shard_*.log | awk '{f+=$2; n+=$4} END {print "kernel runs failed:", f, "of", n}'
  grep -h "^FAIL" /tmp/shard_*.log | head -20
fi
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" "$O"/san_*.log
grep -h -A3 "vla fused cluster kernel" "$O"/san_*.log | head -10
grep -h "blocks/cluster" "$O/bench_cluster.log"
grep -h "^|" "$O"/bench_cluster.log "$O"/bench_few.log "$O"/bench_many.log | grep -v "^|---\|^| B"
grep -h "exit" "$O"/bench_*.log
