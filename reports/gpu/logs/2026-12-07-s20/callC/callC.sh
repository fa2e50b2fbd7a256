#!/usr/bin/env bash
# NOT RUN: no machine started for it (session 20: every start attempt failed; docs/CHUNKED.md 8.41).
# Session 20, call C: call B cut to the session's last device time (twelve start attempts got no machine). The same
# binaries (build-call/s20b.tar.xz; call B's header says what E, F, G and GP4 are), F left out: G contains it.
# Questions: (1) issue 8's table on E and G; (2) are G's bits E's (quick lines) and its state prep faster; (3) GP4's
# bits and whole scan; (4) every scan case of GP4 with the sanitizers (G's prep, P4's pass). Steps after the first
# focus round are skipped when less than their time is left before LIMIT seconds (the run's limit, given).
set -u
LIMIT=${1:-420}
. bench/gpu/call_steps.sh
call_setup s20b
left() { echo $((LIMIT - (SECONDS - t0))); }
quick E; quick G; quick GP4; same E G; same E GP4
N=1; focus E G GP4; sdpa
[ "$(left)" -gt 120 ] && { N=2; focus GP4 G E; sdpa; }
table E G GP4
grep -h -A4 'pass alone' "$L"/focus_E_*.log | grep '^| B='
[ "$(left)" -gt 90 ] && every GP4 san
[ "$(left)" -gt 60 ] && { N=3; focus G E GP4; table E G GP4; }
stamp done
