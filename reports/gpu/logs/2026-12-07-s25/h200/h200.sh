#!/usr/bin/env bash
# Session 25: issue 8's table on the H200 the issue names, for the committed tree (WM, docs/CHUNKED.md 8.48) beside
# 8.47's (RV): quick tests of both, every scan case of WM with the sanitizers, six rounds with SDPA, the tables.
# Runs only on an H200 (build-call/s24c.tar.xz); on any other card it says so and exits, to spend no device time.
set -u
. bench/gpu/call_steps.sh
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) ;; *) echo "not an H200 ($gpu): nothing run"; exit 3 ;; esac
call_setup s24c
duel RV WM san
stamp done
