#!/usr/bin/env bash
# test/gpu/run.sh BENCHMARK [ARGS]: one benchmark on the GPU machine, in one
# call of the device tool (a command may run 10 minutes; this script stops
# its benchmark so that the whole takes at most GPU_BUDGET_S, 570 s).
#
#   bench [run.sh options]   the suite: test/bench/run.sh --rows 24
#                            --clients "1 16 64" --duration 3 (BENCH_ROWS,
#                            BENCH_CLIENTS, BENCH_DURATION change those)
#   agg [LOG2_ROWS]          test/bench/agg.sh (default 24)
#   defaults [LOG2_ROWS...]  test/bench/defaults.sh (default 24)
#   restore [LOG2_ROWS]      test/bench/restore.sh (default 24)
#   arrays [LOG2_ROWS [LOG2_KEYS]]  test/bench/bound_arrays.sh (default 24 20)
#   mvcc [LOG2_ROWS]         test/bench/mvcc.sh (default 24; PHASES, SERVICE_LOG,
#                            READS, COMMIT_S pass through)
#   analytic [LOG2_ROWS]     test/bench/analytic.sh, issue 36's analytic queries
#                            (default 26; RUNS, QUERY_S, ONLY, PLAN_CACHE_MODE
#                            pass through)
#   clients [LOG2_ROWS]      test/bench/clients.sh, many clients at once (issue
#                            37; default 26; CLIENTS, DURATION, WRITERS, ONLY
#                            pass through)
#   citus [LOG2_ROWS]        Citus built from .gpu/citus-src.tar.gz (a release's
#                            source, git-ignored, carried; CITUS_MINIMAL build),
#                            then test/citus/run.sh on the GPU engine and
#                            test/bench/citus.sh (default 24)
#   commit-latency           test/bench/commit_latency.sh, variants a-d
#                            (NOPRELOAD=1), PGCONF="gpubtree.engine = gpu";
#                            its other variables (ROWS, DURATION, CLIENTS,
#                            BATCHES, READER_INTERVAL, LABEL) pass through
#   harmonia                 the engine's kernels (test/harmonia): build with
#                            nvcc, gpu-check, bench --csv, compute-sanitizer
#                            test_gpu --quick (T_CHECK, T_BENCH, T_SAN: each
#                            step's limit in s, 140, 230, 140)
#   suite [PART...]          GPUBTREE_ENGINE=gpu test/run_all.sh PART...
#                            (every test without PARTs: more than one call)
#
# GBT_PG=18 runs them on PostgreSQL 18 (PyPI's wheel, copied to .gpu/; see
# test/gpu/setup_pg_bundle.sh).
#
# Through the device tool, from the repository root, with the PostgreSQL
# bundle copied to .gpu/ (git-ignored; every benchmark but harmonia needs
# it) and named in carry:
#
#   run(command="GBT_TREE=abc1234 test/gpu/run.sh agg 26", carry=[".gpu"], timeout_s=600)
#
# GBT_TREE names the commit sent (the copy there may hold an older .git):
# reports and CSVs record it.
#
# bench, agg, defaults, restore, arrays, mvcc, analytic, clients, citus and commit-latency build and install gpubtree against
# the bundle first (test/gpu/setup_pg_bundle.sh), from GBT_BENCH_SRC when set
# (a source folder, e.g. a `git archive` of a commit with the commit id in
# its .commit file, so that a run measures a known commit) or else the
# checkout; suite builds and installs through run_all.sh.
#
# Results go to $OUT (the device tool's output folder; /tmp/gbt-gpu-out when
# unset), three files, within what the device tool brings back:
#   $OUT/NAME-console.log  everything printed (device, machine, tree, output)
#   $OUT/NAME-report.md    the report (bench, commit-latency, analytic, clients) or the
#                          table (agg, defaults); NAME-report.log: the tests' log
#                          (harmonia: test_gpu and compute-sanitizer; suite)
#   $OUT/NAME.tar.gz       the whole results folder NAME/ (CSV, logs, plans)
# Plots: gnuplot is missing there; unpack the tarball here and run
# test/bench/plot.sh DIR (bench) or test/harmonia/plot.py and plot.gp.
# Numbers worth keeping go into test/bench/RESULTS.md; raw files are not
# committed.
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$SECONDS
ROOT=$PWD
NAME=${1:-}
case "$NAME" in
bench | agg | defaults | restore | arrays | mvcc | analytic | clients | citus | commit-latency | harmonia | suite) shift ;;
*)
	sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
