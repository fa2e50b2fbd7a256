#!/usr/bin/env bash
# The check of the fused kernels' per-launch block layout (report
# reports/gpu/2026-12-01-h200-v4b.md): bench_gpu in the automatic, few-heads and
# many-heads layouts, then test_gpu_cuda sharded over 16 cores beside the three
# compute-sanitizer tools on --quick. Run it in a folder holding test_gpu_cuda and
# bench_gpu built for sm_90 (here: cmake -S . -B build-gpu
# -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build-gpu --target test_gpu_cuda
# bench_gpu, then copy build-gpu/bin/{test_gpu_cuda,bench_gpu}). The complete
# report of the kernels is scripts/gpu_report.sh; this one was sized for one short
# device call, and its shard time limit (385 s from the start) cut shard 0.
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$SECONDS; st() { echo "[$((SECONDS - t0)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv,noheader
st bench auto
timeout 70 ./bench_gpu --bh 1x16,8x128 --d 32,64,128 --t 4096,16384 > $O/bench_auto.log 2>&1; echo "exit $?" >> $O/bench_auto.log
st bench few
timeout 40 ./bench_gpu --bh 8x128 --d 32,64 --t 4096,16384 --layout few > $O/bench_few.log 2>&1; echo "exit $?" >> $O/bench_few.log
st bench many B=1
timeout 20 ./bench_gpu --bh 1x16 --d 32,64 --t 4096,16384 --layout many > $O/bench_many.log 2>&1; echo "exit $?" >> $O/bench_many.log
st sanitizers + tests
( for tool in memcheck racecheck initcheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_cuda --quick > $O/san_$tool.log 2>&1; echo "exit status $?" >> $O/san_$tool.log
  done ) &
san=$!
pids=""
for i in $(seq 0 15); do timeout $((385 - SECONDS + t0)) ./test_gpu_cuda --shard $i/16 > /tmp/shard_$i.log 2>&1 & pids="$pids $!"; done
fails=0
for p in $pids; do wait $p || fails=$((fails+1)); done
st tests done, $fails shards failed
cat /tmp/shard_*.log > $O/tests.log
grep -h -E "^(PASSED|FAILED)" /tmp/shard_*.log | awk '{f+=$2; n+=$4} END {print "kernel runs failed:", f, "of", n}'
grep -h "^FAIL" /tmp/shard_*.log | head -20
wait $san
st sanitizers done
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" $O/san_*.log
grep -h "^|" $O/bench_auto.log $O/bench_few.log $O/bench_many.log | grep -v "^|---\|^| B" 
