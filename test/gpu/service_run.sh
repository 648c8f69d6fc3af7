#!/usr/bin/env bash
# On the GPU machine: the whole suite with gpubtree.device = gpu, the
# concurrency test at 32 clients, and the service benchmark.
#   test/gpu/service_run.sh [LOG2_ROWS=24]
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/gpu/setup_pg_bundle.sh || exit 1
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
GPUBTREE_DEVICE=gpu test/run_all.sh >"$OUT/test-all.log" 2>&1
grep -E "^(ok|FAILED|test |build|seed|crash|progress|no preload|concurrency|service)|passed|failed" "$OUT/test-all.log" | tail -40
CLIENTS=32 DURATION=30 GPUBTREE_DEVICE=gpu test/concurrency/run.sh 2>&1 | tee "$OUT/concurrency32.log" | tail -4
test/gpu/service_bench.sh "${1:-24}" 1000000 2>&1 | tee "$OUT/service-bench-${1:-24}.md"
