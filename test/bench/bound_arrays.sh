#!/usr/bin/env bash
# gpubtree against btree for key lists bound at run time, with shipped
# defaults: k = ANY of an array that is a PL/pgSQL variable in a generic plan
# (as drivers' bound parameters are) and of an InitPlan's result, for
# aggregates and for the rows themselves, and a join of a table of the same
# keys with the index's table.  Tables as in defaults.sh: (k int8, v int8),
# 2^N rows, index on (k) INCLUDE (v), all-visible; 2^K probe keys, half of
# them present.  Each query is timed on both (median of 5 after a warm-up),
# its answers compared; the join on btree under the planner's choice and as a
# nested loop (JOINS=all: hash and merge joins too; the best one counts).  First, the first query after CREATE INDEX (the
# mirror not built yet); last, the same queries after an UPDATE of 1 % of
# the rows, no VACUUM (UPDATE_PCT, 0: none).
#
#   test/bench/bound_arrays.sh [LOG2_ROWS [LOG2_KEYS]]     (default: 24 20)
#   SERVICE_LOG=1: the service's aggregates and lookups of 5 ms or more
#   (DEBUG1) listed at the end; RUNS=N: the median of N runs (default 5)
set -uo pipefail
cd "$(dirname "$0")/../.."
GBT_BUILD_WAIT=   # the shipped default
. test/lib.sh
export LC_ALL=C
LOG2=${1:-24}
KEYS=$((1 << ${2:-20}))
ROWS=$((1 << LOG2))

cluster_throwaway "bench-arrays" "${PORT:-54422}"
. test/bench/compare_lib.sh
if [ "${SERVICE_LOG:-}" = 1 ]; then
	$PSQL -c "ALTER SYSTEM SET log_min_messages = debug1" -c "SELECT pg_reload_conf()" >/dev/null
fi
echo "## 2^$LOG2 rows, $KEYS probe keys"
echo
$PSQL -c "SELECT coalesce(device_name || ' (' || round(device_memory / 2^30) || ' GiB)', status) FROM gpubtree_device_info()" 2>/dev/null
t0=$SECONDS
load_tables $ROWS || exit 1
$PSQL <<SQL || exit 1
VACUUM ANALYZE g;
VACUUM ANALYZE b;
-- Even i: a key present (spread over the table); odd i: one beyond it.
-- Stored as a driver would send it: not compressed.
CREATE TABLE arr (a int8[]);
ALTER TABLE arr ALTER COLUMN a SET STORAGE EXTERNAL;
INSERT INTO arr
	SELECT array_agg(CASE WHEN i % 2 = 0 THEN i * ($ROWS / $KEYS) ELSE $ROWS + i END)
	FROM generate_series(0::int8, $KEYS - 1) i;
-- The same keys as a table, in the array's order.
CREATE TABLE probe AS SELECT unnest(a) AS k FROM arr;
ANALYZE probe;
CREATE INDEX b_k ON b (k) INCLUDE (v);
SQL
# The first query after CREATE INDEX: the mirror is built in the background
# meanwhile, and the query must not wait for it.
$PSQL -c "CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v)" || exit 1
FIRST_Q="SELECT count(*), sum(v) FROM %s WHERE k = ANY ((SELECT a FROM arr)::int8[])"
first_g=$(timed "$(printf "$FIRST_Q" g)")
first_g_answered=$(answered "$(printf "$FIRST_Q" g)")
first_b=$(timed "$(printf "$FIRST_Q" b)")
# Static SQL: PL/pgSQL runs it as a prepared statement with keys as its
# parameter (a generic plan under plan_cache_mode = force_generic_plan).
for t in g b; do
	$PSQL <<SQL || exit 1
CREATE FUNCTION count_$t(keys int8[]) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE
	r text;
BEGIN
	SELECT count(*) || ':' || sum(v) INTO r FROM $t WHERE k = ANY (keys);
	RETURN r;
END \$\$;
CREATE FUNCTION rows_$t(keys int8[]) RETURNS TABLE (k int8, v int8) LANGUAGE plpgsql AS \$\$
BEGIN
	RETURN QUERY SELECT t.k, t.v FROM $t t WHERE t.k = ANY (keys);
END \$\$;
SQL
done
echo "loaded and indexed in $((SECONDS - t0)) s; mirror built in $(wait_mirror) s"

