#!/usr/bin/env bash
# Session 11, call F: where the float steps kernel's cycles go (stall reasons, per-instruction
# samples) for the next session's plan: ncu on one steps_warp_kernel<64> launch of bench_chunked
# --profile (chunked-scan-bf16, B = 1, H = 16, T = 16,384). One tarball back.
set -u
O=${OUT:-/tmp/out}; L=/tmp/logs; mkdir -p "$O" $L
cd build-call && tar xf s11e.tar.xz && cd ..
B=build-call/s11e/bench_chunked_L512
timeout 200 ncu --clock-control none --kernel-name regex:steps_warp --launch-count 1 \
  --section WarpStateStats --section SourceCounters --section SchedulerStats --print-details all \
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
  $B --profile > $L/ncu_steps.txt 2>&1; echo "ncu exit $?"
grep -E "stalled_.*ratio" $L/ncu_steps.txt | sort -k3 -g -r | head -14
cuobjdump -sass $B > /tmp/all.sass 2>/dev/null; awk '/Function : .*steps_warp_kernelILi64/{p=1;print;next} p&&/Function : /{p=0} p' /tmp/all.sass > $L/steps_warp64.sass; wc -l $L/steps_warp64.sass
tar cJf "$O/logs.tar.xz" -C $L .
