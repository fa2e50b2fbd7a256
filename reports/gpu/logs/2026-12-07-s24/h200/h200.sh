#!/usr/bin/env bash
# Session 24: issue 8's table for HEAD on the H200 the issue names, only where the card is one: session 23's
# call A unchanged (HD's quick tests, then HD and SDPA alternating, six rounds, from build-call/s22a.tar.xz).
# On any other card it says which and stops, so that an attempt that lands on an H100 costs only the start.
# Ran twice (both times an H100 came: nothing run). Superseded by callE/callE.sh, which gives issue 8's table of
# HEAD (RV) on an H200 too.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
exec bash reports/gpu/logs/2026-12-07-s23/callA/callA.sh
