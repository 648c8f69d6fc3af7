#!/usr/bin/env bash
# gpubtree against btree on Citus, with shipped defaults: a coordinator and
# two workers on one host (test/citus/lib.sh), tables g (gpubtree) and b
# (btree) (id int8, k int8, v int8) of 2^N rows distributed by id over 32
# shards, index on (k) INCLUDE (v), all-visible.  Range aggregates over
# 0.01 %, 10 % and 100 % of the keys and = ANY of 2^16 keys (aggregate and
# rows) are pushed down to the shards; each is timed on both (median of 5
# after a warm-up), its answers compared, and how many shard tasks the
# services answered is counted (citus.explain_all_tasks).
#
#   test/bench/citus.sh [LOG2_ROWS]     (default 22; Citus installed, or
#                                        CITUS_SRC to build it first)
set -uo pipefail
cd "$(dirname "$0")/../.."
GBT_BUILD_WAIT=   # the shipped default
. test/lib.sh
. test/citus/lib.sh
export LC_ALL=C
LOG2=${1:-22}
ROWS=$((1 << LOG2))

citus_ready || exit 0
citus_cluster "${PORT:-54470}" >/dev/null || exit 1
PSQL="psql_at 0"
. test/bench/compare_lib.sh

echo "## Citus, a coordinator and 2 workers on one host, 2^$LOG2 rows in 32 shards"
echo
psql_at 1 -c "SELECT coalesce(device_name || ' (' || round(device_memory / 2^30) || ' GiB)', status) FROM gpubtree_device_info()" 2>/dev/null
t0=$SECONDS
C <<SQL || exit 1
CREATE TABLE g (id int8, k int8, v int8);
SELECT create_distributed_table('g', 'id');
CREATE TABLE b (id int8, k int8, v int8);
SELECT create_distributed_table('b', 'id', colocate_with := 'g');
INSERT INTO g SELECT i, (i * 2654435761) % $ROWS, i FROM generate_series(0::int8, $ROWS - 1) i;
INSERT INTO b SELECT * FROM g;
CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v);
CREATE INDEX b_k ON b (k) INCLUDE (v);
VACUUM ANALYZE g;
VACUUM ANALYZE b;
CREATE TABLE arr AS SELECT array_agg(i * ($ROWS / 32768)) AS a FROM generate_series(0::int8, 65535) i;
SQL
# Mirrors are built in the background when a query first asks (a small
# shard's plans may never ask; gpubtree_count() always does, and never
# waits): ask, and wait until every shard's is current (at most 10 minutes).
for _ in $(seq 1 600); do
	C -c "SELECT count(*) FROM run_command_on_shards('g', \$\$SELECT gpubtree_count(indexrelid::regclass, 0, 0)
		FROM pg_index WHERE indrelid = '%s'::regclass\$\$)" >/dev/null
	done=$(($(psql_at 1 -c "SELECT count(*) FROM gpubtree_mirrors() WHERE current") +
		$(psql_at 2 -c "SELECT count(*) FROM gpubtree_mirrors() WHERE current")))
	[ "$done" -ge 32 ] && break
	sleep 1
done
echo "loaded, indexed and mirrored in $((SECONDS - t0)) s ($done shard mirrors current)"
echo
echo "| query | btree ms | gpubtree ms | same | shard tasks answered by the service |"
echo "|---|---|---|---|---|"
# crow WHAT QUERY-TEMPLATE NODE: a row, the tasks counted on gpubtree.
crow() {
	local gt bt same
	gt=$(median "$(printf "$2" g)")
	bt=$(median "$(printf "$2" b)")
	same=$([ "$(answer "$(printf "$2" g)" | sort | md5sum)" = "$(answer "$(printf "$2" b)" | sort | md5sum)" ] &&
		echo yes || echo NO)
	printf '| %s | %s | %s | %s | %s of 32 |\n' "$1" "$bt" "$gt" "$same" \
		"$(citus_tasks "" "" "$3" "$(printf "$2" g)" | cut -d/ -f2)"
}
for pct in 0.01 10 100; do
	hi=$(awk "BEGIN {printf \"%d\", $ROWS * $pct / 100 - 1}")
	crow "count(*), sum(v), $pct % of the keys" \
		"SELECT count(*), sum(v) FROM %s WHERE k BETWEEN 0 AND $hi" GpubtreeAggregate
done
crow "count(*), sum(v), k = ANY(2^16 keys, InitPlan)" \
	"SELECT count(*), sum(v) FROM %s WHERE k = ANY ((SELECT a FROM arr)::int8[])" GpubtreeAggregate
crow "rows k, v, k = ANY(2^16 keys, InitPlan)" \
	"SELECT k, v FROM %s WHERE k = ANY ((SELECT a FROM arr)::int8[])" GpubtreeLookup
