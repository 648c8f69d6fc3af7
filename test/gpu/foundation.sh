#!/usr/bin/env bash
# On the GPU machine: build with CUDA, run the whole suite with
# gpubtree.device = gpu, and show what gpubtree_device_info() finds.
# Logs go to $OUT when set (the device tool's output folder).
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/gpu/setup_pg_bundle.sh || exit 1
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
GPUBTREE_DEVICE=gpu test/run_all.sh 2>&1 | tee "$OUT/foundation-test-all.log" | tail -40
make demo 2>&1 | tee "$OUT/foundation-demo.log" | grep -A4 "gpubtree_device_info"
