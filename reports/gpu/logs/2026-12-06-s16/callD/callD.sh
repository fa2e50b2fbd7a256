#!/usr/bin/env bash
# Session 16, call D: S3 = call C's S2 tree (58e0707) + the CUDA test of the segment inverses against
# ref::sweep_inverse (test_gpu_chunked_cuda's check_segment_inverses, on shard 2 of 12; docs/CHUNKED.md 8.37).
# Binary: cmake --build <gpu/standalone build> --target test_gpu_chunked_cuda. The quick scan tests (12 shards)
# with memcheck and racecheck on shard 2 beside, then shard 2 of every case.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s16d.tar.xz && cd ..
B=build-call/s16d/bin
L=$O/logs; mkdir -p $L
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1; } | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
stamp "quick scan tests of S3, sanitizers on shard 2 beside"
for i in $(seq 0 11); do ( timeout 120 $B/test_gpu_chunked_cuda_S3 --quick --kinds scan --shard $i/12 > $L/q_$i.out 2>&1; echo "exit $?" >> $L/q_$i.out ) & done
for tool in memcheck racecheck; do timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gpu_chunked_cuda_S3 --quick --kinds scan --shard 2/12 > $L/san_${tool}_2.log 2>&1 & done
wait
cat $L/q_*.out > $L/quick_S3.log; rm -f $L/q_*.out
echo "S3 quick: $(grep -c '^ok ' $L/quick_S3.log) ok, $(grep -c '^FAIL' $L/quick_S3.log) FAIL; exits: $(grep '^exit' $L/quick_S3.log | sort | uniq -c | tr '\n' ' ')"
grep 'segment inverses\|^FAIL' $L/quick_S3.log | cut -c1-300
for f in $L/san_*.log; do echo "$(basename $f .log): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
save
stamp "shard 2 of every case"
timeout 200 $B/test_gpu_chunked_cuda_S3 --kinds scan --shard 2/12 > $L/full_2.log 2>&1; echo "exit $?" >> $L/full_2.log
echo "shard 2: $(grep -c '^ok ' $L/full_2.log) ok, $(grep -c '^FAIL' $L/full_2.log) FAIL; $(tail -1 $L/full_2.log)"
save
stamp done
