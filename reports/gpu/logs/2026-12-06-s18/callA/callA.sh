#!/usr/bin/env bash
# Session 18, call A: E = the tree of e15188a (session 17's final: the readout's S_c rows and n_c loaded first,
# packed_lower.hpp's index used by the gate kernels and the sweep; never run on a device). SP = E with
# reports/gpu/patches/2026-12-06-state-prep-cp-async.patch (the state prep's a^ and k^ rows by cp.async, one round
# trip a block; the same values, so the same bits).
# Binaries: `cmake --build build-focus-L512 --target bench_chunked test_gpu_chunked_cuda` (gpu/standalone, sm_90),
# once on each tree. Quick scan tests of both (their lines must agree); focus of both; causal bf16 SDPA; every scan
# case of the faster build with memcheck, racecheck and initcheck beside; focus and SDPA again; every scan case of
# the other build where the call has run under 260 s; focus again; quick tests of the carried kinds of the faster
# build where it has run under 360 s; issue 8's table of each build (bench/gpu/issue8_table.py) from all its focus
# runs against both SDPA runs.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s18a.tar.xz && cd ..
B=build-call/s18a/bin
L=$O/logs; mkdir -p $L
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1;
  python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)"; } 2>&1 | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
table() { for V in E SP; do python3 bench/gpu/issue8_table.py --focus $L/focus_${V}_*.log --sdpa $L/sdpa_*.log > $L/issue8_table_$V.md 2>&1; echo "== issue 8 table of $V (exit $?)"; cat $L/issue8_table_$V.md; done; save; }
focus() { for V in "$@"; do stamp "focus $V"; timeout 100 $B/bench_chunked_$V --focus > $L/focus_${V}_$N.log 2>&1; grep "^| 1 \|^| 8 " $L/focus_${V}_$N.log; done; save; }
sdpa() { stamp SDPA; ( cd bench/gpu && timeout 150 python3 sdpa_chunked_shapes.py ) > $L/sdpa_$N.log 2>&1; grep "^|\|torch" $L/sdpa_$N.log; save; }
every() {  # every scan case of $1, 12 shards, with $2 sanitizer jobs beside
  V=$1; stamp "every scan case of $V"
  for i in $(seq 0 11); do ( timeout 200 $B/test_gpu_chunked_cuda_$V --kinds scan --shard $i/12 > $L/fs_$i.out 2>&1; echo "exit $?" >> $L/fs_$i.out ) & done
  if [ "$2" = san ]; then
    for job in racecheck:3 memcheck:0 initcheck:7 memcheck:2; do tool=${job%:*}; i=${job#*:}; timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > $L/san_${V}_${tool}_$i.log 2>&1 & done
  fi
  wait
  cat $L/fs_*.out > $L/tests_$V.log; rm -f $L/fs_*.out
  echo "$V every case: $(grep -c '^ok ' $L/tests_$V.log) ok, $(grep -c '^FAIL' $L/tests_$V.log) FAIL; exits: $(grep '^exit' $L/tests_$V.log | sort | uniq -c | tr '\n' ' ')"; grep '^FAIL' $L/tests_$V.log | head -3 | cut -c1-400
  echo "layouts yes: $(grep -c "w layouts same bits: yes" $L/tests_$V.log); norms-off yes: $(grep -c "without norms same bits: yes" $L/tests_$V.log); NO: $(grep -c "same bits: NO" $L/tests_$V.log)"
  [ "$2" = san ] && for f in $L/san_${V}_*.log; do echo "$(basename $f .log): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
  save
}
quick() {
  V=$1; stamp "quick scan tests of $V"
  for i in $(seq 0 11); do ( timeout 120 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > $L/q_$i.out 2>&1; echo "exit $?" >> $L/q_$i.out ) & done; wait
  cat $L/q_*.out > $L/quick_$V.log; rm -f $L/q_*.out
  echo "$V quick: $(grep -c '^ok ' $L/quick_$V.log) ok, $(grep -c '^FAIL' $L/quick_$V.log) FAIL"; grep '^FAIL' $L/quick_$V.log | head -3 | cut -c1-400; save
}
quick E; quick SP
if cmp -s <(grep -v '^exit\|seconds\| ms' $L/quick_E.log) <(grep -v '^exit\|seconds\| ms' $L/quick_SP.log); then echo "quick lines of E and SP: identical"; else echo "quick lines of E and SP: DIFFER"; diff <(grep -v '^exit' $L/quick_E.log) <(grep -v '^exit' $L/quick_SP.log) | head -10; fi
N=1; focus E SP; sdpa
# whole scan at B = 1, H = 16, T = 16,384 from a focus log
w16() { grep '^| 1 | 16 | 16384 ' $L/focus_$1_$2.log | cut -d'|' -f5 | tr -d ' *'; }
first=E; second=SP
if [ "$(python3 -c "print(1 if float('$(w16 SP 1)' or 9) < float('$(w16 E 1)' or 9) else 0)")" = 1 ]; then first=SP; second=E; fi
echo "whole scan at 16k: E $(w16 E 1), SP $(w16 SP 1): every case of $first first"
every $first san
N=2; focus SP E; sdpa
if [ $((SECONDS - t0)) -gt 260 ]; then stamp "no second every-case run (time)"; table; stamp done; exit 0; fi
every $second san
N=3; focus E SP
table
if [ $((SECONDS - t0)) -gt 360 ]; then stamp "no carried kinds (time)"; stamp done; exit 0; fi
stamp "quick tests of the carried kinds"
for i in $(seq 0 11); do ( timeout 150 $B/test_gpu_chunked_cuda_$first --quick --kinds carried --shard $i/12 > $L/c_$i.out 2>&1; echo "exit $?" >> $L/c_$i.out ) & done; wait
cat $L/c_*.out > $L/quick_carried_$first.log; rm -f $L/c_*.out
echo "$first carried quick: $(grep -c '^ok ' $L/quick_carried_$first.log) ok, $(grep -c '^FAIL' $L/quick_carried_$first.log) FAIL; exits: $(grep '^exit' $L/quick_carried_$first.log | sort | uniq -c | tr '\n' ' ')"; save
stamp done
