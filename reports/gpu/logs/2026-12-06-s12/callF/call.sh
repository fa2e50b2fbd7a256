#!/usr/bin/env bash
# Session 12, call F: scan_seg_inverse without its D x D buffer (solve_identity) at four blocks an SM (SI)
# against L512 (HEAD ce830cb): focus alternating (three each), the quick scan tests (lines compared with
# call A's), memcheck and racecheck on a quick shard.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s12f.tar.xz && cd ..
B=build-call/s12f
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } | tee "$O/env.txt"
for r in 1 2 3; do for V in SI L512; do
  stamp "focus $V ($r)"; timeout 60 $B/bench_chunked_$V --focus > "$O/focus_${V}_$r.log" 2>&1; echo "exit $?" >> "$O/focus_${V}_$r.log"
  grep "^| 1 \|^| 8 \|^exit" "$O/focus_${V}_$r.log"
done; done
stamp "quick scan tests SI"
for i in $(seq 0 11); do timeout 90 $B/test_gpu_chunked_cuda_SI --quick --kinds scan --shard $i/12 > "$O/q_$i.log" 2>&1; echo "exit $?" >> "$O/q_$i.log" & done; wait
cat "$O"/q_*.log > "$O/quick_SI.log"; rm -f "$O"/q_*.log
echo "SI quick: $(grep -c '^ok ' "$O/quick_SI.log") ok, $(grep -c '^FAIL' "$O/quick_SI.log") FAIL"
if cmp -s <(grep '^ok \|^FAIL' "$O/quick_SI.log" | sort) <(grep '^ok \|^FAIL' reports/gpu/logs/2026-12-06-s12/callA/quick_L512.log | sort); then echo "SI quick lines EQUAL call A's L512"; else echo "SI quick lines DIFFER from call A's"; fi
for job in memcheck:0 racecheck:3; do tool=${job%:*}; i=${job#*:}
  timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 9 $B/test_gpu_chunked_cuda_SI --quick --kinds scan --shard "$i/12" > "$O/san_${tool}_$i.log" 2>&1 & done; wait
for f in "$O"/san_*.log; do echo "$(basename "$f" .log): $(grep -c '^ok ' "$f") ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$f" | tail -1)"; done
stamp done
cd "$O" && tar cf logs.tar --exclude=logs.tar . && ls -la logs.tar
