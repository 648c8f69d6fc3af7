#!/usr/bin/env bash
# On the GPU machine: build and install gpubtree against the PostgreSQL
# bundle (test/gpu/setup_pg_bundle.sh, from the git-ignored .gpu/ folder) and
# run the benchmark suite (test/bench/run.sh) for 2^24 rows, in under 9
# minutes on 16 cores.  Results go to $OUT (the device tool's output folder):
# $OUT/bench-results.tar.gz holds the results folder (results.csv,
# report.md, settings.txt, plans.txt, bench.log), $OUT/bench-console.log the
# console output.  Make the plots afterwards, where gnuplot is, with
# test/bench/plot.sh DIR.
#
#   test/gpu/bench.sh [extra run.sh arguments]      BENCH_ROWS="24 26" for more sizes
#   BENCH_CLIENTS, BENCH_DURATION, BENCH_BUDGET_S (555), GBT_BENCH_SRC: see
#   gpu_bench_begin in setup_pg_bundle.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$SECONDS
. test/gpu/setup_pg_bundle.sh || exit 1
OUT=${OUT:-/tmp/gbt-bench-out}
gpu_bench_begin bench-console.log || exit 1
BUDGET=$((${BENCH_BUDGET_S:-555} - (SECONDS - START)))
R=$OUT/bench-results
# 3 client counts and 3 s per pgbench run keep 2^24 rows inside the budget
timeout "$BUDGET" test/bench/run.sh --no-install --rows "${BENCH_ROWS:-24}" \
	--clients "${BENCH_CLIENTS:-1 16 64}" --duration "${BENCH_DURATION:-3}" --out "$R" "$@"
rc=$?
[ $rc = 124 ] && echo "run.sh stopped after $BUDGET s (timeout); partial results kept"
[ -f "$R/report.md" ] || python3 test/bench/report.py "$R"
tar czf "$OUT/bench-results.tar.gz" -C "$OUT" bench-results && rm -rf "$R"
echo "total $((SECONDS - START)) s, run.sh exit $rc"
exit $rc
