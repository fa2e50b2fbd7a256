#!/usr/bin/env bash
# Where kernels v5's and v6's steps go (reports/gpu/FLOOR.md, "Kernel v5: where the
# step goes", "Kernel v6"), in one short device call: v5, v6a and v6 timed and
# bit-compared, per-role clocks of each and v6's push variants (bench_cluster_roles),
# and the check that v5's instances in the working tree have REV's SASS.
#   bench/gpu/run_cluster_roles.sh cubins DIR [REV]   (here, nvcc only: DIR/old.cubin from
#       git REV (default HEAD~) and DIR/new.cubin from the working tree, the cluster
#       kernel's shipped instances; carry DIR to the device)
#   bench/gpu/run_cluster_roles.sh [run]              (device: environment BIN=prebuilt
#       bench_cluster_roles, else built here; SASS_DIR=DIR compares the cubins;
#       DS=64,32,128 head dimensions; writes under $OUT)
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

O=${OUT:-/tmp/vla-cluster-roles}
mkdir -p "$O"
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
st done