# Where the time goes, on gpubtree (first, so that a run cut short has it;
# the service's own steps with SERVICE_LOG=1 at the end).
echo
echo "EXPLAIN ANALYZE on gpubtree:"
for q in "SELECT count(*), sum(v) FROM g WHERE k = ANY ((SELECT a FROM arr)::int8[])" \
	"SELECT k, v FROM g WHERE k = ANY ((SELECT a FROM arr)::int8[])" \
	"SELECT sum(t.v), count(*) FROM probe p JOIN g t ON t.k = p.k"; do
	echo
	$PSQL -c "EXPLAIN (ANALYZE, VERBOSE) $q" | sed 's/^/    /'
done
echo
echo "| query | btree ms | gpubtree ms | same | gpubtree: what answered |"
echo "|---|---|---|---|---|"
printf '| first count(*), sum(v), k = ANY(InitPlan array) after CREATE INDEX | %s | %s | | %s |\n' \
	"$first_b" "$first_g" "$first_g_answered"

# join_row WHAT QUERY-TEMPLATE: gpubtree's plan against btree's under each
# join method (the others disabled), the fastest counting.
join_row() {
	local q=$2 best= how= m t same
	local methods=("planner's choice:" "nested loop:SET enable_hashjoin = off; SET enable_mergejoin = off;")
	# Hash and merge joins read the whole table: JOINS=all times them too.
	[ "${JOINS:-}" = all ] && methods+=("hash join:SET enable_mergejoin = off; SET enable_nestloop = off;"
		"merge join:SET enable_hashjoin = off; SET enable_nestloop = off;")
	for m in "${methods[@]}"; do
		t=$(median "${m#*:} $(printf "$q" b)")
		if [ -z "$best" ] || awk "BEGIN {exit !($t < $best)}"; then
			best=$t
			how=${m%%:*}
		fi
	done
	same=$([ "$(answer "$(printf "$q" g)")" = "$(answer "$(printf "$q" b)")" ] && echo yes || echo NO)
	printf '| %s | %s (%s) | %s | %s | %s |\n' "$1" "$best" "$how" "$(median "$(printf "$q" g)")" \
		"$same" "$(answered "$(printf "$q" g)")"
}

queries() {
	# A generic plan with the array as its parameter, as a driver binds it.
	(export PGOPTIONS="-c plan_cache_mode=force_generic_plan"; row \
		"count(*), sum(v), k = ANY(\$1), generic plan (PL/pgSQL)" "SELECT count_%s(a) FROM arr" median)
	row "count(*), k = ANY(InitPlan array)" \
		"SELECT count(*) FROM %s WHERE k = ANY ((SELECT a FROM arr)::int8[])" median
	row "sum(v), k = ANY(InitPlan array)" \
		"SELECT sum(v) FROM %s WHERE k = ANY ((SELECT a FROM arr)::int8[])" median
	row "count(*), k = ANY(ARRAY(subquery))" \
		"SELECT count(*) FROM %s WHERE k = ANY (ARRAY(SELECT unnest(a) FROM arr))" median
	(export PGOPTIONS="-c plan_cache_mode=force_generic_plan"; row \
		"rows k, v, k = ANY(\$1), generic plan (PL/pgSQL RETURN QUERY)" \
		"SELECT count(*), sum(v) FROM rows_%s((SELECT a FROM arr))" median)
	row "rows k, v, k = ANY(InitPlan array), to the client (COPY)" \
		"COPY (SELECT k, v FROM %s WHERE k = ANY ((SELECT a FROM arr)::int8[])) TO STDOUT" median
	join_row "join: sum(t.v), count(*) FROM probe JOIN t ON t.k = probe.k" \
		"SELECT sum(t.v), count(*) FROM probe p JOIN %s t ON t.k = p.k"
}
queries

if [ "${UPDATE_PCT:-1}" != 0 ]; then
	echo
	t0=$SECONDS
	for t in g b; do
		$PSQL -c "UPDATE $t SET v = v + 1 WHERE k % 100 < ${UPDATE_PCT:-1}" >/dev/null || exit 1
	done
	echo "After an UPDATE of ${UPDATE_PCT:-1} % of the rows of each table ($((SECONDS - t0)) s for both), no VACUUM:"
	echo
	echo "| query | btree ms | gpubtree ms | same | gpubtree: what answered |"
	echo "|---|---|---|---|---|"
	queries
fi

if [ "${SERVICE_LOG:-}" = 1 ]; then
	echo
	echo "The service's aggregates and lookups of 5 ms or more:"
	echo
	grep -h "gpubtree service: aggregate" "$DIR/server.log" | sed 's/^.*gpubtree service: /    /' | tail -40
fi
