#!/usr/bin/env bash
# Session 12, call B: the readout as FP64 tensor-core products (RP: -DVLA_SCAN_READOUT_PRODUCTS=1,
# gpu/cuda/scan_readout_dmma.cuh, ref::ScanReadoutPolicy::products; docs/CHUNKED.md 8.28) against the
# tree's replay readout (L512 = HEAD + U2): bench_chunked --focus alternating, the quick scan tests of RP,
# compute-sanitizer on RP, then every scan case of RP.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s12b.tar.xz && cd ..
B=build-call/s12b
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } | tee "$O/env.txt"
for r in 1 2; do for V in RP L512; do
  stamp "focus $V ($r)"; timeout 60 $B/bench_chunked_$V --focus > "$O/focus_${V}_$r.log" 2>&1; echo "exit $?" >> "$O/focus_${V}_$r.log"
  grep "^| 1 \|^| 8 \|^exit" "$O/focus_${V}_$r.log"
done; done
stamp "quick scan tests RP"
for i in $(seq 0 11); do timeout 90 $B/test_gpu_chunked_cuda_RP --quick --kinds scan --shard $i/12 > "$O/q_$i.log" 2>&1; echo "exit $?" >> "$O/q_$i.log" & done; wait
cat "$O"/q_*.log > "$O/quick_RP.log"; rm -f "$O"/q_*.log
echo "RP quick: $(grep -c '^ok ' "$O/quick_RP.log") ok, $(grep -c '^FAIL' "$O/quick_RP.log") FAIL; exits: $(grep '^exit' "$O/quick_RP.log" | sort | uniq -c | tr '\n' ' ')"
grep "^FAIL" "$O/quick_RP.log" | head -4 | cut -c1-400
stamp "compute-sanitizer on RP"
for job in memcheck:0 racecheck:3 initcheck:7; do tool=${job%:*}; i=${job#*:}
  timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 $B/test_gpu_chunked_cuda_RP --quick --kinds scan --shard "$i/12" > "$O/san_${tool}_$i.log" 2>&1 & done; wait
for f in "$O"/san_*.log; do echo "$(basename "$f" .log): $(grep -c '^ok ' "$f") ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$f" | tail -1)"; done
if ! grep -q "^FAIL" "$O/quick_RP.log"; then
  stamp "every scan case of RP"
  for i in $(seq 0 11); do timeout 280 $B/test_gpu_chunked_cuda_RP --kinds scan --shard $i/12 > "$O/f_$i.log" 2>&1; echo "exit $?" >> "$O/f_$i.log" & done; wait
  cat "$O"/f_*.log > "$O/tests_RP.log"; rm -f "$O"/f_*.log
  echo "RP all: $(grep -c '^ok ' "$O/tests_RP.log") ok, $(grep -c '^FAIL' "$O/tests_RP.log") FAIL; exits: $(grep '^exit' "$O/tests_RP.log" | sort | uniq -c | tr '\n' ' ')"
  grep "^FAIL" "$O/tests_RP.log" | head -4 | cut -c1-400
fi
stamp done
cd "$O" && tar cf logs.tar --exclude=logs.tar . && ls -la logs.tar
