#!/usr/bin/env bash
# Session 12, call E (experiment): the pass on SMs of its own. VLA_EXP_ISOLATE=K: 16-row pass blocks
# (64 at B H = 16) that ask for all of an SM's shared memory, the overlapped schedule of K segments (prep
# and readout of other segments beside the pass on the other SMs). Focus without it and with K = 4, 8, 16;
# the quick scan tests with K = 8 (lines compared with call A's).
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s12e.tar.xz && cd ..
B=build-call/s12e
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u '+date (UTC): %F %T'; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } | tee "$O/env.txt"
for r in 1 2; do for K in 0 4 8 16; do
  stamp "focus K=$K ($r)"
  if [ $K = 0 ]; then timeout 60 $B/bench_chunked_X --focus > "$O/focus_K${K}_$r.log" 2>&1
  else VLA_EXP_ISOLATE=$K timeout 60 $B/bench_chunked_X --focus > "$O/focus_K${K}_$r.log" 2>&1; fi
  grep "^| 1 \|^| 8 " "$O/focus_K${K}_$r.log"
done; done
stamp "quick scan tests K=8"
for i in $(seq 0 11); do VLA_EXP_ISOLATE=8 timeout 90 $B/test_gpu_chunked_cuda_X --quick --kinds scan --shard $i/12 > "$O/q_$i.log" 2>&1 & done; wait
cat "$O"/q_*.log > "$O/quick_K8.log"; rm -f "$O"/q_*.log
echo "K8 quick: $(grep -c '^ok ' "$O/quick_K8.log") ok, $(grep -c '^FAIL' "$O/quick_K8.log") FAIL"
if cmp -s <(grep '^ok \|^FAIL' "$O/quick_K8.log" | sort) <(grep '^ok \|^FAIL' reports/gpu/logs/2026-12-06-s12/callA/quick_L512.log | sort); then echo "K8 quick lines EQUAL call A's L512"; else echo "K8 quick lines DIFFER from call A's"; fi
stamp done
cd "$O" && tar cf logs.tar --exclude=logs.tar . && ls -la logs.tar
