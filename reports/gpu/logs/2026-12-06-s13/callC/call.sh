#!/usr/bin/env bash
# Session 13, call C: N2 = the working tree (call B's N plus scan_seg_inverse's solve by row blocks of four
# with L^T mirrored: pair loads) verified and measured: every scan case, sanitizers, focus against L512
# (60864c3), SDPA (run_scan_focus.sh); the quick scan lines against L512's (call A); focus again, alternating.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s13a.tar.xz && tar xf s13c.tar.xz && cp s13a/bench_chunked_L512 s13c/ && cd ..
B=build-call/s13c
OUT=$O PREBUILT=$B VARIANTS="L512= N2=" TESTS="N2" FULL=1 BUNDLE=1 bash bench/gpu/run_scan_focus.sh 2>&1 | grep -v "^san_" | tee "$O/run.log"
for i in $(seq 0 11); do timeout 120 $B/test_gpu_chunked_cuda_N2 --quick --kinds scan --shard $i/12 > "$O/q_$i.log" 2>&1 & done; wait
cat "$O"/q_*.log > "$O/quick_N2.log"; rm -f "$O"/q_*.log
echo "N2 quick: $(grep -c '^ok ' "$O/quick_N2.log") ok, $(grep -c '^FAIL' "$O/quick_N2.log") FAIL; layouts: $(grep -c "w layouts same bits: yes" "$O/quick_N2.log") yes"
if cmp -s <(grep '^ok \|^FAIL' reports/gpu/logs/2026-12-06-s13/callA/quick_L512.log) <(grep '^ok \|^FAIL' "$O/quick_N2.log" | sed "s/ | steps' w layouts same bits: yes//"); then echo "N2 quick lines EQUAL L512's"; else echo "N2 quick lines DIFFER"; diff <(grep '^ok \|^FAIL' reports/gpu/logs/2026-12-06-s13/callA/quick_L512.log) <(grep '^ok \|^FAIL' "$O/quick_N2.log") | head -6 | cut -c1-250; fi
for V in N2 L512 N2; do echo "$V focus again"; $B/bench_chunked_$V --focus 2>&1 | grep "^| 1 \|^| 8 "; done
