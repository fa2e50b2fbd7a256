#!/usr/bin/env bash
# The scan form's segment length as an experiment (issue 8; docs/CHUNKED.md 8.10):
# one factorisation of M per segment, A carried by Woodbury downdates through the
# rest. Longer segments mean fewer factorisations (the segment's first chunk costs
# more than a carried one) and fewer, longer blocks of scan_gate (waves); the error
# bound grows with the carried chunks (8.10's argument: at most L times a chunk's).
# Builds bench_chunked (and, with TESTS=1, test_gpu_chunked_cuda) once per length
# with -DVLA_SCAN_SEGMENT_STEPS (the kernels and the twin of that build follow it),
# then times them in alternating rounds, alone on the GPU.
#   OUT=<dir> bench/gpu/run_segment_sweep.sh
# Environment: SEGMENTS (default "512 1024 2048"; 512 is the shipped form),
# PREBUILT (a folder holding bench_chunked_L<steps> and, with TESTS=1,
# test_gpu_chunked_cuda_L<steps>), ROUNDS (default 2), TESTS (1: the scan kinds'
# CUDA tests of every length, --quick, before the timing).
set -uo pipefail
cd "$(dirname "$0")/../.."
logs=${OUT:-segment-logs}
mkdir -p "$logs"
segments=${SEGMENTS:-512 1024 2048}
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } > "$logs/env.txt" 2>&1
cat "$logs/env.txt"
targets="bench_chunked"
[ "${TESTS:-0}" = 1 ] && targets="$targets test_gpu_chunked_cuda"
for L in $segments; do
  for tg in $targets; do
    bin="${PREBUILT:-/nonexistent}/${tg}_L$L"
    if [ ! -x "$bin" ]; then
      stamp "build $tg with segments of $L steps"
      b=build-seg-$L
      if ! { cmake -S gpu/standalone -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DVLA_SCAN_SEGMENT_STEPS="$L" \
               -DVLA_EIGEN_DIR="${VLA_EIGEN_DIR:-/usr/include/eigen3}" && cmake --build "$b" -j "$(nproc)" --target "$tg"; } > "$logs/build_L$L.log" 2>&1; then
        tail -30 "$logs/build_L$L.log"; echo "build failed"; exit 1
      fi
      mkdir -p "$logs/bin" && cp "$b/bin/$tg" "$logs/bin/${tg}_L$L"
      bin="$logs/bin/${tg}_L$L"
    fi
    eval "bin_${tg}_$L=\$bin"
  done
done
if [ "${TESTS:-0}" = 1 ]; then
  for L in $segments; do
    stamp "scan tests (--quick), segments of $L steps"
    eval "t=\$bin_test_gpu_chunked_cuda_$L"
    timeout 300 "$t" --quick --kinds scan > "$logs/tests_L$L.log" 2>&1
    echo "exit $?; $(grep -c '^ok ' "$logs/tests_L$L.log") ok, $(grep -c '^FAIL' "$logs/tests_L$L.log") FAIL" | tee -a "$logs/tests_L$L.log"
  done
fi
for r in $(seq 1 "${ROUNDS:-2}"); do
  for L in $segments; do
    stamp "round $r: bench_chunked --scan-only --breakdown, segments of $L steps"
    eval "b=\$bin_bench_chunked_$L"
    timeout 200 "$b" --scan-only --breakdown --csv "$logs/bench_L${L}_r$r.csv" > "$logs/bench_L${L}_r$r.log" 2>&1 || echo "exit $?" >> "$logs/bench_L${L}_r$r.log"
  done
done
stamp "whole scan, median ms (rounds side by side):"
for L in $segments; do
  for f in "$logs"/bench_L${L}_r*.csv; do
    [ -f "$f" ] && awk -F, -v L="$L" -v f="$(basename "$f")" 'NR > 1 && $1 ~ /scan-bf16/ { printf "  L=%s %s B=%s H=%s T=%s C=%s: %s ms\n", L, f, $2, $3, $4, $6, $7 }' "$f"
  done
done | sort -t= -k1,1 -s
stamp "done"
