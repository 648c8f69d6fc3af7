#!/bin/bash
# One device run: build, GPU test, benchmark, compute-sanitizer --quick.
# From the repository root; logs and CSV go to $OUT (default /tmp/hm_out).
OUT=${OUT:-/tmp/hm_out}
B=/tmp/hmbuild
mkdir -p "$OUT"
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/device.txt"
date -u | tee -a "$OUT/device.txt"
git -C ../.. rev-parse HEAD 2>/dev/null | tee -a "$OUT/device.txt"
( make -j4 B=$B $B/test_gpu $B/bench 2>&1 ) > "$OUT/build.log"; echo "build rc=$?" | tee -a "$OUT/build.log"
( time timeout ${T_CHECK:-140} $B/test_gpu ) 2>&1 | tee "$OUT/gpu_check.log"
( time timeout ${T_BENCH:-230} $B/bench --csv "$OUT/bench.csv" ) > "$OUT/bench.log" 2>&1
tail -5 "$OUT/bench.log"
( time timeout ${T_SAN:-140} compute-sanitizer --error-exitcode 9 $B/test_gpu --quick ) > "$OUT/sanitizer.log" 2>&1
echo "sanitizer rc=$?" >> "$OUT/sanitizer.log"
tail -12 "$OUT/sanitizer.log"
