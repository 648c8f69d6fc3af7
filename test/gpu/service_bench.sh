#!/usr/bin/env bash
# Issue 4's benchmark: bitmap scans through the GPU service against btree, in
# one run on one cluster.  count(*) WHERE k = ANY(array of K keys), and 1% and
# 10% key-range bitmap scans, on a gpubtree table and a btree twin of 2^N rows
# (k int8, v int8; index on (k) INCLUDE (v); all-visible); plus single-key
# lookups from 16 pgbench clients.  Each query: one warm-up, then the median
# of 5 runs of psql's \timing.  Prints a Markdown table.
#
#   test/gpu/service_bench.sh [LOG2_ROWS=24] [ANY_KEYS=1000000]
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
LOG2=${1:-24}
NKEYS=${2:-1000000}
ROWS=$((1 << LOG2))

DIR=$(mktemp -d /tmp/gpubtree-sbench.XXXXXX)
PORT=${PORT:-54406}
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
gpubtree.mirror_memory_limit = 32768
CONF
cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1"

t0=$(date +%s)
$PSQL <<SQL || exit 1
CREATE EXTENSION gpubtree;
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT (i::int8 * 2654435761) % $ROWS, i FROM generate_series(0, $ROWS - 1) i;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v);
CREATE INDEX b_k ON b (k) INCLUDE (v);
VACUUM ANALYZE g;
VACUUM ANALYZE b;
CREATE TABLE anykeys AS SELECT array_agg((i::int8 * 40503) % ($ROWS * 2)) AS a
  FROM generate_series(1, $NKEYS) i;
SQL
echo "loaded 2^$LOG2 rows in $(( $(date +%s) - t0 )) s"

# median_ms SETTINGS QUERY: median of 5 timed runs after one warm-up.
median_ms() {
	$PSQL -c "$1" -c '\timing on' -c "$2" -c "$2" -c "$2" -c "$2" -c "$2" -c "$2" |
		grep '^Time:' | tail -5 | awk '{print $2}' | sort -n | sed -n 3p
}
BITMAP="SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;"
ANY="SELECT count(*) FROM %s WHERE k = ANY ((SELECT a FROM anykeys)::int8[])"
R1="SELECT count(*), sum(v) FROM %s WHERE k >= $((ROWS / 2)) AND k < $((ROWS / 2 + ROWS / 100))"
R10="SELECT count(*), sum(v) FROM %s WHERE k >= $((ROWS / 4)) AND k < $((ROWS / 4 + ROWS / 10))"

check_same() {
	local a b
	a=$($PSQL -c "$BITMAP" -c "$(printf "$1" g)")
	b=$($PSQL -c "$(printf "$1" b)")
	[ "$a" = "$b" ] && echo same || echo "DIFFERENT ($a vs $b)"
}

echo
echo "| query (2^$LOG2 rows) | gpubtree, bitmap via service (ms) | btree, planner's choice (ms) | btree, bitmap (ms) | speed-up vs btree's best | answers |"
echo "|---|---|---|---|---|---|"
for name in ANY R1 R10; do
	q=${!name}
	g=$(median_ms "$BITMAP" "$(printf "$q" g)")
	bp=$(median_ms "SELECT 1" "$(printf "$q" b)")
	bb=$(median_ms "$BITMAP" "$(printf "$q" b)")
	best=$(echo "$bp $bb" | awk '{print ($1 < $2) ? $1 : $2}')
	label=$name
	[ $name = ANY ] && label="count(*) k = ANY($NKEYS keys)"
	[ $name = R1 ] && label="count, sum(v) over 1% range"
	[ $name = R10 ] && label="count, sum(v) over 10% range"
	echo "| $label | $g | $bp | $bb | $(echo "$best $g" | awk '{printf "%.1fx", $1 / $2}') | $(check_same "$q") |"
done

# Single-key lookups must not get slower: they stay on nbtree.
for tbl in g b; do
	printf '\\set k random(0, %d)\nSELECT v FROM %s WHERE k = :k;\n' $((ROWS - 1)) $tbl >"$DIR/point_$tbl.sql"
	tps=$("$PGBIN/pgbench" -n -M prepared -c 16 -j 16 -T 10 -f "$DIR/point_$tbl.sql" postgres 2>/dev/null |
		grep -oE 'tps = [0-9.]+' | awk '{print $3}')
	echo "| single-key lookups, 16 clients, $tbl | ${tps} tps |"
done
echo
$PSQL -c "SELECT 'service: ' || status || ', requests ' || requests || ', builds ' || mirror_builds || ', fallbacks ' || fallbacks FROM gpubtree_status()"
$PSQL -c "SELECT 'mirror: ' || engine || ', ' || entries || ' entries, built in ' || round(build_ms::numeric, 1) || ' ms' FROM gpubtree_mirrors()"
