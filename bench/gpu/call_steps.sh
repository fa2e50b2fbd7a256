# The steps of a device call that compares prebuilt builds of the scan form (issue 8), as shell functions for the
# calls' scripts (reports/gpu/logs/*/call*/call*.sh) to source, so that each script says only its plan.
#   call_setup NAME    unpacks build-call/NAME.tar.xz (bin/bench_chunked_V and bin/test_gpu_chunked_cuda_V for
#                      each build V), sets B (that bin folder), O ($OUT) and L ($O/logs), writes $L/env.txt
#   quick V            the quick scan tests of V, 12 shards at once, into $L/quick_V.log
#   same A V           whether V's quick lines equal A's (every error, ratio and same-bits verdict)
#   focus V...         `bench_chunked --focus` of each V into $L/focus_V_$N.log (N: the round, set by the caller);
#                      V:64 runs V's binary with --chunk 64 into $L/focus_V64_$N.log
#   sdpa               causal bf16 SDPA at the same shapes into $L/sdpa_$N.log
#   rounds A B [S]     focus A B, SDPA, focus B A, SDPA, focus A B (the third only before S seconds, where given)
#   w16 V N            the whole scan at B = 1, H = 16, T = 16,384 from round N's focus log of V
#   every V [san]      every scan case of V, 12 shards, with (san) memcheck, racecheck and initcheck beside
#   carried V          the quick tests of the carried chunked kinds of V
#   table V...         issue 8's table of each V from all its focus rounds and every SDPA log (issue8_table.py)
#   duel A V [san] [R] A beside V: quick A and V, same A V, with san every scan case of V and the sanitizers, then
#                      R rounds (6 on an H200, issue 8's card; R, default 4, elsewhere) of focus A V in alternating
#                      order with SDPA after each (N = 1..R), and the table of both
#   profile V K [S]    Nsight Compute (--set full) on one launch of kernel K in `bench_chunked_V --profile`, under
#                      timeout S (default 90): $L/details_K.txt and $L/lines_K.txt (source lines by stall samples)
# Every step adds its logs to $O/logs.tar (the only file the call brings back), so a call cut short keeps them.

stamp() { echo "[$((SECONDS - t0)) s] $*"; }
save() { tar cf "$O/logs.tar" -C "$L" . ; }

call_setup() {
  O=${OUT:-/tmp/out}; mkdir -p "$O"
  (cd build-call && tar xf "$1.tar.xz")
  B=build-call/$1/bin
  L=$O/logs; mkdir -p "$L"
  t0=$SECONDS
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1;
    python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)"; } 2>&1 | tee "$L/env.txt"
}

# The scan tests of $1 with the arguments after it, 12 shards at once, each under timeout $2, into $L/$3.log.
shards() {
  local V=$1 limit=$2 log=$3; shift 3
  for i in $(seq 0 11); do ( timeout "$limit" "$B/test_gpu_chunked_cuda_$V" "$@" --shard "$i/12" > "$L/shard_$i.out" 2>&1; echo "exit $?" >> "$L/shard_$i.out" ) & done
}
gather_shards() { cat "$L"/shard_*.out > "$L/$1.log"; rm -f "$L"/shard_*.out; }
counts() { echo "$(grep -c '^ok ' "$L/$1.log") ok, $(grep -c '^FAIL' "$L/$1.log") FAIL; exits: $(grep '^exit' "$L/$1.log" | sort | uniq -c | tr '\n' ' ')"; }

quick() {
  stamp "quick scan tests of $1"
  shards "$1" 120 "quick_$1" --quick --kinds scan; wait; gather_shards "quick_$1"
  echo "$1 quick: $(counts "quick_$1")"; grep '^FAIL' "$L/quick_$1.log" | head -3 | cut -c1-400; save
}

same() {
  if cmp -s <(grep -v '^exit\|seconds\| ms' "$L/quick_$1.log") <(grep -v '^exit\|seconds\| ms' "$L/quick_$2.log"); then
    echo "quick lines of $1 and $2: identical"
  else
    echo "quick lines of $1 and $2: DIFFER"; diff <(grep -v '^exit' "$L/quick_$1.log") <(grep -v '^exit' "$L/quick_$2.log") | head -10 | cut -c1-300
  fi
}

