#!/usr/bin/env bash
# Session 15, call D: R = the segment length by shape (256 steps where B H ceil(T / 256) <= 1,024, else 512;
# docs/CHUNKED.md 8.36); B512 = call B's L512 (512 steps everywhere). Focus of both; every scan case of R with
# sanitizers beside; focus of R again (the session's device time was nearly spent: no quick run, no SDPA). Binaries: BUILD_ONLY=1 VARIANTS="L512=" bench/gpu/run_scan_focus.sh, renamed R.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s15d.tar.xz && cd ..
B=build-call/s15d/bin
L=$O/logs; mkdir -p $L
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1; } | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
focus() { for V in "$@"; do stamp "focus $V"; timeout 100 $B/bench_chunked_$V --focus > $L/focus_${V}_$N.log 2>&1; grep "^| 1 \|^| 8 " $L/focus_${V}_$N.log; done; save; }
N=1; focus B512 R
stamp "every scan case of R, sanitizers beside"
for i in $(seq 0 11); do ( timeout 200 $B/test_gpu_chunked_cuda_R --kinds scan --shard $i/12 > $L/fs_$i.out 2>&1; echo "exit $?" >> $L/fs_$i.out ) & done
for job in racecheck:3 racecheck:1 memcheck:0 initcheck:7; do tool=${job%:*}; i=${job#*:}; timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gpu_chunked_cuda_R --quick --kinds scan --shard $i/12 > $L/san_${tool}_$i.log 2>&1 & done
wait
cat $L/fs_*.out > $L/tests_R.log; rm -f $L/fs_*.out
echo "R every case: $(grep -c '^ok ' $L/tests_R.log) ok, $(grep -c '^FAIL' $L/tests_R.log) FAIL; exits: $(grep '^exit' $L/tests_R.log | sort | uniq -c | tr '\n' ' ')"; grep '^FAIL' $L/tests_R.log | head -3 | cut -c1-400
echo "layouts yes: $(grep -c "w layouts same bits: yes" $L/tests_R.log); norms-off yes: $(grep -c "without norms same bits: yes" $L/tests_R.log); NO: $(grep -c "same bits: NO" $L/tests_R.log)"
for f in $L/san_*.log; do echo "$(basename $f .log): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
save
N=2; focus R
stamp done
