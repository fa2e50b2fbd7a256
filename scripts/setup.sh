#!/usr/bin/env bash
# One-step set-up on a fresh Debian machine (as root): install what is missing
# from Debian's archive, configure and build. Idempotent; safe to rerun.
#   BUILD_DIR   build folder (default: build)
#   VLA_JOBS    parallel build jobs (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(cmake g++ make libboost-dev libmpfr-dev libmpfi-dev libgmp-dev libeigen3-dev librapidcheck-dev
      googletest libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev libcli11-dev nlohmann-json3-dev gnuplot-nox
      clang libclang-rt-14-dev python3)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${BUILD_DIR:-build}
jobs=${VLA_JOBS:-$(nproc)}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$jobs"
