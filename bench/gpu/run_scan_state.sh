#!/usr/bin/env bash
# Stage 2 of the scan form (gpu/cuda/scan_state.cu) on the device machine: build
# with nvcc (sm_90, the chunked kernels' rounding flags), the check and timing
# (bench/gpu/scan_state_check.cu), then compute-sanitizer memcheck and racecheck
# on short cases (--small). Logs under $OUT (or ./scan-state-out).
#   bash bench/gpu/run_scan_state.sh
set -uo pipefail
out=${OUT:-scan-state-out}
mkdir -p "$out" build-state
log=$out/scan_state.log
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -2
} >"$log" 2>&1
flags=(-arch=sm_90 -O3 -std=c++20 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false -Xcompiler -ffp-contract=off
       -Icore/include -Igpu/include -Igpu/cuda -lineinfo)
t0=$(date +%s)
nvcc "${flags[@]}" -Xptxas=-warn-spills -c gpu/cuda/scan_state.cu -o build-state/scan_state.o >>"$log" 2>&1 &
nvcc "${flags[@]}" -c bench/gpu/scan_state_check.cu -o build-state/scan_state_check.o >>"$log" 2>&1 &
wait
nvcc -arch=sm_90 build-state/scan_state.o build-state/scan_state_check.o -o build-state/scan_state_check >>"$log" 2>&1 ||
  { echo "build failed" >>"$log"; cat "$log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s" >>"$log"
# The correctness cases beside the sanitizers (short cases), then the timed shapes alone on the GPU.
build-state/scan_state_check --quick >"$out/check_quick.log" 2>&1 &
pid_quick=$!
for tool in memcheck racecheck; do
  ( timeout "${SAN_TIMEOUT:-60}" compute-sanitizer --tool "$tool" --error-exitcode 3 build-state/scan_state_check --small
    echo "exit $?" ) >"$out/sanitize_$tool.log" 2>&1 &
done
wait $pid_quick
rc=$?
echo "== build-state/scan_state_check --quick (exit $rc)" >>"$log"
cat "$out/check_quick.log" >>"$log"
wait
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool build-state/scan_state_check --small" >>"$log"
  tail -4 "$out/sanitize_$tool.log" >>"$log"
done
echo "== build-state/scan_state_check --timed" >>"$log"
build-state/scan_state_check --timed >>"$log" 2>&1
rc2=$?
[ $rc -eq 0 ] && rc=$rc2
date -u >>"$log"
cat "$log"
exit $rc
