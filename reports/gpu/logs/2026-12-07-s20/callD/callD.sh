#!/usr/bin/env bash
# NOT RUN: no machine started for it (session 20: every start attempt failed; docs/CHUNKED.md 8.41).
# Session 20, call D: the least that answers whether G is worth the next session's device tests, in the session's
# last 284 s of device time (thirteen start attempts got no machine). Binaries: build-call/s20b.tar.xz (call B's
# header says what E and G are). G's bits against E's (quick lines), and one or two focus rounds of both beside SDPA.
set -u
LIMIT=${1:-150}
. bench/gpu/call_steps.sh
call_setup s20b
left() { echo $((LIMIT - (SECONDS - t0))); }
quick E; quick G; same E G
N=1; focus E G; sdpa
[ "$(left)" -gt 50 ] && { N=2; focus G E; }
table E G
stamp done
