#!/usr/bin/env bash
# Session 11, call E: scan_den beside scan_seg_inverse (GateParams::side_with_inverse) timed by
# bench_chunked --focus (its last two columns), twice; the quick scan tests; SDPA. Logs as one tarball.
set -u
cd build-call && tar xf s11e.tar.xz && cd ..
OUT=${OUT:-/tmp/out} PREBUILT=build-call/s11e BUNDLE=1 bash bench/gpu/run_scan_focus.sh 2>&1 | grep -v "^san_"
build-call/s11e/bench_chunked_L512 --focus 2>&1 | grep "^| 1 \|^| 8 "
