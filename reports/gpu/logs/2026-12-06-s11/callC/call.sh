#!/usr/bin/env bash
# Session 11, call C: the tree after call B (the gate's side kernels serial beside the float steps,
# den in the readout removed, the segment start's refusal): run_scan_focus.sh on the prebuilt
# shipped build, every scan test case, sanitizers.
set -u
cd build-call && tar xf s11c.tar.xz && cd ..
OUT=${OUT:-/tmp/out} PREBUILT=build-call/s11c FULL=1 bash bench/gpu/run_scan_focus.sh 2>&1 | tee "${OUT:-/tmp/out}/run.log"
grep -h "scan-start-beyond\|^FAIL" "${OUT:-/tmp/out}"/tests_L512.log | cut -c1-400 | head
O=${OUT:-/tmp/out}
echo "[sass] steps_warp_kernel"
cuobjdump -sass build-call/s11c/bench_chunked_L512 > /tmp/all.sass 2>&1
awk '/Function : .*steps_warp_kernel/{p=1} p&&/Function : /&&!/steps_warp_kernel/{p=0} p' /tmp/all.sass | xz -6 > "$O/steps_warp.sass.xz"; ls -la "$O/steps_warp.sass.xz"
echo "[ncu] steps_warp_kernel and the state kernels, one launch (bench_chunked --profile)"
timeout 150 ncu --clock-control none --kernel-name regex:"steps_warp|state_pass|state_readout|state_prep|prep_kernel" --launch-count 5 \
  --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats --section Occupancy \
  build-call/s11c/bench_chunked_L512 --profile > "$O/ncu.txt" 2>&1; echo "ncu exit $?"; grep -E "^\s+[a-z_]+.*\(|Executed Ipc A|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  |No Eligible|Duration" "$O/ncu.txt" | head -60
