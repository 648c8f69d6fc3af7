#!/usr/bin/env bash
# test/bench/agg.sh: range aggregates through the GpubtreeAggregate node
# (the GPU service) against btree, in one run on one cluster.  Tables of 2^N
# rows (k int8 unique, v int8), index on (k) INCLUDE (v): a gpubtree table
# and a btree twin.  count(*) and sum(v) over 0.01%, 1%, 10% and 100% key
# ranges, first all-visible (after VACUUM), then with 5% of the heap pages
# not all-visible (one row updated on every 20th page, no VACUUM).  Each
# query: one warm-up, then the median of 5 runs of psql's \timing.  btree
# gets PostgreSQL's best plan (parallel index-only scans).  Prints a
# Markdown table and the EXPLAIN ANALYZE of the 10% sums (stdout only).
# Uses the installed extension; on the GPU machine: test/gpu/run.sh agg.
#
#   test/bench/agg.sh [LOG2_ROWS=24]
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
LOG2=${1:-24}
ROWS=$((1 << LOG2))

DIR=$(mktemp -d /tmp/gpubtree-abench.XXXXXX)
PORT=${PORT:-54411}
trap 'cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "$PORT" || exit 1
cat >>"$DIR/data/postgresql.conf" <<CONF
shared_buffers = '${SHARED_BUFFERS:-16GB}'
work_mem = '1GB'
maintenance_work_mem = '4GB'
max_parallel_workers_per_gather = 8
max_parallel_maintenance_workers = 8
max_worker_processes = 24
max_parallel_workers = 16
jit = off
autovacuum = off
gpubtree.mirror_memory_limit = 65536
CONF
cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1"

. test/bench/compare_lib.sh	# load_tables; this script's own helpers follow

t0=$(date +%s)
load_tables $ROWS || exit 1
$PSQL <<SQL || exit 1
CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v);
CREATE INDEX b_k ON b (k) INCLUDE (v);
VACUUM ANALYZE g;
VACUUM ANALYZE b;
SQL
echo "loaded 2^$LOG2 rows in $(( $(date +%s) - t0 )) s"

# median_ms QUERY: median of 5 timed runs after one warm-up.
median_ms() {
	$PSQL -c '\timing on' -c "$1" -c "$1" -c "$1" -c "$1" -c "$1" -c "$1" |
		grep '^Time:' | tail -5 | awk '{print $2}' | sort -n | sed -n 3p
}
# answered QUERY: what answered the GpubtreeAggregate node.
answered() {
	$PSQL -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $1" |
		grep -E 'Answered by|Entries Checked' | sed 's/^ *//' | paste -sd ';' -
}

run_phase() {
	local phase=$1 pct q lo hi what
	for pct in 0.01 1 10 100; do
		lo=$(( ROWS / 3 ))
		hi=$(awk -v r=$ROWS -v p=$pct -v lo=$lo 'BEGIN { n = int(r * p / 100); if (p == 100) { print r } else print lo + n - 1 }')
		[ "$pct" = 100 ] && lo=0
		for what in "count(*)" "sum(v)"; do
			q="SELECT $what FROM %s WHERE k BETWEEN $lo AND $hi"
			g=$(median_ms "$(printf "$q" g)")
			b=$(median_ms "$(printf "$q" b)")
			same=$([ "$($PSQL -c "$(printf "$q" g)")" = "$($PSQL -c "$(printf "$q" b)")" ] && echo yes || echo NO)
			echo "| $phase | $what | $pct% | $g | $b | $(awk -v g=$g -v b=$b 'BEGIN { printf "%.1f", b / g }') | $same | $(answered "$(printf "$q" g)") |"
		done
	done
}

echo
echo "| heap | aggregate | range | gpubtree ms | btree ms | speed-up | same result | gpubtree node |"
echo "|---|---|---|---|---|---|---|---|"
run_phase "all-visible"
$PSQL <<SQL || exit 1
UPDATE g SET v = v WHERE ctid = ANY (ARRAY(SELECT format('(%s,1)', p)::tid FROM generate_series(0, pg_relation_size('g') / 8192 - 1, 20) p));
UPDATE b SET v = v WHERE ctid = ANY (ARRAY(SELECT format('(%s,1)', p)::tid FROM generate_series(0, pg_relation_size('b') / 8192 - 1, 20) p));
SQL
echo "pages not all-visible: g $($PSQL -c "SELECT round(100 - 100.0 * (SELECT count(*) FROM pg_visibility_map('g') WHERE all_visible) / (pg_relation_size('g') / 8192), 2)" 2>/dev/null || echo '?')%"
run_phase "5% pages not all-visible"

echo
$PSQL -c "SELECT 'service: ' || status || ', requests ' || requests || ', builds ' || mirror_builds || ', fallbacks ' || fallbacks FROM gpubtree_status()"
$PSQL -c "SELECT 'mirror: ' || engine || ', ' || entries || ' entries, ' || round(bytes / 1048576.0) || ' MB, built in ' || round(build_ms::numeric, 1) || ' ms' FROM gpubtree_mirrors()"
echo
q="SELECT sum(v) FROM %s WHERE k BETWEEN $((ROWS / 3)) AND $((ROWS / 3 + ROWS / 10 - 1))"
$PSQL -c "EXPLAIN (ANALYZE, VERBOSE) $(printf "$q" g)"
$PSQL -c "EXPLAIN (ANALYZE) $(printf "$q" b)"
