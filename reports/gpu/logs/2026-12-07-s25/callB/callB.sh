#!/usr/bin/env bash
# Session 25, call B: the committed tree (WM, docs/CHUNKED.md 8.48) on the device again, for issue 8's table.
# On an H200 (the card): RV beside WM with every scan case and the sanitizers, six rounds with SDPA.
# Elsewhere: three rounds of WM and SDPA alone (the same binaries as call A: build-call/s24c.tar.xz).
set -u
. bench/gpu/call_steps.sh
call_setup s24c
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) duel RV WM san ;;
  *) for n in 1 2 3; do N=$n; focus WM; sdpa; done; table WM ;;
esac
stamp done
