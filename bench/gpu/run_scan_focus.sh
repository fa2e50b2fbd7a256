#!/usr/bin/env bash
# The scan form at issue 8's target shapes, one experimental build per variant
# (docs/CHUNKED.md 8.26): each variant is gpu/standalone built with its macros,
# then `bench_chunked --focus` (chunked-scan-bf16, C = 32: the whole scan and every
# kernel of both stages apart) alone on the GPU, causal bf16 SDPA at the same
# shapes, and the scan kinds' quick CUDA tests of the variants named in TESTS.
#   OUT=<dir> bench/gpu/run_scan_focus.sh
# Environment: VARIANTS (default below: NAME=MACROS pairs separated by spaces, the
# macros comma-separated), TESTS (variant names whose CUDA tests run, default
# "DR"), PREBUILT (a folder holding bench_chunked_NAME and test_gpu_chunked_cuda_NAME,
# as this session's call carried them: built on another machine with nvcc).
set -uo pipefail
cd "$(dirname "$0")/../.."
logs=${OUT:-scan-focus-logs}
mkdir -p "$logs"
variants=${VARIANTS:-"L512= DR=VLA_SCAN_DEN_IN_READOUT=1 L256=VLA_SCAN_SEGMENT_STEPS=256 L128=VLA_SCAN_SEGMENT_STEPS=128 V7=VLA_SCAN_PASS_V7 C1=VLA_SCAN_SEGMENT_STEPS=256,VLA_SCAN_DEN_IN_READOUT=1"}
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } > "$logs/env.txt" 2>&1
cat "$logs/env.txt"
for v in $variants; do
  name=${v%%=*}; macros=${v#*=}
  for tg in bench_chunked test_gpu_chunked_cuda; do
    bin="${PREBUILT:-/nonexistent}/${tg}_$name"
    if [ ! -x "$bin" ]; then
      [ "$tg" = test_gpu_chunked_cuda ] && [[ " ${TESTS:-DR} " != *" $name "* ]] && continue
      b=build-focus-$name
      defs=()  # the variant's macros for the C++ and the CUDA compiles alike
      if [ -n "$macros" ]; then
        flags=$(echo "$macros" | sed 's/^/-D/; s/,/ -D/g')
        defs=("-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_CUDA_FLAGS=$flags")
      fi
      stamp "build $tg ($name: ${macros:-shipped})"
      if ! { cmake -S gpu/standalone -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${defs[@]}" \
               -DVLA_EIGEN_DIR="${VLA_EIGEN_DIR:-/usr/include/eigen3}" && cmake --build "$b" -j "$(nproc)" --target "$tg"; } > "$logs/build_$name.log" 2>&1; then
        tail -30 "$logs/build_$name.log"; echo "build failed"; exit 1
      fi
      mkdir -p "$logs/bin" && cp "$b/bin/$tg" "$logs/bin/${tg}_$name" && bin="$logs/bin/${tg}_$name"
    fi
    eval "bin_${tg}_$name=\$bin"
  done
done
for v in $variants; do
  name=${v%%=*}
  eval "b=\$bin_bench_chunked_$name"
  stamp "focus $name"
  timeout 120 "$b" --focus > "$logs/focus_$name.log" 2>&1; echo "exit $?" >> "$logs/focus_$name.log"
  grep "^| 1 \|^| 8 \|^exit" "$logs/focus_$name.log"
done
stamp "SDPA"
( cd bench/gpu && timeout 120 python3 sdpa_chunked_shapes.py ) > "$logs/sdpa.log" 2>&1; grep "^|\|torch" "$logs/sdpa.log"
for name in ${TESTS:-DR}; do
  eval "t=\${bin_test_gpu_chunked_cuda_$name:-}"
  [ -x "$t" ] || continue
  stamp "scan tests $name (quick, 12 shards)"
  for i in $(seq 0 11); do timeout 150 "$t" --quick --kinds scan --shard "$i/12" > "$logs/tests_${name}_$i.log" 2>&1; echo "exit $?" >> "$logs/tests_${name}_$i.log" & done
  wait
  echo "$name: $(cat "$logs"/tests_${name}_*.log | grep -c '^ok ') ok, $(cat "$logs"/tests_${name}_*.log | grep -c '^FAIL') FAIL"
done
stamp done