BUDGET=${GPU_BUDGET_S:-570}
OUT=${OUT:-/tmp/gbt-gpu-out}
mkdir -p "$OUT" || exit 1
WORK=$(mktemp -d /tmp/gbt-gpu-run.XXXXXX) && chmod 755 "$WORK" || exit 1
R=$WORK/$NAME
mkdir -p "$R"
REPORT=

exec > >(tee "$OUT/$NAME-console.log") 2>&1
TEE=$!

# left: seconds the benchmark may still run (15 s kept for the wrap-up).
left() {
	local s=$((BUDGET - (SECONDS - START) - 15))
	[ $s -gt 0 ] || s=1
	echo $s
}

# finish RC: the report and tarball into $OUT, then exit RC.
finish() {
	local rc=$1
	[ "$rc" = 124 ] && echo "$NAME stopped at the time limit (GPU_BUDGET_S=$BUDGET); partial results kept"
	[ -n "$REPORT" ] && [ -f "$REPORT" ] && cp "$REPORT" "$OUT/$NAME-report.${REPORT##*.}"
	tar czf "$OUT/$NAME.tar.gz" -C "$WORK" "$NAME" && rm -rf "$WORK"
	echo "$NAME: exit $rc, total $((SECONDS - START)) s; results in $OUT"
	exec >&- 2>&-
	wait "$TEE" 2>/dev/null
	exit "$rc"
}

build() {
	local src=${GBT_BENCH_SRC:-.}
	[ -f "$src/.commit" ] && export GBT_COMMIT=$(cat "$src/.commit")
	echo "building $src${GBT_COMMIT:+ (commit $GBT_COMMIT)}"
	# Objects built for another PostgreSQL (a warm machine keeps them) go.
	if [ "$(cat "$src/.gbt-built-for" 2>/dev/null)" != "$PG_CONFIG" ]; then
		make -s -C "$src" clean PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1
		echo "$PG_CONFIG" >"$src/.gbt-built-for"
	fi
	make -s -j"$(nproc)" -C "$src" PG_CONFIG="$PG_CONFIG" && make -s -C "$src" install PG_CONFIG="$PG_CONFIG" ||
		{ echo "build failed"; finish 1; }
	echo "built and installed in $((SECONDS - START)) s"
}

echo "test/gpu/run.sh $NAME $*"
date -u +%Y-%m-%dT%H:%M:%SZ
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
echo "cores: $(nproc); memory: $(awk '/MemTotal/ {print int($2/1048576)" GiB"}' /proc/meminfo)"
# The device machine's copy of the tree may carry an older .git: the caller
# names the tree it sent with GBT_TREE (e.g. GBT_TREE=$(git rev-parse --short
# HEAD) on this side).
if [ -n "${GBT_TREE:-}" ]; then
	echo "tree: $GBT_TREE (as sent)"
	export GBT_COMMIT=${GBT_COMMIT:-$GBT_TREE}
else
	echo "tree: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$( [ -n "$(git status --porcelain -uno 2>/dev/null)" ] && echo ' + uncommitted changes')"
fi

if [ "$NAME" != harmonia ]; then
	. test/gpu/setup_pg_bundle.sh || { echo "no PostgreSQL ${GBT_PG:-15} in .gpu/"; finish 1; }
	echo "PostgreSQL: $("$PG_CONFIG" --version)"
fi
[ "$NAME" = harmonia ] || [ "$NAME" = suite ] || build

case "$NAME" in
bench)
	timeout "$(left)" test/bench/run.sh --no-install --rows "${BENCH_ROWS:-24}" \
		--clients "${BENCH_CLIENTS:-1 16 64}" --duration "${BENCH_DURATION:-3}" --out "$R" "$@"
	rc=$?
	[ -f "$R/report.md" ] || python3 test/bench/report.py "$R"
	REPORT=$R/report.md
	;;
agg)
	timeout "$(left)" test/bench/agg.sh "${1:-24}" | tee "$R/agg.md"
	rc=$?
	REPORT=$R/agg.md
	;;
defaults)
	timeout "$(left)" test/bench/defaults.sh "${@:-24}" | tee "$R/defaults.md"
	rc=$?
	REPORT=$R/defaults.md
	;;
