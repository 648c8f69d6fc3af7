#!/usr/bin/env bash
# On the GPU machine: build and install gpubtree against the PostgreSQL
# bundle (test/gpu/setup_pg_bundle.sh, from the git-ignored .gpu/ folder) and
# run the commit-latency benchmark (test/bench/commit_latency.sh) with the
# service's mirrors on the GPU, variants a-d (NOPRELOAD=1), in about 6
# minutes.  Results go to $OUT (the device tool's output folder):
# $OUT/commit-latency/ (results.csv, report.md, settings.txt, status.txt,
# bench.log, reader.log, server.log), the same as
# $OUT/commit-latency.tar.gz, and the console output in
# $OUT/commit-latency-console.log.  Copy the folder to
# test/bench/results/<date>-<gpu>-commit-latency/ to commit it.
#
#   test/gpu/commit_latency.sh
#   Passed on to commit_latency.sh: ROWS, DURATION, CLIENTS, BATCHES,
#   NOPRELOAD (1 here), READER_INTERVAL, PGCONF (default here:
#   "gpubtree.device = gpu"), LABEL (default: the GPU's model, e.g. h100).
#   GBT_BENCH_SRC: build from that source folder instead of the checkout (a
#   `git archive` of a commit, with the commit id in its .commit file).
#   COMMIT_BUDGET_S (570): the whole script's time limit.
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$SECONDS
. test/gpu/setup_pg_bundle.sh || exit 1
OUT=${OUT:-/tmp/gbt-commit-out}
gpu_bench_begin commit-latency-console.log || exit 1

GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
# "NVIDIA H100 80GB HBM3" -> h100
DEFAULT_LABEL=$(echo "$GPU" | tr 'A-Z' 'a-z' | grep -oE '\b[a-z][0-9]{2,4}[a-z]?\b' | head -1)
export LABEL=${LABEL:-${DEFAULT_LABEL:-gpu}}
export NOPRELOAD=${NOPRELOAD:-1}
export PGCONF=${PGCONF:-"gpubtree.device = gpu"}
R=$OUT/commit-latency
rm -rf "$R"
BUDGET=$((${COMMIT_BUDGET_S:-570} - (SECONDS - START)))
OUT=$R timeout "$BUDGET" test/bench/commit_latency.sh
rc=$?
[ $rc = 124 ] && echo "commit_latency.sh stopped after $BUDGET s (timeout); partial results kept"
[ -f "$R/report.md" ] || python3 test/bench/commit_latency_report.py "$R"
tar czf "$OUT/commit-latency.tar.gz" -C "$OUT" commit-latency
echo "total $((SECONDS - START)) s, commit_latency.sh exit $rc"
exit $rc
