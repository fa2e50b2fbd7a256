#!/usr/bin/env bash
# Stage 2 of the scan form (gpu/cuda/scan_state.cu) on the device machine: build
# with nvcc (sm_90, the chunked kernels' rounding flags) unless a binary built by
# the same commands is carried in build-pass/prebuilt/, then the correctness cases
# (bench/gpu/scan_state_check.cu --quick) beside compute-sanitizer memcheck and
# racecheck on short cases (--small), then the timed shapes (--timed) alone on
# the GPU. Logs under $OUT (or ./scan-state-out).
#   bash bench/gpu/run_scan_state.sh            (BUILD_ONLY=1: build into build-pass/prebuilt and stop)
set -uo pipefail
out=${OUT:-scan-state-out}
pre=build-pass/prebuilt
bin=$pre/scan_state_check
mkdir -p "$out" "$pre"
log=$out/scan_state.log
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -2
} >"$log" 2>&1
if [ ! -x "$bin" ] || [ "${BUILD_ONLY:-0}" = 1 ]; then
  flags=(-arch=sm_90 -O3 -std=c++20 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false -Xcompiler -ffp-contract=off
         -Icore/include -Igpu/include -Igpu/cuda -lineinfo)
  t0=$(date +%s)
  nvcc "${flags[@]}" -Xptxas=-warn-spills -c gpu/cuda/scan_state.cu -o $pre/scan_state.o >>"$log" 2>&1 &
  nvcc "${flags[@]}" -c bench/gpu/scan_state_check.cu -o $pre/scan_state_check.o >>"$log" 2>&1 &
  wait
  nvcc -arch=sm_90 $pre/scan_state.o $pre/scan_state_check.o -o "$bin" >>"$log" 2>&1 ||
    { echo "build failed" >>"$log"; cat "$log"; exit 1; }
  rm -f $pre/*.o
  echo "build: $(( $(date +%s) - t0 )) s" >>"$log"
  [ "${BUILD_ONLY:-0}" = 1 ] && { cat "$log"; exit 0; }
else
  echo "prebuilt $bin, sha256 $(sha256sum "$bin" | cut -c1-16)" >>"$log"
fi
for tool in memcheck racecheck; do
  ( timeout "${SAN_TIMEOUT:-90}" compute-sanitizer --tool "$tool" --error-exitcode 3 "$bin" --small
    echo "exit $?" ) >"$out/sanitize_$tool.log" 2>&1 &
done
echo "== $bin --quick" >>"$log"
"$bin" --quick >>"$log" 2>&1
rc=$?
wait
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool $bin --small" >>"$log"
  tail -3 "$out/sanitize_$tool.log" >>"$log"
done
echo "== $bin --timed" >>"$log"
"$bin" --timed >>"$log" 2>&1
rc2=$?
[ $rc -eq 0 ] && rc=$rc2
date -u >>"$log"
cat "$log"
exit $rc