restore)
	timeout "$(left)" test/bench/restore.sh "${@:-24}" | tee "$R/restore.md"
	rc=$?
	REPORT=$R/restore.md
	;;
arrays)
	timeout "$(left)" test/bench/bound_arrays.sh "${@:-24}" | tee "$R/arrays.md"
	rc=$?
	REPORT=$R/arrays.md
	;;
mvcc)
	timeout "$(left)" test/bench/mvcc.sh "${1:-24}" | tee "$R/mvcc.md"
	rc=$?
	REPORT=$R/mvcc.md
	;;
analytic)
	# the report is rewritten after every query: a run stopped at the
	# time limit keeps what it measured
	RESULTS=$R BUDGET_S=$(left) timeout "$(left)" test/bench/analytic.sh "${1:-26}"
	rc=$?
	REPORT=$R/analytic-report.md
	;;
clients)
	RESULTS=$R BUDGET_S=$(($(left) - 30)) timeout "$(left)" test/bench/clients.sh "${1:-26}"
	rc=$?
	REPORT=$R/clients-report.md
	;;
citus)
	mkdir -p "$WORK/citus-src" && tar xzf .gpu/citus-src.tar.gz -C "$WORK/citus-src" ||
		{ echo "no Citus source in .gpu/citus-src.tar.gz"; finish 1; }
	CITUS_MINIMAL=1 timeout "$(left)" test/citus/build_citus.sh "$WORK/citus-src" || finish 1
	rm -rf "$WORK/citus-src"
	GPUBTREE_ENGINE=gpu timeout "$(left)" test/citus/run.sh | tee "$R/citus-test.log"
	rc=${PIPESTATUS[0]}
	timeout "$(left)" test/bench/citus.sh "${1:-24}" | tee "$R/citus.md"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	cat "$R/citus-test.log" >>"$R/citus.md"
	REPORT=$R/citus.md
	;;
commit-latency)
	GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
	# "NVIDIA H100 80GB HBM3" -> h100
	label=$(echo "$GPU" | tr 'A-Z' 'a-z' | grep -oE '\b[a-z][0-9]{2,4}[a-z]?\b' | head -1)
	LABEL=${LABEL:-${label:-gpu}} NOPRELOAD=${NOPRELOAD:-1} PGCONF=${PGCONF:-"gpubtree.engine = gpu"} \
		OUT=$R timeout "$(left)" test/bench/commit_latency.sh
	rc=$?
	[ -f "$R/report.md" ] || python3 test/bench/commit_latency_report.py "$R"
	REPORT=$R/report.md
	;;
harmonia)
	export PATH=/usr/local/cuda/bin:$PATH
	B=$WORK/build
	make -C test/harmonia -j4 B="$B" gpu-build >"$R/build.log" 2>&1
	rc=$?
	echo "build rc=$rc" | tee -a "$R/build.log"
	[ $rc = 0 ] || finish $rc
	# Every GPU suite (tree, aggregates, the engine interface) against the CPU twin.
	(time timeout "${T_CHECK:-140}" make -C test/harmonia B="$B" gpu-check) 2>&1 |
		grep -vE '^(make|nvcc|/)' | tee "$R/gpu_check.log"
	rc=${PIPESTATUS[0]}
	(time timeout "${T_BENCH:-230}" "$B/bench" --csv "$R/bench.csv") >"$R/bench.log" 2>&1
	tail -5 "$R/bench.log"
	[ -s "$R/bench.csv" ] && (cd "$R" && python3 "$ROOT/test/harmonia/plot.py" bench.csv >lookups.txt && rm -f plot_*.dat)
	(time timeout "${T_SAN:-140}" compute-sanitizer --error-exitcode 9 "$B/test_gpu" --quick) >"$R/sanitizer.log" 2>&1
	echo "sanitizer rc=$?" >>"$R/sanitizer.log"
	tail -12 "$R/sanitizer.log"
	rm -rf "$B"
	cat "$R/gpu_check.log" "$R/sanitizer.log" >"$R/harmonia.log"
	REPORT=$R/harmonia.log
	;;
suite)
	GPUBTREE_ENGINE=gpu timeout "$(left)" test/run_all.sh "$@" 2>&1 | tee "$R/test-all.log"
	rc=$?
	REPORT=$R/test-all.log
	;;
esac
finish $rc
