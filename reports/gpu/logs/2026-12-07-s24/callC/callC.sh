#!/usr/bin/env bash
# Session 24, call C: SW (call B's, build-call/s24a.tar.xz) through every scan case with memcheck, racecheck and
# initcheck beside, then four more rounds of SW, HD and SDPA alternating, and issue 8's table of each.
set -u
. bench/gpu/call_steps.sh
call_setup s24a
every SW san
for N in 5 6 7 8; do
  if [ $((N % 2)) = 1 ]; then focus SW HD; else focus HD SW; fi
  sdpa
done
table SW HD
stamp done
