#!/usr/bin/env bash
# Session 16, call C: S2 = call B's S (the sweep inverse a warp a matrix) with fewer instructions (lane offsets
# precomputed, the chains on -P with the sign at the stores, the pivot row's lanes branched, loads and stores a
# block at a time), and the n scan in tiles of all the shared memory (106 chunks at D = 64, not 64; docs/CHUNKED.md
# 8.37); S = call B's. Binaries: BUILD_ONLY=1 VARIANTS="L512=" bench/gpu/run_scan_focus.sh.
# Quick scan tests of S2; focus of S2 and S; every scan case of S2 with sanitizers beside; focus again;
# Nsight Compute on S2's inverse kernel where the call has run under 250 s.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s16c.tar.xz && cd ..
B=build-call/s16c/bin
L=$O/logs; mkdir -p $L
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1; } | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
focus() { for V in "$@"; do stamp "focus $V"; timeout 100 $B/bench_chunked_$V --focus > $L/focus_${V}_$N.log 2>&1; grep "^| 1 \|^| 8 " $L/focus_${V}_$N.log; done; save; }
every() {  # every scan case of $1, 12 shards, with $2 sanitizer jobs beside
  V=$1; stamp "every scan case of $V"
  for i in $(seq 0 11); do ( timeout 200 $B/test_gpu_chunked_cuda_$V --kinds scan --shard $i/12 > $L/fs_$i.out 2>&1; echo "exit $?" >> $L/fs_$i.out ) & done
  if [ "$2" = san ]; then
    for job in racecheck:3 memcheck:0 initcheck:7; do tool=${job%:*}; i=${job#*:}; timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > $L/san_${tool}_$i.log 2>&1 & done
  fi
  wait
  cat $L/fs_*.out > $L/tests_$V.log; rm -f $L/fs_*.out
  echo "$V every case: $(grep -c '^ok ' $L/tests_$V.log) ok, $(grep -c '^FAIL' $L/tests_$V.log) FAIL; exits: $(grep '^exit' $L/tests_$V.log | sort | uniq -c | tr '\n' ' ')"; grep '^FAIL' $L/tests_$V.log | head -3 | cut -c1-400
  echo "layouts yes: $(grep -c "w layouts same bits: yes" $L/tests_$V.log); norms-off yes: $(grep -c "without norms same bits: yes" $L/tests_$V.log); NO: $(grep -c "same bits: NO" $L/tests_$V.log)"
  [ "$2" = san ] && for f in $L/san_*.log; do echo "$(basename $f .log): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
  save
}
stamp "quick scan tests of S2"
for i in $(seq 0 11); do ( timeout 120 $B/test_gpu_chunked_cuda_S2 --quick --kinds scan --shard $i/12 > $L/q_$i.out 2>&1; echo "exit $?" >> $L/q_$i.out ) & done; wait
cat $L/q_*.out > $L/quick_S2.log; rm -f $L/q_*.out
echo "S2 quick: $(grep -c '^ok ' $L/quick_S2.log) ok, $(grep -c '^FAIL' $L/quick_S2.log) FAIL"; grep '^FAIL' $L/quick_S2.log | head -3 | cut -c1-400; save
N=1; focus S2 S
every S2 san
N=2; focus S2 S
if [ $((SECONDS - t0)) -gt 250 ]; then stamp "no ncu (time)"; stamp done; exit 0; fi
stamp "ncu on S2's inverse"
timeout 150 ncu --kernel-name regex:seg_inverse_kernel --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy \
  --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis $B/bench_chunked_S2 --focus > $L/ncu_inv_S2.txt 2>&1
grep "Duration\|Registers Per\|Achieved Occ\|Warp Cycles Per Issued\|Block Limit" $L/ncu_inv_S2.txt; save
stamp done
