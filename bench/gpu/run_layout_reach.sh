#!/usr/bin/env bash
# How far each block layout of the fused kernels reaches in heads (reports/gpu/FLOOR.md, "The layouts' reach"):
# bench_gpu forced to each layout, then the launcher's automatic choice, over counts of heads around the
# cluster layout's co-resident clusters (39 to 264 on the H200 depending on D, precision and build), T = 4096.
#   BIN=<dir holding bench_gpu> [BASE=<dir holding an earlier bench_gpu>] [LAYOUTS="auto cluster few many"] [BH=..] [DS=..] \
#     OUT=<dir> bash bench/gpu/run_layout_reach.sh
# BASE (optional) times the cluster layout of an earlier build in the same call (e.g. the commit before a change
# to the cluster kernel's launch bounds). Writes $OUT/reach_<layout>.csv and .txt, and the resources' lines.
set -uo pipefail
: "${BIN:?BIN: the folder holding bench_gpu}" "${OUT:?OUT: where the logs go}"
mkdir -p "$OUT"
BH=${BH:-1x16,1x44,1x45,1x64,1x80,1x88,1x96,1x124,1x125,1x128,1x132,1x163,1x164,2x128,1x264,1x265}
DS=${DS:-16,32,64,128}
"$BIN/bench_gpu" --bh 1x1 --t 64 --d 16 2>&1 | grep -E "^ +D=" > "$OUT/resources.txt"
cat "$OUT/resources.txt"
for L in ${LAYOUTS:-auto cluster few many}; do
  timeout 200 "$BIN/bench_gpu" --layout $L --bh "$BH" --t 4096 --d "$DS" --max-seconds 20 --csv "$OUT/reach_$L.csv" > "$OUT/reach_$L.txt" 2>&1 ||
    echo "bench_gpu --layout $L: exit $?" | tee -a "$OUT/reach_$L.txt"
done
if [ -n "${BASE:-}" ]; then
  timeout 200 "$BASE/bench_gpu" --layout cluster --bh "$BH" --t 4096 --d "$DS" --max-seconds 20 --csv "$OUT/reach_base_cluster.csv" \
    > "$OUT/reach_base_cluster.txt" 2>&1 || echo "base bench_gpu: exit $?" | tee -a "$OUT/reach_base_cluster.txt"
fi
echo "layout reach: done"
