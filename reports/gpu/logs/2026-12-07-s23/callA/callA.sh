#!/usr/bin/env bash
# Session 23, call A: issue 8's table for HEAD (b28dabe) on the H200 the issue names: HD's quick tests, then HD and
# SDPA alternating, six rounds (build-call/s22a.tar.xz: the binaries of session 22's calls A and D).
set -u
. bench/gpu/call_steps.sh
call_setup s22a
quick HD
for N in 1 2 3 4 5 6; do focus HD; sdpa; done
table HD
stamp done
