#!/usr/bin/env bash
# Session 14, call C (one call for all: the device time left allows one). Builds (s14a.tar.xz, PREBUILT):
# L512 = HEAD 2476b14; W = the den split (8.33's patch; the n scan in scan_seg_inverse's grid; no norms where
# state_norm is null); P = W + the pass's conversions pinned before the r barrier (same bits); I = P + the segment
# inverses by X = L^-1 and X^T D^-1 X on DMMA (VLA_SCAN_INVERSE_PRODUCTS); I256 = I with segments of 256 steps.
# Phases by priority, the logs tarred after each (a timeout keeps what is done):
#  1 focus L512, I;  2 quick scan tests W, P, I (W's and P's lines must be equal);
#  3 every scan case of I (12 shards) beside memcheck (shard 0) and racecheck (shard 3);  4 focus W, P, I256; SDPA.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s14a.tar.xz && cd ..
B=build-call/s14a/bin
L=$O/logs; mkdir -p $L
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version 2>/dev/null | tail -1; } | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
focus() { for V in "$@"; do stamp "focus $V"; timeout 100 $B/bench_chunked_$V --focus > $L/focus_$V.log 2>&1; grep "^| 1 \|^| 8 " $L/focus_$V.log; done; save; }
focus L512 I
for V in W P I; do
  stamp "quick $V"
  for i in $(seq 0 11); do timeout 60 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > "$L/q_$i.log" 2>&1 & done; wait
  cat $L/q_*.log > $L/quick_$V.log; rm -f $L/q_*.log
  echo "$V quick: $(grep -c '^ok ' $L/quick_$V.log) ok, $(grep -c '^FAIL' $L/quick_$V.log) FAIL"; grep '^FAIL' $L/quick_$V.log | head -3 | cut -c1-300
done
if cmp -s <(grep '^ok \|^FAIL' $L/quick_W.log) <(grep '^ok \|^FAIL' $L/quick_P.log); then echo "P quick lines EQUAL W's"; else echo "P quick lines DIFFER"; fi
save
stamp "every scan case of I, sanitizers beside"
for i in $(seq 0 11); do timeout 330 $B/test_gpu_chunked_cuda_I --kinds scan --shard $i/12 > $L/full_$i.log 2>&1; echo "exit $?" >> $L/full_$i.log & done
for job in memcheck:0 racecheck:3; do tool=${job%:*}; i=${job#*:}; timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gpu_chunked_cuda_I --quick --kinds scan --shard $i/12 > $L/san_${tool}_$i.log 2>&1 & done
wait
cat $L/full_*.log > $L/full_I.log; rm -f $L/full_*.log
echo "I every case: $(grep -c '^ok ' $L/full_I.log) ok, $(grep -c '^FAIL' $L/full_I.log) FAIL; exits: $(grep '^exit' $L/full_I.log | sort | uniq -c | tr '\n' ' ')"; grep '^FAIL' $L/full_I.log | head -3 | cut -c1-300
echo "layouts yes: $(grep -c "w layouts same bits: yes" $L/full_I.log); norms-off yes: $(grep -c "without norms same bits: yes" $L/full_I.log) NO: $(grep -c "same bits: NO" $L/full_I.log)"
for f in $L/san_*.log; do echo "$(basename $f .log): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
save
focus W P I256
stamp SDPA; ( cd bench/gpu && timeout 90 python3 sdpa_chunked_shapes.py ) > $L/sdpa.log 2>&1; grep "^|\|torch" $L/sdpa.log
save; stamp done
