#!/usr/bin/env bash
# Session 22, call D: issue 8's table for HEAD on whichever card comes (an H200 asked for): HD's quick tests, then
# HD and SDPA alternating, four rounds (build-call/s22a.tar.xz: E and HD as in call A).
set -u
. bench/gpu/call_steps.sh
call_setup s22a
quick HD
N=1; focus HD; sdpa
N=2; focus HD; sdpa
N=3; focus HD; sdpa
N=4; focus HD; sdpa
table HD
stamp done
