#!/usr/bin/env bash
# Session 24, call E (prepared): RV (HEAD since call D; call D's binary) beside WM = RV with
# reports/gpu/patches/2026-12-07-scan-wrap-mask.patch (the rotated w rows' and the den loops' wrap by a mask
# instead of a signed modulo, the steps' two row dots from one load of the u row, the steps' gate output without a
# row index per step or a loop on the lane's number; the same values, so the quick lines must equal RV's). Binaries: build-call/s24c.tar.xz. Quick tests of both, every scan case of WM with the
# sanitizers beside, rounds of RV, WM and SDPA (three; six on an H200), the tables.
set -u
. bench/gpu/call_steps.sh
call_setup s24c
duel RV WM san 3
stamp done
