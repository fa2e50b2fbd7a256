#!/usr/bin/env bash
# Kernels v5 to v9 of the cluster layout side by side (reports/gpu/FLOOR.md, "Kernel v5:
# where the step goes", "Kernel v6" .. "Kernel v9"), in one device call: timed and bit-compared
# (bench_cluster_roles: fp32 at each D of DS, bf16 at D = 64), per-role clocks at D = 64, and
# optionally the CUDA tests, the sanitizers and Nsight Compute.
#   bench/gpu/run_cluster_roles.sh cubins DIR [REV]   (here, nvcc only: DIR/old.cubin from
#       git REV (default HEAD~) and DIR/new.cubin from the working tree, the cluster
#       kernel's v5 instances; carry DIR to the device)
#   bench/gpu/run_cluster_roles.sh [run]              (device: environment BIN=prebuilt
#       bench_cluster_roles, else built here; SASS_DIR=DIR compares the cubins;
#       DS=64,32,128 head dimensions; writes under $OUT. TESTS=a prebuilt test_gpu_cuda:
#       then --quick, and if it passes and the bench's bits agree, the full tests in
#       SHARDS (16) cost-balanced shards of (case, kind) runs, each under SHARD_TIMEOUT
#       (240 s), at once with compute-sanitizer's memcheck, racecheck and initcheck on
#       --quick; else the same with FALLBACK=another test_gpu_cuda, where given.
#       NCU=variant: Nsight Compute's warp states and per-instruction sampling of one
#       launch of that variant at D = 64, T = 2048, last)
set -u
cd "$(dirname "$0")/../.."
flags=(-std=c++20 -arch=sm_90 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false -DVLA_HAVE_CUDA=1)
if [ "${1:-run}" = cubins ]; then
  dir=$(realpath -m "$2") rev=${3:-HEAD~}
  mkdir -p "$dir/old/gpu/cuda"
  cp gpu/cuda/*.cuh "$dir/old/gpu/cuda/"
  git show "$rev:gpu/cuda/cluster_kernel.cuh" > "$dir/old/gpu/cuda/cluster_kernel.cuh" || exit 1
  # old: REV's v5 instances; new: the working tree's v5 instances (FusedTraitsCluster<D, 2, false>);
  # v6: the working tree's shipped instances (FusedTraitsClusterShipped<D>), for their resources.
  for v in old new v6; do
    inc=$([ $v = old ] && echo "$dir/old/gpu/cuda" || echo "$PWD/gpu/cuda")
    tr=$([ $v = v6 ] && echo "FusedTraitsClusterShipped<%d>" || { [ $v = new ] && echo "FusedTraitsCluster<%d, 2, false>" || echo "FusedTraitsCluster<%d>"; })
    { echo "#include \"$inc/fused_kernel.cuh\""
      echo "namespace vla::gpu::detail {"
      for d in 32 64 128; do echo "template void launch_cluster<$(printf "$tr" $d), PrecFp32>(const FusedParams&, cudaStream_t);"; done
      echo "template void launch_cluster<$(printf "$tr" 64), PrecBf16>(const FusedParams&, cudaStream_t);"
      echo "}"; } > "$dir/tu_$v.cu"
    nvcc "${flags[@]}" -Igpu/include -Icore/include -cubin -o "$dir/$v.cubin" "$dir/tu_$v.cu" || exit 1
  done
  echo "cubins in $dir (old: $rev)"
  exit 0
fi

# Logs in a folder of their own, packed at the end into $OUT/logs.tgz (few files come back).
O=$(mktemp -d /tmp/vla-cluster-roles.XXXXXX)
R=${OUT:-/tmp/vla-cluster-roles}
mkdir -p "$R"
t0=$SECONDS
st() { echo "[$((SECONDS - t0)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv,noheader
nvcc --version | tail -1
bin=${BIN:-}
if [ -z "$bin" ]; then
  st build
  build=${BUILD_DIR:-build-gpu-standalone}
  if ! { cmake -S gpu/standalone -B "$build" -DCMAKE_BUILD_TYPE=Release &&
         timeout "${BUILD_TIMEOUT:-240}" cmake --build "$build" -j "$(nproc)" --target bench_cluster_roles; } > "$O/build.log" 2>&1; then
    tail -30 "$O/build.log"
    exit 1
  fi
  bin=$build/bin/bench_cluster_roles
fi
st bench
timeout "${RUN_TIMEOUT:-120}" "$bin" --d "${DS:-64,32,128}" --csv "$O/steps.csv" > "$O/roles.log" 2>&1
echo "exit $?" >> "$O/roles.log"
cat "$O/roles.log"
gzip -f "$O/steps.csv"
if [ -n "${SASS_DIR:-}" ]; then
  st sass
  tmp=$(mktemp -d)
  # Instructions per kernel (names without the probe argument), then whether the
  # instruction text is the same once names and addresses are dropped.
  for v in old new; do
    cuobjdump -sass "$SASS_DIR/$v.cubin" | sed 's/NS1_14ClusterNoProbeE//; s/ELi2ELb0ELb0EE/ELi2EE/g; s/_INTERNAL_[0-9a-f_]*tu_\(old\|new\)_cu_[0-9a-f_]*//g' > "$tmp/sass_$v.txt"
    awk '/Function :/ {f = $3} /^ *\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// {n[f]++} END {for (f in n) print n[f], f}' "$tmp/sass_$v.txt" | sort -k2 > "$tmp/sass_count_$v.txt"
  done
  paste "$tmp/sass_count_old.txt" "$tmp/sass_count_new.txt"
  if diff <(sed 's#/\*[0-9a-f]\{4\}\*/##; s#/\* 0x[0-9a-f]* \*/##' "$tmp/sass_old.txt") <(sed 's#/\*[0-9a-f]\{4\}\*/##; s#/\* 0x[0-9a-f]* \*/##' "$tmp/sass_new.txt") > "$tmp/sass_diff.txt"; then
    echo "SASS of the shipped cluster kernels: identical (old vs new, names aside)"
  else
    echo "SASS differs: $(wc -l < "$tmp/sass_diff.txt") diff lines"; head -20 "$tmp/sass_diff.txt"
  fi
