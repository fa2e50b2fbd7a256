#!/usr/bin/env bash
# The GPU report of the fused kernels, rerunnable by anyone on a machine with an
# NVIDIA GPU, nvcc, CMake and PyTorch (the project's Debian dependencies are not
# needed: gpu/standalone builds core/, gpu/, the CUDA test and the benchmark).
# Builds, runs the CUDA tests (kernel vs CPU twin vs double reference), the three
# compute-sanitizer tools, the latency microbenchmarks, the benchmark, the
# PyTorch baselines and the layout sweep, and writes reports/gpu/<date>-<gpu>.md
# after every stage (and, when $OUT is set, a copy plus the raw logs as logs.tgz
# under $OUT), so a run stopped at a time limit keeps what it measured. About 8.5
# minutes on the H200 (2026-12-01, kernel v4: build 45 s, sanitizers 19 s, tests
# 325 s, benchmark 63 s, PyTorch 44 s, the rest seconds; kernel v5, three layouts,
# without the layout sweep: build 51 s, sanitizers 40 s, tests 360 s with the
# heaviest shard cut at STAGE_TIMEOUT=360, benchmark 55 s, PyTorch 45 s: 560 s). Since 2026-12-03
# test_gpu_cuda's shards are cost-balanced (case, kind) runs, not whole cases: the
# heaviest cases (paper and vla-v3 at D = 128, B = 3, T = 1000, H = 5: 2.3 times a
# sixteenth of the suite each, and T = 4096, H = 3) no longer hold one shard past
# the limit; 16 shards took 95-140 s with the three sanitizers beside them (v7 run).
#   scripts/gpu_report.sh [--quick]      --quick: small shapes (a smoke run)
# Environment:
#   STAGES     the stages to run, any of: tests sanitizers latency bench torch layouts
#              (default: all). The report can be split over two runs of the
#              same kernel source (each run records its sha256 in env.txt):
#   PREV_LOGS  a directory of an earlier run's logs (logs.tgz unpacked) whose
#              files are taken first: stages run now replace theirs.
#   STAGE_TIMEOUT  seconds allowed to each test shard and sanitizer (default 330; ~140 s needed on 16 cores).
#   PREBUILT   a folder holding the stages' binaries already built from this tree (no build here).
#   REPORT_SUFFIX  appended to the report's name (reports/gpu/<date>-<gpu><suffix>.md), e.g. -v5 for a
#              later kernel's report beside an earlier one of the same day.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=""
[ "${1:-}" = "--quick" ] && quick=--quick
logs=$(mktemp -d /tmp/vla-gpu-logs.XXXXXX)
build=${BUILD_DIR:-build-gpu-standalone}
jobs=$(nproc)
stages=" ${STAGES:-tests sanitizers latency bench torch layouts} "
for st in $stages; do
  case $st in tests|sanitizers|latency|bench|torch|layouts) ;; *) echo "gpu_report: unknown stage '$st' in STAGES" >&2; exit 2 ;; esac
done
want() { [[ $stages == *" $1 "* ]]; }
if [ -n "${PREV_LOGS:-}" ]; then
  [ -d "$PREV_LOGS" ] || { echo "gpu_report: PREV_LOGS '$PREV_LOGS' is not a directory" >&2; exit 2; }
  cp -r "$PREV_LOGS"/. "$logs/"
  [ -f "$logs/env.txt" ] && mv "$logs/env.txt" "$logs/env_previous.txt"
fi
cp "$0" "$logs/script.sh"
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }

{
  echo "date (UTC): $(date -u '+%F %T')"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,persistence_mode --format=csv
  nvcc --version | tail -2
  echo "cmake: $(cmake --version | head -1)"
  echo "host compiler: $(c++ --version | head -1)"
  python3 -c "import torch; print('torch', torch.__version__, 'built for CUDA', torch.version.cuda)"
  echo "kernel: $(uname -r); cores: $jobs"
  echo "stages: $stages"
  echo "sha256 of the kernel source: $(cat gpu/cuda/fused_kernel.cuh gpu/cuda/cluster_kernel.cuh gpu/cuda/fused_run.cu gpu/include/vla/gpu/fused_traits.hpp | sha256sum | cut -c1-16)"
} > "$logs/env.txt" 2>&1
cat "$logs/env.txt"

stamp "build"
targets=""  # the fused kernels' (the chunked one has its own script)
{ want tests || want sanitizers; } && targets="$targets test_gpu_cuda"
want latency && targets="$targets bench_gpu_latency"
want bench && targets="$targets bench_gpu"
want layouts && targets="$targets bench_gpu_variants"
if [ -n "${PREBUILT:-}" ]; then
  # Binaries built elsewhere from this tree (saves the build's device time); each one the stages need must be there.
  for t in $targets; do [ -x "$PREBUILT/$t" ] || { echo "gpu_report: PREBUILT '$PREBUILT' has no $t" >&2; exit 2; }; done
  echo "prebuilt binaries from $PREBUILT: $targets" > "$logs/build.log"
