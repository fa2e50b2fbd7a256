#!/usr/bin/env bash
# Session 15, call B: A512 = call A's L512 (the block sweep inverse, 04290c5); L512 = A512 + the readout's den by four lanes (call A's RD) + the n scan staged by tiles in scan_seg_inverse's first blocks + the inverse's batched loads;
# L256 = L512 with segments of 256 steps. Focus of all; quick L512; every scan case of L512 with sanitizers beside;
# quick L256 and racecheck on its shard 1; focus again; SDPA. Binaries built with
#   BUILD_ONLY=1 VARIANTS="L512= L256=VLA_SCAN_SEGMENT_STEPS=256" TESTS="L512 L256" bench/gpu/run_scan_focus.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s15b.tar.xz && cd ..
B=build-call/s15b/bin
L=$O/logs; mkdir -p $L
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1; } | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
focus() { for V in "$@"; do stamp "focus $V"; timeout 100 $B/bench_chunked_$V --focus > $L/focus_${V}_$N.log 2>&1; grep "^| 1 \|^| 8 " $L/focus_${V}_$N.log; done; save; }
quick() { stamp "quick $1"; for i in $(seq 0 11); do timeout 90 $B/test_gpu_chunked_cuda_$1 --quick --kinds scan --shard $i/12 > "$L/qs_$i.out" 2>&1 & done; wait
  cat $L/qs_*.out > $L/quick_$1.log; rm -f $L/qs_*.out
  echo "$1 quick: $(grep -c '^ok ' $L/quick_$1.log) ok, $(grep -c '^FAIL' $L/quick_$1.log) FAIL"; grep '^FAIL' $L/quick_$1.log | head -3 | cut -c1-400; save; }
N=1; focus A512 L512 L256
quick L512
stamp "every scan case of L512, sanitizers beside"
for i in $(seq 0 11); do ( timeout 270 $B/test_gpu_chunked_cuda_L512 --kinds scan --shard $i/12 > $L/fs_$i.out 2>&1; echo "exit $?" >> $L/fs_$i.out ) & done
for job in racecheck:3 racecheck:1 memcheck:0 initcheck:7; do tool=${job%:*}; i=${job#*:}; timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gpu_chunked_cuda_L512 --quick --kinds scan --shard $i/12 > $L/san_${tool}_$i.log 2>&1 & done
wait
cat $L/fs_*.out > $L/tests_L512.log; rm -f $L/fs_*.out
echo "L512 every case: $(grep -c '^ok ' $L/tests_L512.log) ok, $(grep -c '^FAIL' $L/tests_L512.log) FAIL; exits: $(grep '^exit' $L/tests_L512.log | sort | uniq -c | tr '\n' ' ')"; grep '^FAIL' $L/tests_L512.log | head -3 | cut -c1-400
echo "layouts yes: $(grep -c "w layouts same bits: yes" $L/tests_L512.log); norms-off yes: $(grep -c "without norms same bits: yes" $L/tests_L512.log); NO: $(grep -c "same bits: NO" $L/tests_L512.log)"
for f in $L/san_*.log; do echo "$(basename $f .log): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
save
quick L256
stamp "racecheck L256 shard 1"; timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/test_gpu_chunked_cuda_L256 --quick --kinds scan --shard 1/12 > $L/san_L256_racecheck_1.log 2>&1; echo "L256 racecheck_1: $(grep -c "^ok " $L/san_L256_racecheck_1.log) ok; $(grep -h "RACECHECK SUMMARY" $L/san_L256_racecheck_1.log | tail -1)"; save
N=2; focus L512 L256 A512
stamp SDPA; ( cd bench/gpu && timeout 90 python3 sdpa_chunked_shapes.py ) > $L/sdpa.log 2>&1; grep "^|\|torch" $L/sdpa.log
save; stamp done
