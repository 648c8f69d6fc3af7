#!/usr/bin/env bash
# Waits on the GPU service, bounded per statement: with the service stopped
# (SIGSTOP), statements that wait on it many times (a write of many change
# log batches into a full log, COPY, UPDATE, several aggregates, several
# bitmap scans, a large = ANY) each finish within about one
# gpubtree.service_timeout, and answer as gpubtree.device = off does.  Then
# (GBT_SMALL_LAYOUT=1: run_all.sh's small-layout pass) small aggregates are
# answered by the service while another session's large = ANY is being
# answered, a slice at a time.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh

DIR=$(mktemp -d /tmp/gpubtree-wait.XXXXXX)
trap 'kill -CONT "${service:-0}" 2>/dev/null; cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "${PORT:-54409}" || exit 1
# A small log: batches of 1024 entries, and one of 4000 rows fills it.
echo "gpubtree.change_log_size = 4096" >>"$DIR/data/postgresql.conf"
cluster_start "$DIR" || exit 1
cluster_env "$DIR" "${PORT:-54409}"
PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1"

$PSQL <<'SQL' || exit 1
CREATE EXTENSION gpubtree;
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT (x * 7919) % 200000, x FROM generate_series(1, 200000) x;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v);
CREATE INDEX b_k ON b (k) INCLUDE (v);
VACUUM ANALYZE g;
VACUUM ANALYZE b;
SELECT gpubtree_count('g_k', 0, 1) > 0;
SQL
stat() { $PSQL -c "SELECT $1 FROM gpubtree_status()"; }
service=$(stat pid)

# timed [SQL...]: run the statements, each its own, in one session with a
# short gpubtree.service_timeout; the last one's output on stdout, the
# milliseconds the session took in $MS_FILE.
TIMEOUT_MS=500
MS_FILE=$DIR/ms
timed() {
	local t0 t1 args=() s
	for s in "$@"; do args+=(-c "$s"); done
	t0=$(date +%s%N)
	$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1 -c "SET gpubtree.service_timeout = '${TIMEOUT_MS}ms'" \
		-c "SET enable_seqscan = off" -c "SET max_parallel_workers_per_gather = 0" "${args[@]}"
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 )) >"$MS_FILE"
}
range_sql="SELECT count(*) || ':' || coalesce(sum(v), 0) FROM g WHERE k BETWEEN"
table_sql="SELECT count(*) || ':' || sum(v) FROM"

kill -STOP "$service"
# Fill the log: every later batch finds it full.
$PSQL -c "INSERT INTO g SELECT 300000 + x, x FROM generate_series(1, 4000) x" \
	-c "INSERT INTO b SELECT 300000 + x, x FROM generate_series(1, 4000) x"

# shape NAME SQL [BTREE_SQL]: SQL waits on the service many times, and
# finishes within 3 service timeouts, with gpubtree.device = off's answer
# (a write: with the tables equal after it and BTREE_SQL).
shape() {
	local name=$1 sql=$2 got want ms
	got=$(timed "$sql")
	ms=$(cat "$MS_FILE")
	rm -f "$MS_FILE"
	if [ -n "${3:-}" ]; then
		$PSQL -c "$3"
		got=$($PSQL -c "SET gpubtree.device = off" -c "$table_sql g")
		want=$($PSQL -c "$table_sql b")
	else
		want=$(timed "SET gpubtree.device = off" "$sql")
	fi
	check "service stopped: $name: within 3 service timeouts" "$(( ${ms:-999999} < 3 * TIMEOUT_MS ))" 1
	echo "   ($name: ${ms:-?} ms)"
	check "service stopped: $name: the answer of gpubtree.device = off" "$got" "$want"
}
# Writes: 20 batches of 1024 entries each, a full log for each.
shape "INSERT of 20 batches" "INSERT INTO g SELECT 400000 + x, x FROM generate_series(1, 20000) x" \
	"INSERT INTO b SELECT 400000 + x, x FROM generate_series(1, 20000) x"
seq 500001 520000 | sed 's/$/\t1/' >"$DIR/copy.tsv"
chmod a+r "$DIR/copy.tsv"
shape "COPY of 20 batches" "COPY g FROM '$DIR/copy.tsv'" "COPY b FROM '$DIR/copy.tsv'"
shape "UPDATE of 20000 rows" "UPDATE g SET v = v + 1 WHERE k BETWEEN 400001 AND 420000" \
	"UPDATE b SET v = v + 1 WHERE k BETWEEN 400001 AND 420000"
