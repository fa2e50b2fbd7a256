#!/usr/bin/env bash
# Stage 2 of the scan form (gpu/cuda/scan_state.cu) on the device machine: build
# with nvcc (sm_90, the chunked kernels' rounding flags), the check and timing
# (bench/gpu/scan_state_check.cu), then compute-sanitizer memcheck and racecheck
# on short cases. Logs under $OUT (or ./scan-state-out).
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
echo "== scan_state_check" >>"$log"
build-state/scan_state_check 2>&1 | tee -a "$log"
rc=$?
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool scan_state_check --small" >>"$log"
  compute-sanitizer --tool "$tool" --error-exitcode 3 build-state/scan_state_check --small >"$out/sanitize_$tool.log" 2>&1
  echo "exit $?" >>"$out/sanitize_$tool.log"
  tail -3 "$out/sanitize_$tool.log" >>"$log"
done
cat "$log" | tail -40
exit $rc