fi
# The CUDA tests of a test_gpu_cuda (its shipped layout): full shards and sanitizers at once.
full_tests() {
  local tb=$1 n=${SHARDS:-16}
  st "full tests of $tb ($n shards, ${SHARD_TIMEOUT:-240} s each) and the three sanitizers on --quick"
  for tool in memcheck racecheck initcheck; do
    ( s0=$SECONDS; timeout "${SAN_TIMEOUT:-240}" compute-sanitizer --tool $tool --error-exitcode 3 "$tb" --quick > "$O/$tool.log" 2>&1
      echo "exit status: $? after $((SECONDS - s0)) s" >> "$O/$tool.log" ) &
  done
  for i in $(seq 0 $((n - 1))); do
    ( s0=$SECONDS; timeout "${SHARD_TIMEOUT:-240}" "$tb" --shard "$i/$n" > "$O/shard_$i.log" 2>&1
      echo "exit status: $? after $((SECONDS - s0)) s" >> "$O/shard_$i.log" ) &
  done
  wait
  local runs=0 bad=0 done=0
  for i in $(seq 0 $((n - 1))); do
    runs=$((runs + $(grep -c -E "^(ok|FAIL) " "$O/shard_$i.log")))
    bad=$((bad + $(grep -c -E "^FAIL " "$O/shard_$i.log")))
    grep -q "^PASSED: " "$O/shard_$i.log" && done=$((done + 1))
    echo "shard $i: $(grep -E "^(PASSED|FAILED): " "$O/shard_$i.log") ($(tail -1 "$O/shard_$i.log"))"
  done
  echo "FULL TESTS: $done of $n shards PASSED; $bad FAIL lines of $runs runs (cluster: $(cat "$O"/shard_*.log | grep -c -E '^(ok|FAIL) .* cluster '))"
  grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status|kernel runs failed" "$O"/{memcheck,racecheck,initcheck}.log
}
if [ -n "${TESTS:-}" ]; then
  st "test_gpu_cuda --quick ($TESTS)"
  timeout 120 "$TESTS" --quick > "$O/quick.log" 2>&1
  qs=$?
  tail -1 "$O/quick.log"
  if [ $qs = 0 ] && grep -q "^bits: every variant equals v5" "$O/roles.log" && ! grep -q "MISMATCH" "$O/roles.log"; then
    full_tests "$TESTS"
  elif [ -n "${FALLBACK:-}" ]; then
    echo "primary not tested in full (quick exit $qs or bits differ): the fallback"
    full_tests "$FALLBACK"
  fi
fi
if [ -n "${NCU:-}" ]; then
  st "ncu ($NCU, D = 64, T = 2048)"
  timeout "${NCU_TIMEOUT:-120}" ncu --kernel-name regex:vla_fused_cluster_kernel --launch-count 1 --section WarpStateStats \
    --section SourceCounters --section SchedulerStats --section LaunchStats -f -o "$O/ncu_$NCU" "$bin" --only "$NCU" --t 2048 > "$O/ncu.log" 2>&1
  echo "ncu exit $?" >> "$O/ncu.log"
  tail -3 "$O/ncu.log"
  ncu --import "$O/ncu_$NCU.ncu-rep" --page details > "$O/ncu_details.txt" 2>&1
  ncu --import "$O/ncu_$NCU.ncu-rep" --page source --csv --print-source sass > "$O/ncu_source_sass.csv" 2>&1
  grep -E "Warp Cycles Per Issued|Stall|No Eligible|Issued Warp|Active Warps" "$O/ncu_details.txt" | head -40
fi
tar -czf "$R/logs.tgz" -C "$O" --exclude '*.ncu-rep' .
cp "$O"/*.ncu-rep "$O/roles.log" "$R/" 2>/dev/null
st done
