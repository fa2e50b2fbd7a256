#!/usr/bin/env bash
# Session 12, call C: programmatic dependent launch (PD: gpu/cuda/pdl.cuh, every scan kernel starts with
# griddepcontrol.launch_dependents + wait; launches on the stage stream by cudaLaunchKernelEx) against
# L512 (HEAD ce830cb): focus alternating, quick tests (lines compared with call A), sanitizers, every case.

set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s12c.tar.xz && cd ..
B=build-call/s12c
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } | tee "$O/env.txt"
for r in 1 2; do for V in PD L512; do
  stamp "focus $V ($r)"; timeout 60 $B/bench_chunked_$V --focus > "$O/focus_${V}_$r.log" 2>&1; echo "exit $?" >> "$O/focus_${V}_$r.log"
  grep "^| 1 \|^| 8 \|^exit" "$O/focus_${V}_$r.log"
done; done
stamp "quick scan tests PD"
for i in $(seq 0 11); do timeout 90 $B/test_gpu_chunked_cuda_PD --quick --kinds scan --shard $i/12 > "$O/q_$i.log" 2>&1; echo "exit $?" >> "$O/q_$i.log" & done; wait
cat "$O"/q_*.log > "$O/quick_PD.log"; rm -f "$O"/q_*.log
echo "PD quick: $(grep -c '^ok ' "$O/quick_PD.log") ok, $(grep -c '^FAIL' "$O/quick_PD.log") FAIL; exits: $(grep '^exit' "$O/quick_PD.log" | sort | uniq -c | tr '\n' ' ')"
grep "^FAIL" "$O/quick_PD.log" | head -4 | cut -c1-400
stamp "compute-sanitizer on PD"
for job in memcheck:0 racecheck:3 initcheck:7; do tool=${job%:*}; i=${job#*:}
  timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 $B/test_gpu_chunked_cuda_PD --quick --kinds scan --shard "$i/12" > "$O/san_${tool}_$i.log" 2>&1 & done; wait
for f in "$O"/san_*.log; do echo "$(basename "$f" .log): $(grep -c '^ok ' "$f") ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$f" | tail -1)"; done
if ! grep -q "^FAIL" "$O/quick_PD.log"; then
  stamp "every scan case of PD"
  for i in $(seq 0 11); do timeout 280 $B/test_gpu_chunked_cuda_PD --kinds scan --shard $i/12 > "$O/f_$i.log" 2>&1; echo "exit $?" >> "$O/f_$i.log" & done; wait
  cat "$O"/f_*.log > "$O/tests_PD.log"; rm -f "$O"/f_*.log
  echo "PD all: $(grep -c '^ok ' "$O/tests_PD.log") ok, $(grep -c '^FAIL' "$O/tests_PD.log") FAIL; exits: $(grep '^exit' "$O/tests_PD.log" | sort | uniq -c | tr '\n' ' ')"
  grep "^FAIL" "$O/tests_PD.log" | head -4 | cut -c1-400
fi
stamp done
cd "$O" && tar cf logs.tar --exclude=logs.tar . && ls -la logs.tar
cd - > /dev/null
if cmp -s <(grep '^ok \|^FAIL' "$O/quick_PD.log" | sort) <(grep '^ok \|^FAIL' reports/gpu/logs/2026-12-06-s12/callA/quick_L512.log | sort); then echo "PD quick lines EQUAL call A's L512"; else echo "PD quick lines DIFFER from call A's"; fi
