#!/usr/bin/env bash
# Session 24, call D: SW (HEAD since call C; call B's binary) beside RV = SW with the steps' row dots from 16-byte
# loads (the same fmas in the same order, so the quick lines must equal SW's). Binaries: build-call/s24b.tar.xz.
# Quick tests of both, every scan case of RV with the sanitizers beside, rounds of SW, RV and SDPA (four; six on
# an H200), the tables.
set -u
. bench/gpu/call_steps.sh
call_setup s24b
duel SW RV san
stamp done
