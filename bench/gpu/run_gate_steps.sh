#!/usr/bin/env bash
# The scan form's per-step gate stage (docs/CHUNKED.md 8.16) on the GPU, in one
# call: build (gpu/standalone with -DVLA_SCAN_GATE_FORM=per_step: the launchers
# and the twin take the per-step form), the scan kinds' CUDA tests (full, then --quick
# under memcheck and racecheck), the layout probe bench/gpu/gate_steps_proto.cu,
# and bench_chunked --scan-only --breakdown (the per-step gate stage beside the
# Woodbury one it replaced, in one process).
#   OUT=<dir> bench/gpu/run_gate_steps.sh
# Environment: STAGES (default "build tests sanitizers proto bench"), PREBUILT (a
# folder with bench_chunked, test_gpu_chunked_cuda and gate_steps_proto, built
# elsewhere for sm_90: then leave "build" out of STAGES).
set -uo pipefail
cd "$(dirname "$0")/../.."
logs=${OUT:-gate-steps-logs}
mkdir -p "$logs"
stages=${STAGES:-build tests sanitizers proto bench}
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }
has() { case " $stages " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } > "$logs/env.txt" 2>&1
cat "$logs/env.txt"
bin=${PREBUILT:-build-gpu/bin}
if has build; then
  stamp "build"
  if ! { cmake -S gpu/standalone -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DVLA_SCAN_GATE_FORM=per_step \
           -DVLA_EIGEN_DIR="${VLA_EIGEN_DIR:-/usr/include/eigen3}" && cmake --build build-gpu -j "$(nproc)" --target bench_chunked test_gpu_chunked_cuda; } > "$logs/build.log" 2>&1; then
    tail -30 "$logs/build.log"; echo "build failed"; exit 1
  fi
fi
if has tests; then
  stamp "test_gpu_chunked_cuda --kinds scan"
  timeout 300 "$bin/test_gpu_chunked_cuda" --kinds scan > "$logs/tests.log" 2>&1
  echo "exit $?; $(grep -c '^ok ' "$logs/tests.log") ok, $(grep -c '^FAIL' "$logs/tests.log") FAIL" | tee -a "$logs/tests.log"
  grep -E "^FAIL|gate|summary|passed|failed" "$logs/tests.log" | tail -8
fi
if has sanitizers; then
  for tool in memcheck racecheck; do
    stamp "compute-sanitizer --tool $tool (--quick --kinds scan)"
    timeout 240 compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin/test_gpu_chunked_cuda" --quick --kinds scan > "$logs/$tool.log" 2>&1
    echo "exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/$tool.log" | tail -1)"
  done
fi
if has proto; then
  stamp "gate_steps_proto"
  proto="$bin/gate_steps_proto"
  [ -x "$proto" ] || { mkdir -p build-gpu && nvcc -O3 -arch=sm_90 -std=c++20 -Icore/include bench/gpu/gate_steps_proto.cu -o build-gpu/gate_steps_proto && proto=build-gpu/gate_steps_proto; }
  timeout 120 "$proto" | tee "$logs/proto.log"
fi
if has bench; then
  stamp "bench_chunked --scan-only --breakdown"
  timeout 300 "$bin/bench_chunked" --scan-only --breakdown --csv "$logs/bench.csv" > "$logs/bench.log" 2>&1; echo "exit $?"
  grep -E "^\|" "$logs/bench.log" | head -40
fi
stamp "done"
