#!/usr/bin/env bash
# gpubtree against btree for key lists bound at run time, with shipped
# defaults: k = ANY of an array that is a PL/pgSQL variable in a generic plan
# (as drivers' bound parameters are) and of an InitPlan's result.  Tables as
# in defaults.sh: (k int8, v int8), 2^N rows, index on (k) INCLUDE (v),
# all-visible; 2^K probe keys, half of them present.  Each query is timed
# on both (median of 5 after a warm-up), its answers compared.
#
#   test/bench/bound_arrays.sh [LOG2_ROWS [LOG2_KEYS]]     (default: 24 20)
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
echo "## 2^$LOG2 rows, $KEYS probe keys"
echo
$PSQL -c "SELECT coalesce(device_name || ' (' || round(device_memory / 2^30) || ' GiB)', status) FROM gpubtree_device_info()" 2>/dev/null
t0=$SECONDS
load_tables $ROWS || exit 1
$PSQL <<SQL || exit 1
CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v);
CREATE INDEX b_k ON b (k) INCLUDE (v);
VACUUM ANALYZE g;
VACUUM ANALYZE b;
-- Even i: a key present (spread over the table); odd i: one beyond it.
CREATE TABLE arr AS
	SELECT array_agg(CASE WHEN i % 2 = 0 THEN i * ($ROWS / $KEYS) ELSE $ROWS + i END) AS a
	FROM generate_series(0::int8, $KEYS - 1) i;
SQL
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
SQL
done
echo "loaded and indexed in $((SECONDS - t0)) s; mirror built in $(wait_mirror) s"
echo
echo "| query | btree ms | gpubtree ms | same | gpubtree: what answered |"
echo "|---|---|---|---|---|"
# A generic plan with the array as its parameter, as a driver binds it.
export PGOPTIONS="-c plan_cache_mode=force_generic_plan"
row "count(*), sum(v), k = ANY(\$1), generic plan (PL/pgSQL)" \
	"SELECT count_%s(a) FROM arr" median
row "count(*), k = ANY(InitPlan array)" \
	"SELECT count(*) FROM %s WHERE k = ANY ((SELECT a FROM arr)::int8[])" median
row "sum(v), k = ANY(InitPlan array)" \
	"SELECT sum(v) FROM %s WHERE k = ANY ((SELECT a FROM arr)::int8[])" median
row "count(*), k = ANY(ARRAY(subquery))" \
	"SELECT count(*) FROM %s WHERE k = ANY (ARRAY(SELECT unnest(a) FROM arr))" median
