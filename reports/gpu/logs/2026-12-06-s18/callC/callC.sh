#!/usr/bin/env bash
# Session 18, call C: where the parallel kernels of the scan spend their time at B = 1, H = 16, T = 16,384 (issue 8):
# Nsight Compute, --set full with source, one launch each of `bench_chunked --profile` (chunked-scan-bf16, C = 32,
# D = 64), SM clock not locked (as the benchmark runs). Binary: tree e15188a built with -lineinfo:
# `cmake -S gpu/standalone -B build-prof -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
#  -DCMAKE_CUDA_FLAGS=-lineinfo -DVLA_EIGEN_DIR=/usr/include/eigen3 && cmake --build build-prof --target bench_chunked`.
# KERNELS (default: all six) names the kernels to profile. Kept: each kernel's details page and its source lines by stall samples (bench/gpu/ncu_source_lines.py).
set -u
O=${OUT:-/tmp/out}; L=$O/logs; mkdir -p $L
cd build-call && tar xf s18c.tar.xz && cd ..
BIN=build-call/s18c/bench_chunked
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0)) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; nvcc --version | tail -1; ncu --version | tail -1; } 2>&1 | tee $L/env.txt
save() { tar cf "$O/logs.tar" -C "$L" . ; }
for k in ${KERNELS:-state_readout state_prep state_x prep_kernel state_pass_look steps_warp}; do
  stamp "ncu $k"
  timeout 150 ncu --clock-control none --set full --import-source yes -k regex:$k --launch-count 1 -o /tmp/$k $BIN --profile > $L/ncu_$k.log 2>&1
  echo "ncu exit $?"; tail -2 $L/ncu_$k.log
  ncu -i /tmp/$k.ncu-rep --page details > $L/details_$k.txt 2>&1
  ncu -i /tmp/$k.ncu-rep --page source --csv --print-source cuda,sass > /tmp/lines_$k.csv 2>/dev/null
  python3 bench/gpu/ncu_source_lines.py /tmp/lines_$k.csv --top 40 > $L/lines_$k.txt 2>&1
  grep -E "^\s+[a-z_]+.*\(|Duration|Issue Slots Busy|Executed Instructions  |No Eligible|Eligible Warps|Active Warps Per|Achieved Occupancy|Registers Per|DRAM Throughput|Compute \(SM\)" $L/details_$k.txt | head -14
  save
  [ $((SECONDS - t0)) -gt 400 ] && { stamp "stop (time)"; break; }
done
stamp done
