#!/usr/bin/env bash
# Stage 2 of the scan form (gpu/cuda/scan_state.cu) on the device machine: build
# with nvcc (sm_90, the chunked kernels' rounding flags) unless a binary built by
# the same commands is carried in $PRE (default build-state2/carry), then the
# correctness cases (bench/gpu/scan_state_check.cu --quick, once per pass in
# $QUICK_PASSES, default "v4 lanedot") beside compute-sanitizer memcheck and
# racecheck on short cases (--small, on the pass $SAN_PASS, default lanedot), then the
# timed shapes ($TIMED: --timed, or --explore for the block shapes and segment
# counts) alone on the GPU. Optional, when carried in $PRE: V3=1 times
# scan_state_check_v3 (the previous commit's stage 2, built by the same commands)
# with --timed (for at most $V3_TIMEOUT s); SUITE=1 runs every test_gpu_chunked_cuda*
# binary with --kinds scan in $SHARDS shards (the suite's judgement of both stages
# through the error model); NCU=1 profiles the pass with Nsight Compute; BENCH=1
# runs $pre/bench_chunked --scan-only --breakdown last (whole scan beside the
# fused kernel, for at most $BENCH_TIMEOUT s). Each run has a timeout ($QUICK_TIMEOUT,
# $TIMED_TIMEOUT, $SAN_TIMEOUT, $TEST_TIMEOUT, $BENCH_TIMEOUT). Logs under
# $OUT (or ./scan-state-out).
#   bash bench/gpu/run_scan_state.sh            (BUILD_ONLY=1: build into $PRE and stop)
set -uo pipefail
out=${OUT:-scan-state-out}
pre=${PRE:-build-state2/carry}
bin=$pre/scan_state_check
mkdir -p "$out" "$pre"
log=$out/scan_state.log
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
  nvcc --version 2>/dev/null | tail -2
} >"$log" 2>&1
if [ ! -x "$bin" ] || [ "${BUILD_ONLY:-0}" = 1 ]; then
  flags=(-arch=sm_90 -O3 -std=c++20 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false -Xcompiler -ffp-contract=off
         -Icore/include -Igpu/include -Igpu/cuda -Ireference/include -lineinfo)
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
  ( timeout "${SAN_TIMEOUT:-90}" compute-sanitizer --tool "$tool" --error-exitcode 3 "$bin" --small --pass "${SAN_PASS:-lanedot}"
    echo "exit $?" ) >"$out/sanitize_$tool.log" 2>&1 &
done
# The suite's judgement beside them: each carried test_gpu_chunked_cuda* binary,
# --kinds scan in $SHARDS shards at once.
suites=()
if [ "${SUITE:-0}" = 1 ]; then
  for t in "$pre"/test_gpu_chunked_cuda*; do
    [ -x "$t" ] || continue
    suites+=("$t")
    for i in $(seq 0 $(( ${SHARDS:-8} - 1 ))); do
      timeout "${TEST_TIMEOUT:-150}" "$t" --kinds scan --shard "$i/${SHARDS:-8}" >"$out/$(basename "$t").shard$i" 2>&1 &
    done
  done
fi
# Nsight Compute on the pass of one launch_state (T = 16,384), beside them too: its
# stall reasons (counters of one kernel, replayed alone by ncu).
if [ "${NCU:-0}" = 1 ]; then
  m=""
  for r in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected selected lg_throttle \
           dispatch_stall no_instruction branch_resolving membar misc drain sleeping tex_throttle imc_miss; do
    m="$m${m:+,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  ( timeout 60 ncu --clock-control none -k regex:state_pass --launch-count 1 --section SpeedOfLight --section SchedulerStats \
      --section WarpStateStats --section MemoryWorkloadAnalysis --metrics "$m" "$bin" --profile
    echo "exit $?" ) >"$out/ncu_pass.log" 2>&1 &
fi
# The correctness cases, one process per pass at once.
for pass in ${QUICK_PASSES:-v4 lanedot}; do
  ( timeout "${QUICK_TIMEOUT:-150}" "$bin" --quick --pass "$pass"
    echo "exit $?" ) >"$out/quick_$pass.log" 2>&1 &
done
wait
rc=0
for pass in ${QUICK_PASSES:-v4 lanedot}; do
  echo "== $bin --quick --pass $pass" >>"$log"
  cat "$out/quick_$pass.log" >>"$log"
  grep -q "^exit 0$" "$out/quick_$pass.log" || rc=1
  rm -f "$out/quick_$pass.log"
done
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool $bin --small --pass ${SAN_PASS:-lanedot}" >>"$log"
  tail -3 "$out/sanitize_$tool.log" >>"$log"
  grep -q "^exit 0$" "$out/sanitize_$tool.log" || rc=1
done
for t in "${suites[@]}"; do
  b=$(basename "$t")
  cat "$out/$b".shard* | grep -v -E "^(PASSED|FAILED): " >"$out/$b.log"
  echo "== $t --kinds scan: shards $(cat "$out/$b".shard* | grep -c '^PASSED') of ${SHARDS:-8} passed; runs: $(grep -c -E '^(ok|FAIL) ' "$out/$b.log"), FAIL lines: $(grep -c '^FAIL' "$out/$b.log")" >>"$log"
  grep '^FAIL' "$out/$b.log" | head -5 >>"$log"
  [ "$(cat "$out/$b".shard* | grep -c '^PASSED')" = "${SHARDS:-8}" ] || rc=1
  rm -f "$out/$b".shard*
done
if [ -f "$out/ncu_pass.log" ]; then
  echo "== ncu (state_pass, T=16384)" >>"$log"
  grep -E "stalled|Duration|SM Frequency|Issued Warp|No Eligible|Active Warps Per|Eligible Warps Per|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|Compute \(SM\)|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|==ERR|exit" \
    "$out/ncu_pass.log" | head -40 >>"$log"
fi
echo "== $bin ${TIMED:---timed}" >>"$log"
timeout "${TIMED_TIMEOUT:-200}" "$bin" "${TIMED:---timed}" >>"$log" 2>&1
rc2=$?
[ $rc -eq 0 ] && rc=$rc2
if [ "${V3:-0}" = 1 ] && [ -x "$pre/scan_state_check_v3" ]; then
  echo "== $pre/scan_state_check_v3 --timed (v3, for comparison)" >>"$log"
  timeout "${V3_TIMEOUT:-40}" "$pre/scan_state_check_v3" --timed >>"$log" 2>&1
fi
if [ "${BENCH:-0}" = 1 ] && [ -x "$pre/bench_chunked" ]; then
  echo "== $pre/bench_chunked --scan-only --breakdown" >>"$log"
  timeout "${BENCH_TIMEOUT:-120}" "$pre/bench_chunked" --scan-only --breakdown >>"$log" 2>&1 || echo "bench_chunked exit $?" >>"$log"
fi
date -u >>"$log"
cat "$log"
exit $rc
