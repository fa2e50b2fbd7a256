#!/usr/bin/env bash
# Session 16, call B: S = the sweep inverse a warp a matrix (docs/CHUNKED.md 8.37; working tree after 6be768e),
# R = 6be768e (the segment length by shape; session 15's call D, which never ran), B512 = session 15's call B build
# (512-step segments everywhere). Binaries: BUILD_ONLY=1 VARIANTS="L512=" bench/gpu/run_scan_focus.sh, renamed.
# Quick scan tests of S; focus of S and R; causal bf16 SDPA; every scan case of S with sanitizers beside
# (every case of R too where S fails one); focus of S, R, B512; Nsight Compute on S's inverse kernel
# where the call has run under 250 s.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s16b.tar.xz && cd ..
B=build-call/s16b/bin
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
stamp "quick scan tests of S"
for i in $(seq 0 11); do ( timeout 120 $B/test_gpu_chunked_cuda_S --quick --kinds scan --shard $i/12 > $L/q_$i.out 2>&1; echo "exit $?" >> $L/q_$i.out ) & done; wait
cat $L/q_*.out > $L/quick_S.log; rm -f $L/q_*.out
echo "S quick: $(grep -c '^ok ' $L/quick_S.log) ok, $(grep -c '^FAIL' $L/quick_S.log) FAIL"; grep '^FAIL' $L/quick_S.log | head -3 | cut -c1-400; save
N=1; focus S R
stamp SDPA; ( cd bench/gpu && timeout 150 python3 sdpa_chunked_shapes.py ) > $L/sdpa.log 2>&1; grep "^|\|torch" $L/sdpa.log; save
every S san
if grep -q '^FAIL\|exit [1-9]' $L/tests_S.log $L/quick_S.log; then every R nosan; fi
N=2; focus S R B512
if [ $((SECONDS - t0)) -gt 250 ]; then stamp "no ncu (time)"; stamp done; exit 0; fi
stamp "ncu on S's inverse"
timeout 150 ncu --kernel-name regex:seg_inverse_kernel --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy \
  --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis $B/bench_chunked_S --focus > $L/ncu_inv_S.txt 2>&1
grep "Duration\|Registers Per\|Achieved Occ\|Warp Cycles Per Issued\|Block Limit" $L/ncu_inv_S.txt; save
stamp done