# Reads: four aggregates, four bitmap scans, and a large = ANY in one statement.
shape "four aggregates" "SELECT ($range_sql 1 AND 5000), ($range_sql 6000 AND 9000), ($range_sql 10000 AND 20000), ($range_sql 30000 AND 40000)"
bitmap_only="SET enable_indexscan = off; SET enable_indexonlyscan = off; SET gpubtree.enable_aggregate = off; SET gpubtree.enable_lookup = off"
shape "four bitmap scans" "$bitmap_only; $table_sql (SELECT v FROM g WHERE k BETWEEN 1 AND 5000 UNION ALL SELECT v FROM g WHERE k BETWEEN 6000 AND 9000
	UNION ALL SELECT v FROM g WHERE k BETWEEN 10000 AND 20000 UNION ALL SELECT v FROM g WHERE k BETWEEN 30000 AND 40000) s"
shape "a large = ANY, aggregated and listed" "SELECT ($table_sql g WHERE k = ANY (ARRAY(SELECT generate_series(0, 199999, 7)::int8))),
	($table_sql (SELECT v FROM g WHERE k = ANY (ARRAY(SELECT generate_series(1, 199999, 3)::int8)) OFFSET 0) s)"
# EXPLAIN says which aggregate waited, and which did not wait at all.
plan=$(timed "EXPLAIN (ANALYZE, COSTS OFF) SELECT ($range_sql 1 AND 5000), ($range_sql 6000 AND 9000)")
check "service stopped: EXPLAIN: the first aggregate waited" \
	"$(echo "$plan" | grep -c "Answered by: the plan below (the service did not answer)")" 1
check "service stopped: EXPLAIN: the second did not" \
	"$(echo "$plan" | grep -c "Answered by: the plan below (this statement waited gpubtree.service_timeout for the service already)")" 1
kill -CONT "$service"
check "service resumed: the table's answer is btree's" \
	"$($PSQL -c "$range_sql 0 AND 600000")" \
	"$($PSQL -c "SELECT count(*) || ':' || sum(v) FROM b WHERE k BETWEEN 0 AND 600000")"

# A small aggregate while another session's large = ANY is being answered:
# the service answers the large one a slice of GBT_SLICE_KEYS keys at a time
# and the small one in between.  The small one waits for one slice at most,
# or for the large one's sort of its keys (one step: on the GPU up to a few
# hundred milliseconds for 8M keys), within a service timeout of 1 s; it
# counts only if the large one is still being answered after it, which it
# would not be had the small one waited for all of it.  Slices are a million keys in the shipped build,
# sixteen under GBT_SMALL_LAYOUT (test/run_all.sh's small-layout pass), where
# this runs: there the large request takes seconds.
if [ "${GBT_SMALL_LAYOUT:-0}" = 1 ]; then

	$PSQL -c "CREATE TABLE t (k int8, v int8)" \
		-c "INSERT INTO t SELECT x, x FROM generate_series(1, 2000000) x" \
		-c "CREATE INDEX t_k ON t USING gpubtree (k) INCLUDE (v)" -c "VACUUM ANALYZE t" \
		-c "SELECT gpubtree_count('t_k', 0, 1) > 0" >/dev/null
	large="SELECT count(*) || ':' || sum(v) FROM t WHERE k = ANY (ARRAY(SELECT (x * 3)::int8 FROM generate_series(1, 8000000) x))"
	# The small aggregate's own first-time costs (the GPU's copy of the
	# mirror's columns, chunk sums) paid before: what is measured is the
	# wait behind the large request alone.
	for _ in 1 2 3; do
		$PSQL -c "SELECT count(*), sum(v) FROM t WHERE k BETWEEN 1000 AND 200000" >/dev/null
	done
	$PGBIN/psql -X -q -At -c "SET gpubtree.service_timeout = '600s'" -c "$large" >"$DIR/large.out" 2>&1 &
	large_pid=$!
	overlapped=0
	by_service=0
	for _ in $(seq 1 400); do
		busy() {
			$PSQL -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%generate_series(1, 8000000)%' AND wait_event = 'Extension' AND pid <> pg_backend_pid()"
		}
		[ "$(busy)" = 1 ] || { kill -0 $large_pid 2>/dev/null && { sleep 0.02; continue; } || break; }
		plan=$($PSQL -c "SET gpubtree.service_timeout = '1s'" \
			-c "EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*), sum(v) FROM t WHERE k BETWEEN 1000 AND 200000")
		[ "$(busy)" = 1 ] || continue
		overlapped=$((overlapped + 1))
		echo "$plan" | grep "Answered by"
		echo "$plan" | grep "Answered by"
		grep -q "Answered by: GPU service" <<<"$plan" && by_service=$((by_service + 1))
		[ $overlapped -ge 5 ] && break
	done
	wait $large_pid
	check "large = ANY: small aggregates ran while it was answered" "$(( overlapped >= 1 ))" 1
	check "large = ANY: each small one answered by the service meanwhile" "$by_service" "$overlapped"
	check "large = ANY: its answer is btree's" "$(cat "$DIR/large.out")" \
		"$($PSQL -c "SET gpubtree.device = off" -c "$large")"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
