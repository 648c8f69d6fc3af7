#!/usr/bin/env bash
# Crash test: several sessions load a table with two gpubtree indexes
# (committed, rolled-back and in-flight transactions); the server is stopped
# with `pg_ctl stop -m immediate` in the middle and restarted (WAL recovery).
# Then: every transaction whose COMMIT was acknowledged survived, whole (and
# no other did, not even in part), and the gpubtree indexes answer exactly as
# a sequential scan and a freshly built btree do, under index, index-only and
# bitmap scans (full sorted outputs compared); amcheck verifies them.
# Writing goes on after recovery and is checked again.  Two crash cycles.
#   test/crash/run.sh          GPUBTREE_ENGINE=gpu sets gpubtree.engine,
#                              GPUBTREE_DEVICE=off gpubtree.device
set -uo pipefail
cd "$(dirname "$0")/../.."
GBT_QUIET_OK=1
. test/lib.sh

DIR=$(mktemp -d /tmp/gpubtree-crash.XXXXXX)
PORT=${PORT:-54407}
trap 'kill $(jobs -p) 2>/dev/null; cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "$PORT" && cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
export PGOPTIONS="-c gpubtree.min_gpu_batch=2 -c gpubtree.enable_lookup=off ${GPUBTREE_DEVICE:+-c gpubtree.device=$GPUBTREE_DEVICE}"
PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1"

$PSQL -c "CREATE EXTENSION gpubtree" >/dev/null ||
	{ echo "CREATE EXTENSION gpubtree failed: run make install first"; echo "0 passed, 1 failed"; exit 1; }
$PSQL <<'SQL' || exit 1
CREATE EXTENSION amcheck;
-- tx: the transaction that inserted the row.  Only rows with k2 = 3 are ever
-- deleted, and updates change k only, so a committed transaction's other 17
-- rows must all be there.
CREATE TABLE c (tx int8, k int8, k2 int4, v float8) WITH (autovacuum_enabled = off);
CREATE INDEX c_k ON c USING gpubtree (k) INCLUDE (v);
CREATE INDEX c_k2k ON c USING gpubtree (k2 DESC NULLS FIRST, k);
CREATE TABLE committed (tx int8 PRIMARY KEY);
SQL


# load TAG [N]: N transactions, or until the server goes away; psql echoes
# each acknowledged commit's id into $DIR/acked.TAG.  Each writer updates and
# deletes only its own rows (no deadlocks); every 5th transaction rolls back.
load() {
	local tag=$1 i
	for i in $(seq 1 "${2:-200000}"); do
		local tx=$((tag * 1000000 + i)) k=$(( (i * 7919 + tag) % 5000 )) own="tx / 1000000 = $tag"
		echo "BEGIN;
INSERT INTO c SELECT $tx, CASE WHEN g = 20 THEN NULL ELSE $k + g % 50 END, g % 7, g / 3.0 FROM generate_series(1, 20) g;
UPDATE c SET k = k + 1 WHERE k = $((k + 3)) AND $own;
UPDATE c SET k = NULL WHERE k = $((k + 5)) AND k2 = 6 AND $own;
DELETE FROM c WHERE k = $((k + 11)) AND k2 = 3 AND $own;
INSERT INTO committed VALUES ($tx);"
		if [ $((i % 5)) = 0 ]; then echo "ROLLBACK;"; else echo "COMMIT;"; echo "\\echo $tx"; fi
	done | $PSQL >"$DIR/acked.$tag" 2>/dev/null
}

