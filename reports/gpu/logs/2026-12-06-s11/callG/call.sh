#!/usr/bin/env bash
# Session 11, call G: the float steps with step s's scalars, z and c before the sweep (8.28):
# bench_chunked --focus (twice), the quick scan tests (their gate distances against call E's, same
# seeds: equal if the bits are), sanitizers, SDPA. Logs as one tarball.
set -u
cd build-call && tar xf s11g.tar.xz && cd ..
OUT=${OUT:-/tmp/out} PREBUILT=build-call/s11g BUNDLE=1 bash bench/gpu/run_scan_focus.sh 2>&1 | grep -v "^san_"
build-call/s11g/bench_chunked_L512 --focus 2>&1 | grep "^| 1 \|^| 8 "
