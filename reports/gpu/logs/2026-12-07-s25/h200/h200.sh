#!/usr/bin/env bash
# Session 25: issue 8's table on the H200 the issue names, for the committed tree (WM, docs/CHUNKED.md 8.48; its
# every scan case and the sanitizers ran in call A on an H100): the quick scan tests, then six rounds of the focus and
# SDPA, and the table (build-call/s24c.tar.xz). Light enough for the last minutes of a session's device time.
# Runs only on an H200; on any other card it says so and exits, to spend no device time.
set -u
. bench/gpu/call_steps.sh
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) ;; *) echo "not an H200 ($gpu): nothing run"; exit 3 ;; esac
call_setup s24c
quick WM
for n in 1 2 3 4 5 6; do N=$n; focus WM; sdpa; done
table WM
stamp done