# same QUERY: the query's output through each gpubtree plan shape (which
# EXPLAIN must show on a gpubtree index) and through freshly built btree
# indexes equals a sequential scan's.
same() {
	local q=$1 shape node
	echo "SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q;" |
		$PSQL >"$DIR/expected" || echo "(query failed)" >"$DIR/expected"
	for shape in "Index Scan:enable_bitmapscan = off; SET enable_indexonlyscan = off" \
		"Index Only Scan:enable_bitmapscan = off" \
		"Bitmap Index Scan:enable_indexscan = off; SET enable_indexonlyscan = off"; do
		node=${shape%%:*} shape=${shape#*:}
		echo "SET enable_seqscan = off; SET $shape; $q;" | $PSQL >"$DIR/got" 2>&1
		compare "$node on gpubtree: $q"
		echo "SET enable_seqscan = off; SET $shape; EXPLAIN (COSTS OFF) $q;" | $PSQL | grep -Eq "$node.* c_k"
		check "EXPLAIN shows a $node on a gpubtree index: $q" "$?" 0
	done
	echo "BEGIN; DROP INDEX c_k, c_k2k; CREATE INDEX ON c (k) INCLUDE (v); CREATE INDEX ON c (k2 DESC NULLS FIRST, k);
		SET LOCAL enable_seqscan = off; $q; ROLLBACK;" | $PSQL >"$DIR/got" 2>&1
	compare "fresh btree: $q"
}
compare() {
	if cmp -s "$DIR/got" "$DIR/expected"; then
		passed=$((passed + 1))
	else
		echo "FAILED: $1: $(wc -l <"$DIR/got") rows, a sequential scan gives $(wc -l <"$DIR/expected"):"
		diff "$DIR/expected" "$DIR/got" | head -6 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

verify() {
	local label=$1
	echo "$label:"
	cat "$DIR"/acked.* | sort >"$DIR/acked"
	$PSQL -c "SELECT tx FROM committed" | sort >"$DIR/committed"
	check "acknowledged commits missing (of $(wc -l <"$DIR/acked"))" "$(comm -23 "$DIR/acked" "$DIR/committed" | wc -l)" 0
	check "rolled-back transactions present" "$($PSQL -c "SELECT count(*) FROM committed WHERE tx % 5 = 0")" 0
	check "transactions with partial rows, or rows without a commit" "$($PSQL -c "
		SELECT count(*) FROM (SELECT tx, count(*) AS n FROM c WHERE k2 <> 3 GROUP BY tx) r
		FULL JOIN committed USING (tx) WHERE r.n IS DISTINCT FROM 17")" 0
	same "SELECT k, v FROM c WHERE k BETWEEN 100 AND 3900 ORDER BY k, v"
	same "SELECT k, v FROM c WHERE k = ANY ('{7,100,101,2500,4999,NULL}') ORDER BY k, v"
	same "SELECT count(*), sum(k), min(k), max(k) FROM c WHERE k >= 0"
	same "SELECT count(*), sum(v::numeric) FROM c WHERE k IS NULL"
	same "SELECT k2, k FROM c WHERE k2 < 4 AND k > 10 ORDER BY k2 DESC, k"
	same "SELECT k2, k FROM c WHERE k2 IS NULL OR k2 >= 0 ORDER BY k2, k"
	$PSQL -c "SELECT gpubtree_index_check('c_k', true, true)" -c "SELECT gpubtree_index_check('c_k2k', true, true)" >/dev/null
	check "amcheck verifies both gpubtree indexes" "$?" 0
	# The service's mirror, rebuilt after the restart by the bitmap scans above.
	check "gpubtree_verify: the mirror of c_k holds the index's entries" \
		"$($PSQL -c "SET enable_seqscan = off" -c "SET enable_indexscan = off" \
			-c "SELECT count(*) FROM c WHERE k BETWEEN 0 AND 10" \
			-c "SELECT count(*) || ' problems' || coalesce(', first: ' || min(problem), '') FROM gpubtree_verify('c_k')" | tail -1)" "0 problems"
	echo "  $($PSQL -c "SELECT count(*) FROM c") rows, $(wc -l <"$DIR/committed") committed transactions; $passed checks passed, $failed failed so far"
}

for cycle in 1 2; do
	for w in 1 2 3 4; do load $((cycle * 10 + w)) & done
	# One big transaction still in flight at the crash: none of it may survive.
	echo "BEGIN; INSERT INTO c SELECT -$cycle, g % 5000, g % 7, g FROM generate_series(1, 20000) g;
		SELECT pg_sleep(600);" | $PSQL >/dev/null 2>&1 &
	sleep 6
	cluster_stop "$DIR" immediate
	wait 2>/dev/null
	cluster_start "$DIR" || { echo "restart failed"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
	check "cycle $cycle: transactions committed before the crash" "$(( $(cat "$DIR"/acked.${cycle}[1-4] | wc -l) > 20 ))" 1
	verify "cycle $cycle, after recovery"
	load $((cycle * 10 + 9)) 300
	$PSQL -c "VACUUM c" # vacuum of the recovered indexes
	verify "cycle $cycle, after more writes and VACUUM"
done

echo "crash test: $([ $failed = 0 ] && echo ok || echo FAILED)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
