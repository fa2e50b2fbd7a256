cd build-call && tar xf s13b.tar.xz && cd .. && OUT=${OUT:-/tmp/out} PREBUILT=build-call/s13b VARIANTS="N=" TESTS="N" FULL=1 BUNDLE=1 bash bench/gpu/run_scan_focus.sh
