#!/usr/bin/env bash
# Session 16, call E: call D's test with a NaN-proof worst ratio and value equality printed (+0 = -0) beside the
# bit count: the quick scan tests of S3 (12 shards; the segment inverses' check on shard 2).
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s16e.tar.xz && cd ..
B=build-call/s16e/bin
L=$O/logs; mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1; } | tee $L/env.txt
for i in $(seq 0 11); do ( timeout 120 $B/test_gpu_chunked_cuda_S3 --quick --kinds scan --shard $i/12 > $L/q_$i.out 2>&1; echo "exit $?" >> $L/q_$i.out ) & done; wait
cat $L/q_*.out > $L/quick_S3.log; rm -f $L/q_*.out
echo "S3 quick: $(grep -c '^ok ' $L/quick_S3.log) ok, $(grep -c '^FAIL' $L/quick_S3.log) FAIL; exits: $(grep '^exit' $L/quick_S3.log | sort | uniq -c | tr '\n' ' ')"
grep 'segment inverses\|^FAIL' $L/quick_S3.log | cut -c1-300
