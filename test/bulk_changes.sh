#!/usr/bin/env bash
# Bulk changes through a change log smaller than they are: a transaction
# that changes many rows, and many transactions in a row, stream through the
# log (the writer waits for the service to make room) and keep the mirror
# current, with answers equal to btree's, also past tens of thousands of
# transaction IDs; only a transaction that inserts more than an eighth of
# the mirror invalidates it, as a bulk load should.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh

cluster_throwaway bulk "${PORT:-54406}"
# The smallest log (4096 entries): every change below is larger than it.
$PSQL -c "ALTER SYSTEM SET gpubtree.change_log_size = 4096" >/dev/null
cluster_stop "$DIR"
cluster_start "$DIR" || exit 1

$PSQL <<'SQL' || exit 1
CREATE EXTENSION gpubtree;
CREATE TABLE t (k int8, v int8);
INSERT INTO t SELECT g, g % 1000 FROM generate_series(1, 200000) g;
CREATE TABLE b AS SELECT * FROM t;
CREATE INDEX t_k ON t USING gpubtree (k) INCLUDE (v);
CREATE INDEX b_k ON b (k) INCLUDE (v);
VACUUM ANALYZE t;
VACUUM ANALYZE b;
SQL
stat() { $PSQL -c "SELECT $1 FROM gpubtree_status()"; }
for _ in $(seq 1 60); do [ "$(stat running)" = t ] && break; sleep 0.5; done

# answers TABLE: a bitmap scan's range and = ANY, and range aggregates.
answers() {
	$PSQL -c "SET enable_seqscan = off" -c "SET enable_indexscan = off" \
		-c "SET enable_indexonlyscan = off" -c "SET max_parallel_workers_per_gather = 0" \
		-c "SET gpubtree.enable_lookup = off" \
		-c "SELECT count(*) || ':' || sum(v) FROM $1 WHERE k BETWEEN 1000 AND 150000" \
		-c "SELECT count(*) || ':' || sum(v) FROM $1 WHERE k = ANY (ARRAY(SELECT generate_series(0, 250000, 3)::int8))" \
		-c "RESET ALL" \
		-c "SELECT count(*) || ':' || sum(v) || ':' || min(v) || ':' || max(v) FROM $1 WHERE k BETWEEN 20000 AND 260000"
}
mirror() { $PSQL -c "SELECT count(*) FROM gpubtree_mirrors() WHERE index = 't_k'::regclass AND current"; }

check "first answers" "$(answers t)" "$(answers b)"
check "a current mirror" "$(mirror)" 1
inv0=$(stat invalidations)
builds0=$(stat mirror_builds)

# 1. One transaction updates 20000 rows: five times the log, a tenth of
#    the mirror (INCLUDE v changes, so each update is a new index entry).
$PSQL -c "UPDATE t SET v = v + 1 WHERE k % 10 = 3" || exit 1
$PSQL -c "UPDATE b SET v = v + 1 WHERE k % 10 = 3" || exit 1
check "large update: answers" "$(answers t)" "$(answers b)"
check "large update: no invalidation" "$(stat invalidations)" "$inv0"
check "large update: the mirror stays current" "$(mirror)" 1
check "large update: no rebuild" "$(stat mirror_builds)" "$builds0"
check "large update: the mirror holds the index" "$($PSQL -c "SELECT count(*) FROM gpubtree_verify('t_k')")" 0

# 2. Forty transactions of 1000 rows each, back to back: ten logs' worth.
$PSQL <<'SQL' || exit 1
DO $$
BEGIN
	FOR i IN 0..39 LOOP
		UPDATE t SET v = v - 1 WHERE k % 200 = i;
		UPDATE b SET v = v - 1 WHERE k % 200 = i;
		COMMIT;
	END LOOP;
END $$;
SQL
check "many transactions: answers" "$(answers t)" "$(answers b)"
check "many transactions: no invalidation" "$(stat invalidations)" "$inv0"
check "many transactions: no rebuild" "$(stat mirror_builds)" "$builds0"

# 3. After VACUUM the aggregate is answered from the same mirror.
$PSQL -c "VACUUM t" -c "VACUUM b" || exit 1
check "after VACUUM: answers" "$(answers t)" "$(answers b)"
check "after VACUUM: answered by the service" \
	"$($PSQL -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT sum(v) FROM t WHERE k BETWEEN 20000 AND 260000" |
		grep -c 'Answered by: GPU service')" 1
check "after VACUUM: no rebuild" "$(stat mirror_builds)" "$builds0"

# 4. 40000 small transactions from 4 sessions: more transaction IDs than the
#    service's table of outcomes first holds (65536 / 2 behind the horizon
#    makes it move), its stamps settled as the horizon moves on.
inv1=$(stat invalidations)	# VACUUM's sweep moved the mirror to a new generation
printf '%s\n' '\set id random(1, 200000)' 'BEGIN;' \
	'UPDATE t SET v = v + 1 WHERE k = :id;' 'UPDATE b SET v = v + 1 WHERE k = :id;' 'END;' >"$DIR/churn.sql"
"$PGBIN/pgbench" -n -c 4 -t 10000 -f "$DIR/churn.sql" >"$DIR/churn.out" 2>&1 || { cat "$DIR/churn.out"; exit 1; }
check "churn: answers" "$(answers t)" "$(answers b)"
check "churn: answered by the service" \
	"$($PSQL -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT sum(v) FROM t WHERE k BETWEEN 20000 AND 260000" |
		grep -c 'Answered by: GPU service')" 1
check "churn: no invalidation" "$(stat invalidations)" "$inv1"
check "churn: the mirror holds the index" "$($PSQL -c "SELECT count(*) FROM gpubtree_verify('t_k')")" 0

# 5. A bulk load larger than an eighth of the mirror invalidates it instead.
$PSQL -c "INSERT INTO t SELECT g, g % 7 FROM generate_series(200001, 240000) g" \
	-c "INSERT INTO b SELECT g, g % 7 FROM generate_series(200001, 240000) g" >/dev/null || exit 1
check "bulk load: invalidated" "$(( $(stat invalidations) > inv0 ))" 1
check "bulk load: answers" "$(answers t)" "$(answers b)"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