elif ! { cmake -S gpu/standalone -B "$build" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$jobs" --target $targets; } > "$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log"
  echo "gpu_report: build failed"
  exit 1
fi
grep -E "registers|spill" "$logs/build.log" | head -20
bin=${PREBUILT:-$build/bin}

# The sanitizers first (on --quick: seconds), then the tests sharded over every core.
if want sanitizers; then
  stamp "compute-sanitizer (memcheck, racecheck, initcheck) on test_gpu_cuda --quick"
  for tool in memcheck racecheck initcheck; do
    ( timeout "${STAGE_TIMEOUT:-330}" compute-sanitizer --tool $tool --error-exitcode 3 "$bin/test_gpu_cuda" --quick > "$logs/$tool.log" 2>&1
      echo "exit status: $?" >> "$logs/$tool.log" ) &
  done
  wait
fi
shards=$jobs  # test_gpu_cuda balances its shards by cost ((case, kind) runs)
if want tests; then
  stamp "CUDA tests (sharded over $shards cores)"
  rm -f "$logs"/test_shard_*.log "$logs/test_full.log"
  for i in $(seq 0 $((shards - 1))); do
    timeout "${STAGE_TIMEOUT:-330}" "$bin/test_gpu_cuda" $quick --shard "$i/$shards" > "$logs/test_shard_$i.log" 2>&1 &
  done
  wait
fi
if want tests; then
  fails=0
  for i in $(seq 0 $((shards - 1))); do
    grep -v -E "^(PASSED|FAILED): " "$logs/test_shard_$i.log" >> "$logs/test_full.log"
    grep -q "^PASSED: " "$logs/test_shard_$i.log" || fails=$((fails + 1))
  done
  runs=$(grep -c -E "^(ok|FAIL) " "$logs/test_full.log")
  bad=$(grep -c -E "^FAIL " "$logs/test_full.log")
  if [ "$fails" = 0 ]; then echo "PASSED: $bad of $runs kernel runs failed ($shards shards)" >> "$logs/test_full.log";
  else echo "FAILED: $bad of $runs kernel runs failed; $fails of $shards shards did not pass" >> "$logs/test_full.log"; fi
  tail -1 "$logs/test_full.log"
fi
want sanitizers && grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" "$logs"/{memcheck,racecheck,initcheck}.log

# The report so far (rewritten after each stage, and copied with the raw logs
# to $OUT when set): a run cut off at a time limit still leaves what it measured.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed 's/nvidia //; s/[^a-z0-9]\+/-/g; s/-$//')
report=reports/gpu/$(date -u +%F)-${gpu:-gpu}${REPORT_SUFFIX:-}${quick:+-quick}.md
mkdir -p reports/gpu
write_report() {
  python3 bench/gpu/make_report.py "$logs" "$report" && echo "wrote $report ($1)"
  if [ -n "${OUT:-}" ]; then
    cp "$report" "$OUT/"
    tar -czf "$OUT/logs.tgz" -C "$logs" .
  fi
}
write_report "tests"

if want latency; then
  stamp "latency"
  timeout 60 "$bin/bench_gpu_latency" > "$logs/latency.md" 2>&1 || echo "bench_gpu_latency: exit $?" >> "$logs/latency.md"
  cat "$logs/latency.md"
  write_report "latency"
fi
if want bench; then
  stamp "benchmark"
  timeout 300 "$bin/bench_gpu" $quick --csv "$logs/bench.csv" > "$logs/bench.log" 2>&1 || echo "bench_gpu: exit $?" >> "$logs/bench.log"
  grep -E "^\| 1 \| 16 \|" "$logs/bench.log"
  write_report "benchmark"
fi
if want torch; then
  stamp "PyTorch baselines"
  PYTHONUNBUFFERED=1 timeout 240 python3 bench/gpu/torch_baselines.py $quick --csv "$logs/torch.csv" > "$logs/torch.log" 2>&1 ||
    echo "torch_baselines: exit $?" >> "$logs/torch.log"
  tail -30 "$logs/torch.log"
  write_report "PyTorch baselines"
fi
if want layouts && [ -z "$quick" ]; then
  stamp "layouts"
  timeout 150 "$bin/bench_gpu_variants" > "$logs/variants.log" 2>&1
  cat "$logs/variants.log"
  write_report "layouts"
fi
stamp "done"
