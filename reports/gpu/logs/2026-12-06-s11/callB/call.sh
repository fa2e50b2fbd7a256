#!/usr/bin/env bash
# Session 11, call B (binaries of HEAD d8c0d9b + variant macros): bench_chunked --focus per variant
# (L512 = the shipped build; DR den in the readout; L256, L128 segments; V7 ring 4; C1 = L256 + DR),
# SDPA at the same shapes, the scan kinds' quick CUDA tests of L512 and DR (12 shards each),
# compute-sanitizer memcheck and racecheck on shards of L512.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s11b.tar.xz && cd ..
B=build-call/s11b
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv,noheader; nvcc --version | tail -1; } | tee "$O/env.txt"
for V in L512 DR C1 L256 V7 L128; do
  stamp "focus $V"
  timeout 60 $B/bench_chunked_$V --focus > "$O/focus_$V.log" 2>&1; echo "exit $?" >> "$O/focus_$V.log"
  grep "^| 1 \|^| 8 \|^exit" "$O/focus_$V.log"
done
stamp "SDPA"
( cd bench/gpu && timeout 60 python3 sdpa_chunked_shapes.py ) > "$O/sdpa.log" 2>&1; grep "^|\|torch" "$O/sdpa.log"
for V in L512 DR; do
  stamp "scan tests $V (quick, 12 shards at once)"
  for i in $(seq 0 11); do timeout 90 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > "$O/tests_${V}_$i.log" 2>&1; echo "exit $?" >> "$O/tests_${V}_$i.log" & done
  wait
  echo "$V: $(cat "$O"/tests_${V}_*.log | grep -c '^ok ') ok, $(cat "$O"/tests_${V}_*.log | grep -c '^FAIL') FAIL, exits: $(grep -h '^exit' "$O"/tests_${V}_*.log | sort | uniq -c | tr '\n' ' ')"
  grep -h "^FAIL" "$O"/tests_${V}_*.log | head -3 | cut -c1-300
done
stamp "compute-sanitizer on L512: memcheck shards 0, 5; racecheck shard 3; initcheck shard 7 (of 12)"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_gpu_chunked_cuda_L512 --quick --kinds scan --shard 0/12 > "$O/memcheck_0.log" 2>&1 & 
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_gpu_chunked_cuda_L512 --quick --kinds scan --shard 5/12 > "$O/memcheck_5.log" 2>&1 &
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $B/test_gpu_chunked_cuda_L512 --quick --kinds scan --shard 3/12 > "$O/racecheck_3.log" 2>&1 &
timeout 100 compute-sanitizer --tool initcheck --error-exitcode 9 $B/test_gpu_chunked_cuda_L512 --quick --kinds scan --shard 7/12 > "$O/initcheck_7.log" 2>&1 &
wait
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log "$O"/initcheck_*.log; do echo "$(basename $f): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
stamp done
