#!/usr/bin/env bash
# Session 15, call C: Nsight Compute on scan_seg_inverse (the block sweep inverse, call B's L512 binary), B = 1,
# H = 16, T = 16,384 (the first launch of bench_chunked --focus). Output: ncu_seg_inverse.txt.
cd build-call && tar xf s15b.tar.xz && cd ..
timeout 300 ncu --kernel-name regex:seg_inverse_kernel --launch-count 1 --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis \
  build-call/s15b/bin/bench_chunked_L512 --focus > "$OUT/ncu_inv.txt" 2>&1
