#!/usr/bin/env bash
# Session 13, call B: N = the working tree (the float steps' w layout chosen by occupancy; the identity's
# solve skipping each warp's no-op forward steps) against L512 (60864c3, call A's binaries): focus twice
# alternating, the quick scan tests of N (lines must equal L512's, the new layout suffix aside), and ncu on
# N's scan_seg_inverse (stall reasons, source counters). One tarball back.
set -u
O=${OUT:-/tmp/out}; L=/tmp/logs; mkdir -p "$O" $L
cd build-call && tar xf s13a.tar.xz && tar xf s13b.tar.xz && cd ..
A=build-call/s13a; B=build-call/s13b
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $L/env.txt; nvcc --version | tail -1 >> $L/env.txt
for r in 1 2; do
  for V in L512 N; do
    d=$A; [ $V = N ] && d=$B
    echo "focus $V run $r"; timeout 120 $d/bench_chunked_$V --focus > $L/focus_${V}_$r.log 2>&1; grep "^| 1 \|^| 8 " $L/focus_${V}_$r.log
  done
done
for i in $(seq 0 11); do timeout 120 $B/test_gpu_chunked_cuda_N --quick --kinds scan --shard $i/12 > $L/q_$i.log 2>&1 & done; wait
cat $L/q_*.log > $L/quick_N.log; rm -f $L/q_*.log
echo "N quick: $(grep -c '^ok ' $L/quick_N.log) ok, $(grep -c '^FAIL' $L/quick_N.log) FAIL; layouts: $(grep -c "w layouts same bits: yes" $L/quick_N.log) yes, $(grep -c "w layouts same bits: NO" $L/quick_N.log) NO"
if cmp -s <(grep '^ok \|^FAIL' reports/gpu/logs/2026-12-06-s13/callA/quick_L512.log) <(grep '^ok \|^FAIL' $L/quick_N.log | sed "s/ | steps' w layouts same bits: yes//"); then echo "N quick lines EQUAL L512's"; else echo "N quick lines DIFFER"; diff <(grep '^ok \|^FAIL' reports/gpu/logs/2026-12-06-s13/callA/quick_L512.log) <(grep '^ok \|^FAIL' $L/quick_N.log) | head -6 | cut -c1-250; fi
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_gpu_chunked_cuda_N --quick --kinds scan --shard 1/12 > $L/san_memcheck_1.log 2>&1; echo "memcheck exit $? $(grep 'ERROR SUMMARY' $L/san_memcheck_1.log)"
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $B/test_gpu_chunked_cuda_N --quick --kinds scan --shard 1/12 > $L/san_racecheck_1.log 2>&1; echo "racecheck exit $? $(grep 'RACECHECK SUMMARY' $L/san_racecheck_1.log)"
timeout 150 ncu --clock-control none --kernel-name regex:seg_inverse --launch-count 1 \
  --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --print-details all \
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
  $B/bench_chunked_N --profile > $L/ncu_seg_inverse.txt 2>&1; echo "ncu exit $?"
grep -E "stalled_.*ratio" $L/ncu_seg_inverse.txt | sort -k3 -g -r | head -10
grep -E "inst_executed.sum|fp64_cycles|wavefronts_mem_shared|Duration|Achieved Occupancy|Issue Slots Busy|Eligible Warps" $L/ncu_seg_inverse.txt | head -12
tar cJf "$O/logs.tar.xz" -C $L .