focus() {
  local V bin args name
  for V in "$@"; do
    bin=${V%%:*}; args=; name=$bin
    if [[ "$V" == *:* ]]; then args="--chunk ${V#*:}"; name=$bin${V#*:}; fi
    stamp "focus $V"; timeout 100 "$B/bench_chunked_$bin" --focus $args > "$L/focus_${name}_$N.log" 2>&1; grep "^| 1 \|^| 8 " "$L/focus_${name}_$N.log"
  done
  save
}

# Three focus rounds of the builds A and B (either may be V:64), the order alternating, with SDPA after the first two;
# the third round only while the call has run under $3 seconds, where given.
rounds() {
  N=1; focus "$1" "$2"; sdpa
  N=2; focus "$2" "$1"; sdpa
  if [ -z "${3:-}" ] || [ $((SECONDS - t0)) -lt "$3" ]; then N=3; focus "$1" "$2"; fi
}

sdpa() { stamp SDPA; (cd bench/gpu && timeout 150 python3 sdpa_chunked_shapes.py) > "$L/sdpa_$N.log" 2>&1; grep "^|\|torch" "$L/sdpa_$N.log"; save; }

w16() { grep '^| 1 | 16 | 16384 ' "$L/focus_$1_$2.log" | cut -d'|' -f5 | tr -d ' *'; }

every() {
  local V=$1
  stamp "every scan case of $V"
  shards "$V" 200 "tests_$V" --kinds scan
  if [ "${2:-}" = san ]; then
    for job in racecheck:3 memcheck:0 initcheck:7 memcheck:2; do
      tool=${job%:*}; i=${job#*:}
      timeout 240 compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/test_gpu_chunked_cuda_$V" --quick --kinds scan --shard "$i/12" > "$L/san_${V}_${tool}_$i.log" 2>&1 &
    done
  fi
  wait; gather_shards "tests_$V"
  echo "$V every case: $(counts "tests_$V")"; grep '^FAIL' "$L/tests_$V.log" | head -3 | cut -c1-400
  echo "layouts yes: $(grep -c "w layouts same bits: yes" "$L/tests_$V.log"); norms-off yes: $(grep -c "without norms same bits: yes" "$L/tests_$V.log"); NO: $(grep -c "same bits: NO" "$L/tests_$V.log")"
  if [ "${2:-}" = san ]; then
    for f in "$L/san_${V}_"*.log; do echo "$(basename "$f" .log): $(grep -c '^ok ' "$f") ok; $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$f" | tail -1)"; done
  fi
  save
}

carried() {
  stamp "quick tests of the carried kinds of $1"
  shards "$1" 150 "quick_carried_$1" --quick --kinds carried; wait; gather_shards "quick_carried_$1"
  echo "$1 carried quick: $(counts "quick_carried_$1")"; save
}

table() {
  for V in "$@"; do
    python3 bench/gpu/issue8_table.py --focus "$L/focus_${V}_"*.log --sdpa "$L"/sdpa_*.log > "$L/issue8_table_$V.md" 2>&1
    echo "== issue 8 table of $V (exit $?)"; cat "$L/issue8_table_$V.md"
  done
  save
}

duel() {
  local A=$1 V=$2 rounds=${4:-4} n
  quick "$A"; quick "$V"; same "$A" "$V"
  [ "${3:-}" = san ] && every "$V" san
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) rounds=6 ;; esac
  for n in $(seq 1 "$rounds"); do
    N=$n
    if [ $((n % 2)) = 1 ]; then focus "$A" "$V"; else focus "$V" "$A"; fi
    sdpa
  done
  table "$A" "$V"
}

profile() {
  local V=$1 k=$2
  stamp "ncu $k of $V"
  timeout "${3:-90}" ncu --clock-control none --set full --import-source yes -k "regex:$k" --launch-count 1 -o "/tmp/$k" "$B/bench_chunked_$V" --profile > "$L/ncu_$k.log" 2>&1
  echo "ncu exit $?"; tail -1 "$L/ncu_$k.log"
  ncu -i "/tmp/$k.ncu-rep" --page details > "$L/details_$k.txt" 2>&1
  ncu -i "/tmp/$k.ncu-rep" --page source --csv --print-source cuda,sass > "/tmp/lines_$k.csv" 2>/dev/null
  python3 bench/gpu/ncu_source_lines.py "/tmp/lines_$k.csv" --top 40 > "$L/lines_$k.txt" 2>&1
  grep -E "Duration|Issue Slots Busy|Executed Instructions  |No Eligible|Eligible Warps|Achieved Occupancy|Registers Per|L1/TEX Hit|Mem Pipes Busy" "$L/details_$k.txt" | head -10
  save
}
