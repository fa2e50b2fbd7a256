#!/usr/bin/env bash
# Session 18, call B: the readout's chunks in turn, the next chunk's inputs in flight (docs/CHUNKED.md 8.39).
# E = e15188a (call A's E); P4 = E with state_readout_kernel taking chunks in turn, two buffers, four blocks an
# SM (the launch bound: 128 registers, 8-16 bytes spilled at D = 64); P3 = P4 at three blocks an SM (no spills).
# The same arithmetic per chunk: the quick scan tests' lines of P4 and P3 must equal E's.
# Binaries: `cmake --build build-focus-L512 --target bench_chunked test_gpu_chunked_cuda` (gpu/standalone, sm_90)
# on each tree (P4.patch, P3.patch against e15188a). Quick scan tests of all three; focus of all three twice,
# SDPA after each round; every scan case of the faster of P4 and P3 with the sanitizers; focus a third round;
# issue 8's table of each build; quick carried kinds of the faster build.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
cd build-call && tar xf s18b.tar.xz && cd ..
B=build-call/s18b/bin
L=$O/logs; mkdir -p $L
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1;
  python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)"; } 2>&1 | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
table() { for V in E P4 P3; do python3 bench/gpu/issue8_table.py --focus $L/focus_${V}_*.log --sdpa $L/sdpa_*.log > $L/issue8_table_$V.md 2>&1; echo "== issue 8 table of $V (exit $?)"; cat $L/issue8_table_$V.md; done; save; }
focus() { for V in "$@"; do stamp "focus $V"; timeout 100 $B/bench_chunked_$V --focus > $L/focus_${V}_$N.log 2>&1; grep "^| 1 \|^| 8 " $L/focus_${V}_$N.log; done; save; }
sdpa() { stamp SDPA; ( cd bench/gpu && timeout 150 python3 sdpa_chunked_shapes.py ) > $L/sdpa_$N.log 2>&1; grep "^|\|torch" $L/sdpa_$N.log; save; }
every() {  # every scan case of $1, 12 shards, with the sanitizer jobs beside
  V=$1; stamp "every scan case of $V"
  for i in $(seq 0 11); do ( timeout 200 $B/test_gpu_chunked_cuda_$V --kinds scan --shard $i/12 > $L/fs_$i.out 2>&1; echo "exit $?" >> $L/fs_$i.out ) & done
  for job in racecheck:3 memcheck:0 initcheck:7 memcheck:2; do tool=${job%:*}; i=${job#*:}; timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > $L/san_${V}_${tool}_$i.log 2>&1 & done
  wait
  cat $L/fs_*.out > $L/tests_$V.log; rm -f $L/fs_*.out
  echo "$V every case: $(grep -c '^ok ' $L/tests_$V.log) ok, $(grep -c '^FAIL' $L/tests_$V.log) FAIL; exits: $(grep '^exit' $L/tests_$V.log | sort | uniq -c | tr '\n' ' ')"; grep '^FAIL' $L/tests_$V.log | head -3 | cut -c1-400
  echo "layouts yes: $(grep -c "w layouts same bits: yes" $L/tests_$V.log); norms-off yes: $(grep -c "without norms same bits: yes" $L/tests_$V.log); NO: $(grep -c "same bits: NO" $L/tests_$V.log)"
  for f in $L/san_${V}_*.log; do echo "$(basename $f .log): $(grep -c '^ok ' $f) ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tail -1)"; done
  save
}
quick() {
  V=$1; stamp "quick scan tests of $V"
  for i in $(seq 0 11); do ( timeout 120 $B/test_gpu_chunked_cuda_$V --quick --kinds scan --shard $i/12 > $L/q_$i.out 2>&1; echo "exit $?" >> $L/q_$i.out ) & done; wait
  cat $L/q_*.out > $L/quick_$V.log; rm -f $L/q_*.out
  echo "$V quick: $(grep -c '^ok ' $L/quick_$V.log) ok, $(grep -c '^FAIL' $L/quick_$V.log) FAIL"; grep '^FAIL' $L/quick_$V.log | head -3 | cut -c1-400; save
}
same() { if cmp -s <(grep -v '^exit\|seconds\| ms' $L/quick_E.log) <(grep -v '^exit\|seconds\| ms' $L/quick_$1.log); then echo "quick lines of E and $1: identical"; else echo "quick lines of E and $1: DIFFER"; diff <(grep -v '^exit' $L/quick_E.log) <(grep -v '^exit' $L/quick_$1.log) | head -10 | cut -c1-300; fi; }
quick E; quick P4; quick P3; same P4; same P3
N=1; focus E P4 P3; sdpa
N=2; focus P3 P4 E; sdpa
# whole scan at B = 1, H = 16, T = 16,384 from a focus log; the faster of P4 and P3 over both rounds
w16() { grep '^| 1 | 16 | 16384 ' $L/focus_$1_$2.log | cut -d'|' -f5 | tr -d ' *'; }
best=P4
if [ "$(python3 -c "print(1 if float('$(w16 P3 1)' or 9) + float('$(w16 P3 2)' or 9) < float('$(w16 P4 1)' or 9) + float('$(w16 P4 2)' or 9) else 0)")" = 1 ]; then best=P3; fi
echo "whole scan at 16k: E $(w16 E 1) $(w16 E 2), P4 $(w16 P4 1) $(w16 P4 2), P3 $(w16 P3 1) $(w16 P3 2): every case of $best"
every $best
N=3; focus E P4 P3
table
if [ $((SECONDS - t0)) -gt 330 ]; then stamp "no carried kinds (time)"; stamp done; exit 0; fi
stamp "quick tests of the carried kinds of $best"
for i in $(seq 0 11); do ( timeout 150 $B/test_gpu_chunked_cuda_$best --quick --kinds carried --shard $i/12 > $L/c_$i.out 2>&1; echo "exit $?" >> $L/c_$i.out ) & done; wait
cat $L/c_*.out > $L/quick_carried_$best.log; rm -f $L/c_*.out
echo "$best carried quick: $(grep -c '^ok ' $L/quick_carried_$best.log) ok, $(grep -c '^FAIL' $L/quick_carried_$best.log) FAIL; exits: $(grep '^exit' $L/quick_carried_$best.log | sort | uniq -c | tr '\n' ' ')"; save
stamp done
