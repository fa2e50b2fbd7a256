#!/usr/bin/env bash
# The scan form at issue 8's target shapes (docs/CHUNKED.md 8.26, 8.27): for each
# variant, gpu/standalone built with its macros, then `bench_chunked --focus`
# (chunked-scan-bf16, C = 32: the whole scan with and without the norms, every
# kernel of both stages apart) alone on the GPU; causal bf16 SDPA at
# the same shapes; issue 8's table of the first variant against SDPA, with its verdicts
# (bench/gpu/issue8_table.py, $OUT/issue8_table.md); the scan kinds' quick CUDA tests of the variants named in TESTS
# (12 shards at once) and compute-sanitizer (memcheck on two shards, racecheck and
# initcheck on one) on the first of them.
#   OUT=<dir> bench/gpu/run_scan_focus.sh
# Environment: VARIANTS (NAME=MACROS pairs separated by spaces, the macros
# comma-separated; default "L512=", the shipped build; 8.26's variants were e.g.
# "L256=VLA_SCAN_SEGMENT_STEPS=256 V7=VLA_SCAN_PASS_V7"), TESTS (variant names whose
# CUDA tests run, default "L512"; FULL=1: every case, else --quick), PREBUILT (a folder holding bench_chunked_NAME and
# test_gpu_chunked_cuda_NAME, built on another machine with nvcc), BUNDLE=1 (the logs as one
# file, $OUT/scan-focus-logs.tar, for a runner that returns few files), BUILD_ONLY=1 (build the
# variants into $OUT/bin and stop: a PREBUILT folder made where nvcc is but no GPU).
# A variant may be a patch: NAME=patch:FILE builds a copy of the tree (without its build folders) with
# FILE applied (patch -p1), e.g. the prepared patches in reports/gpu/patches/; NAME=patch:FILE1+FILE2 applies
# several in that order (a patch prepared on top of another); NAME=MACROS,patch:FILE builds that copy with the
# macros too. TEST_TIMEOUT and SAN_TIMEOUT (seconds, default 300 and 150): each test shard's
# and each sanitizer job's limit.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-scan-focus-logs}
mkdir -p "$out"
logs=$out
[ -n "${BUNDLE:-}" ] && [ -z "${BUILD_ONLY:-}" ] && logs=$(mktemp -d)
variants=${VARIANTS:-"L512="}
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } > "$logs/env.txt" 2>&1
cat "$logs/env.txt"
copies=()  # the patched trees, removed on exit (their builds stay in build-focus-NAME)
trap 'rm -rf "${copies[@]}"' EXIT
for v in $variants; do
  name=${v%%=*}; macros=${v#*=}; pfile=
  if [[ "$macros" == *patch:* ]]; then pfile=${macros#*patch:}; macros=${macros%patch:*}; macros=${macros%,}; fi
  b=$PWD/build-focus-$name
  src=$PWD  # the tree the variant builds from: this one, or a patched copy made once (where a binary is built)
  label=${macros:-shipped}${pfile:+ + $pfile}
  defs=()  # the variant's macros for the C++ and the CUDA compiles alike
  if [ -n "$macros" ]; then
    flags=$(echo "$macros" | sed 's/^/-D/; s/,/ -D/g')
    defs=("-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_CUDA_FLAGS=$flags")
  fi
  for tg in bench_chunked test_gpu_chunked_cuda; do
    bin="${PREBUILT:-/nonexistent}/${tg}_$name"
    if [ ! -x "$bin" ]; then
      [ "$tg" = test_gpu_chunked_cuda ] && [[ " ${TESTS:-L512} " != *" $name "* ]] && continue
      if [[ -n "$pfile" && "$src" == "$PWD" ]]; then
        copy=$(mktemp -d); copies+=("$copy"); src=$copy/tree
        mkdir -p "$src"
        tar cf - --exclude='./build*' --exclude=./.git --exclude=./reports/gpu/logs . | tar xf - -C "$src"
        IFS=+ read -ra pfiles <<< "$pfile"
        for pf in "${pfiles[@]}"; do
          if ! patch -d "$src" -p1 --batch --quiet < "$pf"; then echo "variant $name: $pf does not apply"; exit 1; fi
        done
      fi
      stamp "build $tg ($name: $label)"
      if ! { cmake -S "$src/gpu/standalone" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${defs[@]}" \
               -DVLA_EIGEN_DIR="${VLA_EIGEN_DIR:-/usr/include/eigen3}" && cmake --build "$b" -j "$(nproc)" --target "$tg"; } > "$logs/build_${name}_$tg.log" 2>&1; then
        tail -30 "$logs/build_${name}_$tg.log"; echo "build failed"; exit 1
      fi
      mkdir -p "$logs/bin" && cp "$b/bin/$tg" "$logs/bin/${tg}_$name" && bin="$logs/bin/${tg}_$name"
    fi
    eval "bin_${tg}_$name=\$bin"
  done
done
if [ -n "${BUILD_ONLY:-}" ]; then stamp "built: $(ls "$logs/bin" 2> /dev/null | tr '\n' ' ')"; exit 0; fi
for v in $variants; do
  name=${v%%=*}
  eval "b=\$bin_bench_chunked_$name"
  stamp "focus $name"
  timeout 120 "$b" --focus > "$logs/focus_$name.log" 2>&1; echo "exit $?" >> "$logs/focus_$name.log"
  grep "^| 1 \|^| 8 \|^exit" "$logs/focus_$name.log"
done
stamp "SDPA"
( cd bench/gpu && timeout 120 python3 sdpa_chunked_shapes.py ) > "$logs/sdpa.log" 2>&1; grep "^|\|torch" "$logs/sdpa.log"
first_variant=${variants%% *}; first_variant=${first_variant%%=*}
stamp "issue 8's table ($first_variant against SDPA; bench/gpu/issue8_table.py)"
if python3 bench/gpu/issue8_table.py --focus "$logs/focus_$first_variant.log" --sdpa "$logs/sdpa.log" > "$logs/issue8_table.md.part"; then
  mv "$logs/issue8_table.md.part" "$logs/issue8_table.md" && cat "$logs/issue8_table.md"
else
  rm -f "$logs/issue8_table.md.part"  # the tool said which log was wrong; no table from it
fi
for name in ${TESTS:-L512}; do
  eval "t=\${bin_test_gpu_chunked_cuda_$name:-}"
  [ -x "$t" ] || continue
  qarg=--quick; [ -n "${FULL:-}" ] && qarg=
  stamp "scan tests $name (${qarg:-every case}, 12 shards)"
  for i in $(seq 0 11); do timeout "${TEST_TIMEOUT:-300}" "$t" $qarg --kinds scan --shard "$i/12" > "$logs/tests_${name}_$i.log" 2>&1; echo "exit $?" >> "$logs/tests_${name}_$i.log" & done
  wait
  cat "$logs"/tests_${name}_*.log > "$logs/tests_$name.log" && rm -f "$logs"/tests_${name}_*.log
  echo "$name: $(grep -c '^ok ' "$logs/tests_$name.log") ok, $(grep -c '^FAIL' "$logs/tests_$name.log") FAIL, exits: $(grep '^exit' "$logs/tests_$name.log" | sort | uniq -c | tr '\n' ' ')"
  grep "^FAIL" "$logs/tests_$name.log" | head -3 | cut -c1-300
done
first=${TESTS:-L512}; first=${first%% *}
eval "t=\${bin_test_gpu_chunked_cuda_$first:-}"
if [ -x "$t" ] && command -v compute-sanitizer > /dev/null; then
  stamp "compute-sanitizer on $first: memcheck shards 0, 5; racecheck 3; initcheck 7 (of 12)"
  for job in memcheck:0 memcheck:5 racecheck:3 initcheck:7; do
    tool=${job%:*}; i=${job#*:}
    timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 9 "$t" --quick --kinds scan --shard "$i/12" > "$logs/san_${tool}_$i.log" 2>&1 &
  done
  wait
  for f in "$logs"/san_*.log; do echo "$(basename "$f" .log): $(grep -c '^ok ' "$f") ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$f" | tail -1)"; done
fi
stamp done
if [ -n "${BUNDLE:-}" ]; then
  tar cf "$out/scan-focus-logs.tar" -C "$logs" --exclude=bin . && echo "logs: $out/scan-focus-logs.tar"
fi
