#!/usr/bin/env bash
# On the GPU machine, a quick pass: install, the kernels' GPU tests, the
# pg_regress suite with gpubtree.device = gpu, then the aggregate benchmark.
#   test/gpu/quick_run.sh [LOG2_ROWS=24]
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/gpu/setup_pg_bundle.sh || exit 1
. test/lib.sh
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
df -h /dev/shm | tail -1
make -s PG_CONFIG=$PG_CONFIG >/dev/null 2>&1 && make -s install PG_CONFIG=$PG_CONFIG >/dev/null 2>&1 || { echo "install failed"; exit 1; }
make -s -C test/harmonia gpu-check 2>&1 | tail -15 | tee "$OUT/gpu-check.log"
DIR=$(mktemp -d /tmp/gpubtree-regress.XXXXXX)
cluster_init "$DIR" 54400 && cluster_start "$DIR" || exit 1
(cluster_env "$DIR" 54400; export PGOPTIONS="-c gpubtree.device=gpu"; make -s installcheck PG_CONFIG=$PG_CONFIG) >"$OUT/regress.log" 2>&1
grep -E "^(test|ok|not ok)|tests" "$OUT/regress.log" | tail -15
cp regression.diffs "$OUT/" 2>/dev/null
cluster_stop "$DIR"
test/isolation/run.sh >"$OUT/isolation.log" 2>&1; tail -1 "$OUT/isolation.log"
test/gpu/agg_bench.sh "${1:-24}" 2>&1 | tee "$OUT/agg-bench-${1:-24}.md"
