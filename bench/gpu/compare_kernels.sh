#!/usr/bin/env bash
# Times the fused kernel of this tree against another version of
# gpu/cuda/fused_kernel.cuh (say the previous one, `git show REV:gpu/cuda/fused_kernel.cuh`)
# on the same machine, in one call: builds bench_gpu for both (the other in a copy
# of the tree with that header swapped in), then runs both on the same shapes.
#   bench/gpu/compare_kernels.sh [--build | --run] OTHER.cuh [bench_gpu arguments...]
#     --build  only build both (e.g. in the background while something else runs)
#     --run    only run both (after --build)
# The other header must keep the launcher's interface (VLA_FUSED_INSTANCES, used by fused_<kind>.cu;
# headers before v4b define launch_prec and kernel_info_prec instead: swap in their fused_<kind>.cu too).
set -uo pipefail
cd "$(dirname "$0")/../.."
mode=all
case "${1:-}" in --build) mode=build; shift ;; --run) mode=run; shift ;; esac
other=${1:-}
[ -f "$other" ] || { echo "compare_kernels: '$other' is not a file (the other fused_kernel.cuh)" >&2; exit 2; }
shift
root=${CMP_DIR:-/tmp/vla-compare}
build_one() {  # $1: name, $2: source tree
  cmake -S "$2/gpu/standalone" -B "$root/build-$1" -DCMAKE_BUILD_TYPE=Release > "$root/build-$1.log" 2>&1 &&
    cmake --build "$root/build-$1" -j "$(nproc)" --target bench_gpu >> "$root/build-$1.log" 2>&1 ||
    { tail -30 "$root/build-$1.log"; echo "compare_kernels: build of $1 failed" >&2; return 1; }
}
if [ "$mode" != run ]; then
  mkdir -p "$root"
  rm -rf "$root/tree-other"
  mkdir -p "$root/tree-other"
  for d in core gpu tests bench reference cmake; do [ -d "$d" ] && cp -r "$d" "$root/tree-other/"; done
  cp "$other" "$root/tree-other/gpu/cuda/fused_kernel.cuh"
  build_one this "$PWD" & a=$!
  build_one other "$root/tree-other" & b=$!
  wait $a || exit 1
  wait $b || exit 1
fi
if [ "$mode" != build ]; then
  for name in this other; do
    echo "## $name kernel ($( [ $name = this ] && echo gpu/cuda/fused_kernel.cuh || echo "$other"))"
    timeout 120 "$root/build-$name/bin/bench_gpu" "$@" | grep -E "^\||registers|D=" || echo "bench_gpu ($name): exit $?"
  done
fi
