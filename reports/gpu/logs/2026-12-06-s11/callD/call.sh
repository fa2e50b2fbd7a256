#!/usr/bin/env bash
# Session 11, call D: segments of 288, 320 and 384 steps (one wave of the float steps' one-warp blocks at
# B H = 16, T = 16,384: at most 7 blocks an SM, 924 a wave) against the shipped 512, bench_chunked --focus,
# the shipped build first and last (its spread), then SDPA. One tarball of logs comes back.
set -u
O=${OUT:-/tmp/out}; L=/tmp/logs; mkdir -p "$O" $L
cd build-call && tar xf s11d.tar.xz && cd ..
B=build-call/s11d
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } | tee $L/env.txt
for V in L512 L288 L320 L384 L512; do
  echo "focus $V"
  timeout 60 $B/bench_chunked_$V --focus >> $L/focus_$V.log 2>&1; echo "exit $?" >> $L/focus_$V.log
  tail -5 $L/focus_$V.log | grep "^| 1 \|^| 8 \|^exit"
done
( cd bench/gpu && timeout 60 python3 sdpa_chunked_shapes.py ) > $L/sdpa.log 2>&1; grep "^|\|torch" $L/sdpa.log
tar cf "$O/logs.tar" -C $L .
