#!/usr/bin/env bash
# Crash under load: pgbench clients insert, update and delete in
# transactions (some rolled back), VACUUM, and run GPU bitmap scans
# (ranges and = ANY, also inside their writing transactions) on a table with
# two gpubtree indexes and a plain btree copy of one of them.  Then
#   (a) one client backend is killed with SIGKILL: the postmaster restarts
#       every backend and the GPU service (crash recovery);
#   (b) the server is stopped with `pg_ctl stop -m immediate` and restarted;
#   (c) the load simply ends (no crash).
# After each: the service runs again; GPU bitmap scans (served by the
# service, not by nbtree) give the same count and sums over several ranges,
# and the same full sorted row lists, as a sequential scan and as the btree
# index; gpubtree_verify() finds no problem in the mirror of either gpubtree
# index; amcheck (gpubtree_index_check with heapallindexed and parent)
# verifies them.
#   test/crash/kill_load.sh      CLIENTS=6 LOAD_S=6; GPUBTREE_ENGINE=gpu
set -uo pipefail
cd "$(dirname "$0")/../.."
GBT_QUIET_OK=1
. test/lib.sh
CLIENTS=${CLIENTS:-6}
LOAD_S=${LOAD_S:-6}

DIR=$(mktemp -d /tmp/gpubtree-killload.XXXXXX)
PORT=${PORT:-54409}
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "$PORT" && cluster_start "$DIR" || { echo "0 passed, 1 failed"; exit 1; }
cluster_env "$DIR" "$PORT"
DEV=${GPUBTREE_DEVICE:+-c gpubtree.device=$GPUBTREE_DEVICE}
export PGOPTIONS="$DEV"
PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1"
# Forced bitmap scans; = ANY of two or more keys goes to the service.
BITMAP="SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;
SET max_parallel_workers_per_gather = 0; SET gpubtree.min_gpu_batch = 2; SET gpubtree.enable_lookup = off;"
SEQ="SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;"


$PSQL -c "CREATE EXTENSION gpubtree" >/dev/null ||
	{ echo "CREATE EXTENSION gpubtree failed: run make install first"; echo "0 passed, 1 failed"; exit 1; }
$PSQL <<'SQL' || { echo "0 passed, 1 failed"; exit 1; }
CREATE EXTENSION amcheck;
CREATE TABLE kl (id bigserial PRIMARY KEY, k int8, k2 int4, v float8) WITH (autovacuum_enabled = off);
INSERT INTO kl (k, k2, v) SELECT (g * 7919) % 100000, g % 13, g / 4.0 FROM generate_series(1, 100000) g;
CREATE INDEX kl_k ON kl USING gpubtree (k) INCLUDE (v);
CREATE INDEX kl_k2 ON kl USING gpubtree (k2, k);
CREATE INDEX kl_k_bt ON kl (k) INCLUDE (v);
VACUUM ANALYZE kl;
SQL

# The load.  Each writing transaction takes at most one row lock (no
# deadlocks), and does its GPU scan last, after all its index inserts (so
# even the rolled-back ones have logged every entry: see the isolation test
# rollback.spec for the other case).
W=$DIR/pgbench
mkdir -p "$W"
cat >"$W/write.sql" <<'SQL'
\set k random(0, 99990)
\set id random(1, 130000)
\set r random(0, 4)
BEGIN;
INSERT INTO kl (k, k2, v) SELECT :k + g, (:k + g) % 13, g FROM generate_series(1, 8) g;
UPDATE kl SET k = k + 3, v = v + 1 WHERE id = :id;
SELECT count(*), sum(v) FROM (SELECT v FROM kl WHERE k BETWEEN :k AND :k + 20 OFFSET 0) s;
\if :r = 0
ROLLBACK;
\else
COMMIT;
\endif
SQL
cat >"$W/delete.sql" <<'SQL'
\set id random(1, 130000)
DELETE FROM kl WHERE id = :id;
SQL
cat >"$W/read.sql" <<'SQL'
\set lo random(0, 99000)
\set k2 random(0, 12)
SELECT count(*), sum(v) FROM (SELECT v FROM kl WHERE k BETWEEN :lo AND :lo + 1000 OFFSET 0) s;
SELECT count(*), sum(v) FROM kl WHERE k BETWEEN :lo AND :lo + 3000;
SELECT id FROM kl WHERE k = ANY (ARRAY[:lo, :lo + 7, :lo + 77, :lo + 777]);
SELECT count(*) FROM (SELECT 1 FROM kl WHERE k2 BETWEEN :k2 AND :k2 + 1 OFFSET 0) s;
SQL
cat >"$W/vacuum.sql" <<'SQL'
VACUUM kl;
SQL

