#!/usr/bin/env bash
# Session 14, call D: F = the tree to keep (den split with a block barrier in scan_prep instead of call C's named
# barrier; the n scan in scan_seg_inverse's grid; no norms where state_norm is null; the pass's conversions pinned;
# the solve-based segment inverses as shipped). Focus L512 (2476b14) and F; quick F; every scan case of F (12 shards)
# beside racecheck (shards 3 = C 64, 1 = C 32), memcheck (0) and initcheck (7); focus F again; SDPA.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s14d.tar.xz && cd ..
B=build-call/s14d/bin
L=$O/logs; mkdir -p $L
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; } | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
focus() { for V in "$@"; do stamp "focus $V"; timeout 100 $B/bench_chunked_$V --focus > $L/focus_$V.log 2>&1; grep "^| 1 \|^| 8 " $L/focus_$V.log; done; save; }
focus L512 F
stamp "quick F"
for i in $(seq 0 11); do timeout 60 $B/test_gpu_chunked_cuda_F --quick --kinds scan --shard $i/12 > "$L/qs_$i.out" 2>&1 & done; wait
cat $L/qs_*.out > $L/quick_F.log; rm -f $L/qs_*.out
echo "F quick: $(grep -c '^ok ' $L/quick_F.log) ok, $(grep -c '^FAIL' $L/quick_F.log) FAIL"; grep '^FAIL' $L/quick_F.log | head -3 | cut -c1-300
save
stamp "every scan case of F, sanitizers beside"
for i in $(seq 0 11); do ( timeout 270 $B/test_gpu_chunked_cuda_F --kinds scan --shard $i/12 > $L/fs_$i.out 2>&1; echo "exit $?" >> $L/fs_$i.out ) & done
for job in racecheck:3 racecheck:1 memcheck:0 initcheck:7; do tool=${job%:*}; i=${job#*:}; timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gpu_chunked_cuda_F --quick --kinds scan --shard $i/12 > $L/san_${tool}_$i.log 2>&1 & done
wait
cat $L/fs_*.out > $L/tests_F.log; rm -f $L/fs_*.out
echo "F every case: $(grep -c '^ok ' $L/tests_F.log) ok, $(grep -c '^FAIL' $L/tests_F.log) FAIL; exits: $(grep '^exit' $L/tests_F.log | sort | uniq -c | tr '\n' ' ')"; grep '^FAIL' $L/tests_F.log | head -3 | cut -c1-300
echo "layouts yes: $(grep -c "w layouts same bits: yes" $L/tests_F.log); norms-off yes: $(grep -c "without norms same bits: yes" $L/tests_F.log); NO: $(grep -c "same bits: NO" $L/tests_F.log)"
for f in $L/san_*.log; do echo "$(basename $f .log): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
save
focus F
stamp SDPA; ( cd bench/gpu && timeout 90 python3 sdpa_chunked_shapes.py ) > $L/sdpa.log 2>&1; grep "^|\|torch" $L/sdpa.log
save; stamp done
