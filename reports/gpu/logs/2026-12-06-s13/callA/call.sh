#!/usr/bin/env bash
# Session 13, call A: HEAD 60864c3 verified on a device (every scan case, sanitizers, focus, SDPA:
# run_scan_focus.sh on the prebuilt L512); WU (reports/gpu/patches/2026-12-06-steps-w-over-u.patch) and
# WU256 (the same with segments of 256 steps): focus and the quick scan tests (WU's lines must equal L512's).
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s13a.tar.xz && cd ..
B=build-call/s13a
OUT=$O PREBUILT=$B VARIANTS="L512= WU= WU256=" TESTS="L512" FULL=1 BUNDLE=1 bash bench/gpu/run_scan_focus.sh 2>&1 | grep -v "^san_" | tee "$O/run.log"
for V in L512 WU WU256; do
  for i in $(seq 0 11); do timeout 90 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > "$O/q_${V}_$i.log" 2>&1 & done; wait
  cat "$O"/q_${V}_*.log > "$O/quick_$V.log"; rm -f "$O"/q_${V}_*.log
  echo "$V quick: $(grep -c '^ok ' "$O/quick_$V.log") ok, $(grep -c '^FAIL' "$O/quick_$V.log") FAIL"
done
for V in WU; do
if cmp -s <(grep '^ok \|^FAIL' "$O/quick_L512.log") <(grep '^ok \|^FAIL' "$O/quick_$V.log"); then echo "$V quick lines EQUAL L512's"; else echo "$V quick lines DIFFER"; diff <(grep '^ok \|^FAIL' "$O/quick_L512.log") <(grep '^ok \|^FAIL' "$O/quick_$V.log") | head -6 | cut -c1-250; fi
done
for V in WU WU256 L512; do echo "$V focus again"; $B/bench_chunked_$V --focus 2>&1 | grep "^| 1 \|^| 8 "; done
tar cf "$O/quick.tar" -C "$O" quick_L512.log quick_WU.log quick_WU256.log && rm -f "$O"/quick_*.log