# load SECONDS TAG: pgbench in the background (pid in $load_pid).
load() {
	PGOPTIONS="$DEV -c enable_seqscan=off -c enable_indexscan=off -c enable_indexonlyscan=off -c gpubtree.min_gpu_batch=2 -c gpubtree.enable_lookup=off -c max_parallel_workers_per_gather=0" \
		"$PGBIN/pgbench" -n -c "$CLIENTS" -j 2 -T "$1" --max-tries=5 \
		-f "$W/write.sql@10" -f "$W/delete.sql@3" -f "$W/read.sql@10" -f "$W/vacuum.sql@1" postgres \
		>"$DIR/pgbench.$2.log" 2>&1 &
	load_pid=$!
}

# wait_up: the server accepts connections and the service runs again.
wait_up() {
	local i
	for i in $(seq 1 120); do
		[ "$($PSQL -c "SELECT running FROM gpubtree_status()" 2>/dev/null)" = t ] && return 0
		sleep 0.5
	done
	return 1
}

# q_gpubtree IDX QUERY / q_btree QUERY / q_seq QUERY: the query's output
# through a forced bitmap scan on the gpubtree index IDX (the other indexes
# on k and k2 dropped for the duration of the transaction), on the btree
# copy (gpubtree indexes dropped), or a sequential scan.
q_gpubtree() {
	local drop=kl_k_bt,kl_k2
	[ "$1" = kl_k2 ] && drop=kl_k_bt,kl_k
	echo "BEGIN; DROP INDEX $drop; $BITMAP $2; ROLLBACK;" | $PSQL 2>&1
}
q_btree() { echo "BEGIN; DROP INDEX kl_k, kl_k2; $BITMAP $1; ROLLBACK;" | $PSQL 2>&1; }
q_seq() { echo "$SEQ $1;" | $PSQL 2>&1; }

# same IDX QUERY [any]: gpubtree index IDX (its bitmap scan served by the
# service, unless "any": then whatever plan the planner makes of it with
# that index) = seqscan = btree.
same() {
	local idx=$1 q=$2 g s b plan
	g=$(q_gpubtree $idx "$q") s=$(q_seq "$q") b=$(q_btree "$q")
	if [ "$g" = "$s" ] && [ "$b" = "$s" ] && [ -n "$s" ]; then
		passed=$((passed + 1))
	else
		echo "FAILED: $q: gpubtree $(echo "$g" | wc -l) lines, seqscan $(echo "$s" | wc -l), btree $(echo "$b" | wc -l)"
		diff <(echo "$s") <(echo "$g") | head -6 | sed 's/^/    seqscan vs gpubtree: /'
		diff <(echo "$s") <(echo "$b") | head -4 | sed 's/^/    seqscan vs btree: /'
		failed=$((failed + 1))
	fi
	[ "${3:-}" = any ] && return
	plan=$(q_gpubtree $idx "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q")
	if echo "$plan" | grep -q "Bitmap Index Scan on $idx " &&
		echo "$plan" | grep -Eq "Service: [1-9][0-9]* scans, .* 0 answered by nbtree"; then
		passed=$((passed + 1))
	else
		echo "FAILED: the service did not answer the bitmap scan of: $q"
		echo "$plan" | sed 's/^/    /' | head -20
		failed=$((failed + 1))
	fi
}

# warm: have the service build (and the session wait for, under the test
# cluster's gpubtree.build_wait) current mirrors of both gpubtree indexes;
# the checks' transactions drop indexes, and so hold locks no build can wait
# for.
warm() { $PSQL -c "SELECT gpubtree_count('kl_k', 0, 1), gpubtree_count('kl_k2', 0, 1)" >/dev/null; }

