#!/usr/bin/env bash
# Session 12, call A: HEAD 43a54de (the scan's refusal as core::StreamRefused) verified on a device:
# every scan case, sanitizers, focus, SDPA (run_scan_focus.sh on the prebuilt L512); and U2 (the float
# steps unrolled by two, c and e after the z exchange: reports/gpu/patches/2026-12-06-steps-unroll2-...):
# focus and the quick scan tests, whose lines must equal L512's quick lines if the bits are the same.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s12a.tar.xz && cd ..
B=build-call/s12a
OUT=$O PREBUILT=$B VARIANTS="L512= U2=" TESTS="L512" FULL=1 BUNDLE=1 bash bench/gpu/run_scan_focus.sh 2>&1 | grep -v "^san_" | tee "$O/run.log"
for V in L512 U2; do
  for i in $(seq 0 11); do timeout 90 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > "$O/q_${V}_$i.log" 2>&1 & done; wait
  cat "$O"/q_${V}_*.log > "$O/quick_$V.log"; rm -f "$O"/q_${V}_*.log
  echo "$V quick: $(grep -c '^ok ' "$O/quick_$V.log") ok, $(grep -c '^FAIL' "$O/quick_$V.log") FAIL"
done
if cmp -s <(grep '^ok \|^FAIL' "$O/quick_L512.log") <(grep '^ok \|^FAIL' "$O/quick_U2.log"); then echo "U2 quick lines EQUAL L512's"; else echo "U2 quick lines DIFFER"; diff <(grep '^ok \|^FAIL' "$O/quick_L512.log") <(grep '^ok \|^FAIL' "$O/quick_U2.log") | head -6 | cut -c1-250; fi
for r in 1 2; do echo "U2 focus again $r"; $B/bench_chunked_U2 --focus 2>&1 | grep "^| 1 \|^| 8 "; echo "L512 again $r"; $B/bench_chunked_L512 --focus 2>&1 | grep "^| 1 \|^| 8 "; done
tar cf "$O/quick.tar" -C "$O" quick_L512.log quick_U2.log && rm -f "$O"/quick_*.log
