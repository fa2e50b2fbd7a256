#!/usr/bin/env bash
# Session 24, call B: HEAD (HD, build-call/s22a's binaries) beside SW, HEAD with the float steps' z and w stores
# shared by the four lanes of a row group (the same values, so the quick lines must equal HD's). Both binaries in
# build-call/s24a.tar.xz. Quick tests of both, rounds of HD, SW and SDPA (four; six on an H200), the tables.
set -u
. bench/gpu/call_steps.sh
call_setup s24a
duel HD SW
stamp done
