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
#   BENCH_CLIENTS, BENCH_DURATION, BENCH_BUDGET_S (555), GBT_BENCH_SRC: see below
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$SECONDS
. test/gpu/setup_pg_bundle.sh || exit 1
OUT=${OUT:-/tmp/gbt-bench-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/bench-console.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
echo "cores: $(nproc); memory: $(awk '/MemTotal/ {print int($2/1048576)" GiB"}' /proc/meminfo)"
# GBT_BENCH_SRC: build from that source folder instead of the checkout (for
# example a `git archive` of a commit, with the commit id in its .commit file),
# so that a run measures a known commit while the checkout is being edited.
SRC=${GBT_BENCH_SRC:-.}
[ -f "$SRC/.commit" ] && export GBT_COMMIT=$(cat "$SRC/.commit")
echo "building $SRC${GBT_COMMIT:+ (commit $GBT_COMMIT)}"
make -s -C "$SRC" PG_CONFIG="$PG_CONFIG" && make -s -C "$SRC" install PG_CONFIG="$PG_CONFIG" ||
	{ echo "build failed"; exit 1; }
echo "built and installed in $((SECONDS - START)) s"
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