verify() {
	echo "$1:"
	wait_up
	check "server and GPU service up again" "$?" 0
	warm
	# (OFFSET 0 keeps the aggregate above the scan: these check bitmap scans)
	same kl_k "SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k BETWEEN 0 AND 99999 OFFSET 0) s"
	same kl_k "SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k BETWEEN 1000 AND 1999 OFFSET 0) s"
	same kl_k "SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k >= 95000 OFFSET 0) s"
	same kl_k "SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k < 500 OFFSET 0) s"
	same kl_k "SELECT count(*), sum(id) FROM (SELECT id FROM kl WHERE k = ANY (ARRAY[0, 7, 77, 777, 7777, 77777, 99999, 100005]) OFFSET 0) s"
	same kl_k "SELECT ctid, id, k, k2, v FROM kl WHERE k BETWEEN 40000 AND 42000 ORDER BY ctid"
	same kl_k "SELECT ctid, id, k, k2, v FROM kl WHERE k >= 99000 ORDER BY ctid"
	same kl_k2 "SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k2 BETWEEN 3 AND 5 OFFSET 0) s"
	same kl_k2 "SELECT count(*), sum(id) FROM (SELECT id FROM kl WHERE k2 = ANY (ARRAY[0, 12, 13]) OFFSET 0) s"
	same kl_k2 "SELECT ctid, id, k, k2 FROM kl WHERE k2 BETWEEN 6 AND 7 AND k + 0 < 20000 ORDER BY ctid"
	# Range aggregates as written, whatever answers them.
	same kl_k "SELECT count(*), sum(k), sum(v), min(k), max(v) FROM kl WHERE k BETWEEN 1000 AND 1999" any
	same kl_k "SELECT count(*), sum(k), sum(v), avg(v) FROM kl WHERE k >= 50000" any
	same kl_k2 "SELECT count(*), sum(k), min(k), max(k) FROM kl WHERE k2 BETWEEN 3 AND 5" any
	local idx
	for idx in kl_k kl_k2; do
		warm	# so that the service holds current mirrors
		check "gpubtree_verify('$idx')" "$($PSQL -c "SELECT count(*) || ' problems' ||
			coalesce(', first: ' || min(problem || ' ' || tid), '') FROM gpubtree_verify('$idx')")" "0 problems"
		$PSQL -c "SELECT gpubtree_index_check('$idx', true, true)" >/dev/null
		check "amcheck on $idx" "$?" 0
	done
	echo "  $($PSQL -c "SELECT count(*) FROM kl") rows; $passed checks passed, $failed failed so far"
}

verify "before the load"

# (a) SIGKILL of one client backend under load.
load 60 a
sleep "$LOAD_S"
victim=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench'
	AND backend_type = 'client backend' ORDER BY backend_start LIMIT 1")
check "a pgbench backend to kill" "$([ -n "$victim" ] && echo found)" found
[ -n "$victim" ] && kill -9 "$victim"
wait "$load_pid" 2>/dev/null
grep -q "terminating connection because of crash of another server process\|server closed the connection" "$DIR/pgbench.a.log"
check "(a) the clients saw the crash restart" "$?" 0
# (the postmaster may write its line a moment after the clients noticed)
for _ in $(seq 1 100); do
	grep -q "all server processes terminated; reinitializing" "$DIR/server.log" && break
	sleep 0.1
done
grep -q "all server processes terminated; reinitializing" "$DIR/server.log"
check "(a) the postmaster reinitialized after the killed backend" "$?" 0
verify "(a) after kill -9 of a client backend"

# (b) immediate shutdown under load, restart.
load 60 b
sleep "$LOAD_S"
cluster_stop "$DIR" immediate
wait "$load_pid" 2>/dev/null
cluster_start "$DIR"
check "(b) restart after pg_ctl stop -m immediate" "$?" 0
verify "(b) after pg_ctl stop -m immediate"

# (c) more load after the crashes, to its end.
load "$LOAD_S" c
wait "$load_pid"
check "(c) pgbench ran to its end without errors" "$?" 0
grep -E "^(number of (transactions actually processed|failed transactions)|tps =)" "$DIR/pgbench.c.log" | sed 's/^/  /'
check "(c) the service answered requests" "$($PSQL -c "SELECT requests > 0 FROM gpubtree_status()")" t
verify "(c) after load without a crash"

echo "crash under load: $([ $failed = 0 ] && echo ok || echo FAILED)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
