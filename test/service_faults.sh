#!/usr/bin/env bash
# The GPU service under faults: killed, slow, out of memory, and clients
# cancelled or terminated mid-request.  Every answer must equal btree's,
# nothing may hang, and fallbacks must be counted.  Runs the service on
# whatever engine the machine has (the CPU engine in CI); then restarts it
# with gpubtree.engine = gpu (without a GPU: no mirrors) and = cpu.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh

cluster_throwaway faults "${PORT:-54403}"


$PSQL <<'SQL' || exit 1
CREATE EXTENSION gpubtree;
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT (g * 7919) % 200000, g FROM generate_series(1, 200000) g;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX g_k ON g USING gpubtree (k);
CREATE INDEX b_k ON b (k);
VACUUM ANALYZE g;
VACUUM ANALYZE b;
SQL

# q TABLE: a range and a large = ANY, through bitmap scans.
q() {
	$PSQL -c "SET enable_seqscan = off" -c "SET enable_indexscan = off" \
		-c "SET enable_indexonlyscan = off" -c "SET max_parallel_workers_per_gather = 0" \
		-c "SET gpubtree.enable_lookup = off" \
		${2:+-c "$2"} \
		-c "SELECT count(*) || ':' || sum(v) FROM $1 WHERE k BETWEEN 1000 AND 90000" \
		-c "SELECT count(*) || ':' || sum(v) FROM $1 WHERE k = ANY (ARRAY(SELECT generate_series(0, 199999, 7)::int8))"
}
stat() { $PSQL -c "SELECT $1 FROM gpubtree_status()"; }
reload() { $PSQL -c "ALTER SYSTEM SET $1" -c "SELECT pg_reload_conf()" >/dev/null; sleep 0.5; }

expected=$(q b)
r0=$(stat requests)
check "served by the service" "$(q g)" "$expected"
check "the service answered" "$(( $(stat requests) > r0 ))" 1

# 1. The service is stopped: scans fall back, counted, and it comes back.
f0=$(stat fallbacks)
kill -TERM "$(stat pid)"
sleep 0.3
check "answer while the service is down" "$(q g)" "$expected"
check "service down: not running" "$(stat running)" "f"
for _ in $(seq 1 30); do [ "$(stat running)" = t ] && break; sleep 0.5; done
check "service restarted" "$(stat running)" "t"
r0=$(stat requests)
check "answer after restart" "$(q g)" "$expected"
check "served again after restart" "$(( $(stat requests) > r0 ))" 1

# 2. Cancelled mid-request: a long batch window holds every request; short
#    statement timeouts cancel them at random points.  No hang, no leak.
reload "gpubtree.batch_window = 100000"
cancelled=0
for t in 5 20 40 60 80 95 120 150; do
	out=$(q g "SET statement_timeout = '${t}ms'" 2>&1) || cancelled=$((cancelled + 1))
done
check "some statements were cancelled mid-request" "$(( cancelled > 0 ))" 1
check "answer after cancellations" "$(q g)" "$expected"

# 2b. Statement timeouts that hit while waiting for the service say so, on
#     every path that waits for it, from several sessions at once: bitmap
#     scans (a range, a large = ANY, in parallel workers), the aggregate
#     node, and mirror builds.  Each session runs 25 statements with
#     timeouts shorter than the batch window.
$PSQL -c "CREATE TABLE gb AS SELECT * FROM g WHERE k < 50000" \
	-c "CREATE INDEX gb_k ON gb USING gpubtree (k)" -c "ANALYZE gb" >/dev/null
timeouts_of() {
	{
		echo "SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;"
		echo "SET max_parallel_workers_per_gather = 0; SET gpubtree.enable_aggregate = off; SET gpubtree.enable_lookup = off;"
		echo "$1"
		for _ in $(seq 1 25); do
			echo "$2 SET statement_timeout = '$((RANDOM % 90 + 5))ms'; $3 RESET statement_timeout;"
		done
	} | $PGBIN/psql -X -q -At 2>&1 >/dev/null | grep ERROR
}
msgs=$(
	timeouts_of "" "" "SELECT count(*) FROM g WHERE k BETWEEN 1000 AND 90000;" &
	timeouts_of "" "" "SELECT count(*) FROM g WHERE k = ANY (ARRAY(SELECT generate_series(0, 199999, 7)::int8));" &
	timeouts_of "SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
		SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = off;" "" \
		"SELECT count(*) FROM g WHERE k BETWEEN 1000 AND 90000;" &
	timeouts_of "SET gpubtree.enable_aggregate = on;" "" "SELECT count(*) FROM g WHERE k BETWEEN 1000 AND 90000;" &
	timeouts_of "" "REINDEX INDEX gb_k;" "SELECT count(*) FROM gb WHERE k BETWEEN 1000 AND 40000;" &
	wait
)
n_timeout=$(echo "$msgs" | grep -c "canceling statement due to statement timeout")
n_other=$(echo "$msgs" | grep . | grep -vc "canceling statement due to statement timeout")
echo "$msgs" | grep . | grep -v "canceling statement due to statement timeout" | sort | uniq -c
check "statement timeouts hit while waiting" "$(( n_timeout >= 50 ))" 1
check "each one reported as a statement timeout" "$n_other" 0
check "answer after the timeouts" "$(q g)" "$expected"
$PSQL -c "DROP TABLE gb" >/dev/null

# 2c. A cancel while a commit waits for room in the change log (also what a
#     statement timeout that fires as the statement ends becomes, its timer
#     cleared before the commit): the wait stops with a WARNING, the commit
#     goes on, and the mirror of what it changed is made unusable, as when
#     the wait times out.  The service is stopped (SIGSTOP) so that the log
#     fills: committed transactions of 32000 rows each (under an eighth of
#     the mirror, so logged) fill it to its last 144 entries, and a
#     transaction of 1000 rows finds no room at its commit.
reload "gpubtree.batch_window = 0"
$PSQL -c "CREATE TABLE gc (k int8, v int8)" 	-c "INSERT INTO gc SELECT g, g FROM generate_series(1, 300000) g" 	-c "CREATE INDEX gc_k ON gc USING gpubtree (k)" -c "VACUUM ANALYZE gc" >/dev/null
for _ in $(seq 1 120); do
	[ "$($PSQL -c "SELECT count(*) FROM gpubtree_mirrors() WHERE index = 'gc_k'::regclass AND current")" = 1 ] && break
	$PSQL -c "SELECT gpubtree_count('gc_k', 0, 1)" >/dev/null
	sleep 0.5
done
logsize=$($PSQL -c "SHOW gpubtree.change_log_size")
service=$(stat pid)
kill -STOP "$service"
for i in $(seq 0 7); do
	$PSQL -c "INSERT INTO gc SELECT 1000000 + $i * 32000 + g, 1 FROM generate_series(1, 32000) g" >/dev/null
done
$PSQL -c "INSERT INTO gc SELECT 2000000 + g, 1 FROM generate_series(1, $((logsize - 256000 - 144))) g" >/dev/null
$PGBIN/psql -X -At -c "BEGIN" -c "INSERT INTO gc SELECT 3000000 + g, 1 FROM generate_series(1, 1000) g" 	-c "COMMIT" >"$DIR/commit_cancel.out" 2>&1 &
committer=$!
cancelled=f
for _ in $(seq 1 40); do
	sleep 0.1
	[ "$($PSQL -c "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE query = 'COMMIT' AND state = 'active' AND wait_event = 'Extension'")" = 1 ] &&
		cancelled=t && break
done
wait $committer
kill -CONT "$service"
check "cancel at commit: the commit was waiting for room" "$cancelled" t
check "cancel at commit: a WARNING, no error" 	"$(grep -c 'WARNING:  canceling the wait for room in the gpubtree change log' "$DIR/commit_cancel.out"):$(grep -c ERROR "$DIR/commit_cancel.out")" "1:0"
check "cancel at commit: committed" "$($PSQL -c "SELECT count(*) FROM gc WHERE k > 3000000")" 1000
check "cancel at commit: the answer is btree's" \
	"$($PSQL -c "SELECT gpubtree_count('gc_k', 0, 4000000)")" \
	"$($PSQL -c "SET gpubtree.device = off" -c "SELECT gpubtree_count('gc_k', 0, 4000000)")"
$PSQL -c "DROP TABLE gc" >/dev/null
reload "gpubtree.batch_window = 100000"	# section 4's slow service

# 3. A backend terminated while it waits for the service.
$PSQL -c "SET enable_seqscan = off" -c "SET enable_indexscan = off" \
	-c "SELECT count(*) FROM g WHERE k BETWEEN 5 AND 50000" >/dev/null 2>&1 &
sleep 0.05
$PSQL -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%BETWEEN 5 AND 50000%' AND pid <> pg_backend_pid()" >/dev/null
wait
check "answer after a client was terminated" "$(q g)" "$expected"
check "the service survived" "$(stat running)" "t"

# 4. The service too slow for the client's deadline: nbtree answers.
f0=$(stat fallbacks)
check "answer past gpubtree.service_timeout" "$(q g 'SET gpubtree.service_timeout = 10')" "$expected"
check "timeouts counted as fallbacks" "$(( $(stat fallbacks) > f0 ))" 1
reload "gpubtree.batch_window = 0"

# 5. No room under gpubtree.mirror_memory_limit (lowered: the service evicts
# the mirror, and cannot build it again): nbtree answers.
reload "gpubtree.mirror_memory_limit = 1"
f0=$(stat fallbacks)
check "answer when the mirror does not fit" "$(q g)" "$expected"
check "out-of-memory counted as fallback" "$(( $(stat fallbacks) > f0 ))" 1
reload "gpubtree.mirror_memory_limit = -1"
check "answer once it fits again" "$(q g)" "$expected"

# 6. gpubtree.engine, read when the service starts.  gpu without a usable
#    GPU: the service says why (status, and the log once), builds no mirror,
#    and nbtree answers as with gpubtree.device = off; with a GPU, the GPU.
#    cpu: the CPU engine and its mirrors, even with a GPU.
restart_with_engine() {
	$PSQL -c "ALTER SYSTEM SET gpubtree.engine = $1" >/dev/null
	cluster_stop "$DIR"
	cluster_start "$DIR" || exit 1
	for _ in $(seq 1 60); do [ "$(stat running)" = t ] && break; sleep 0.5; done
}
mirrors() { $PSQL -c "SELECT count(*) FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass AND ${1:-true}"; }
had_gpu=$(stat gpu)
restart_with_engine gpu
check "engine = gpu: the setting is shown" "$(stat engine_setting)" "gpu"
if [ "$had_gpu" = f ]; then
	check "engine = gpu, no GPU: the service has no engine" "$(stat engine)" "none"
	check "engine = gpu, no GPU: its status says why" \
		"$(stat "status LIKE '%gpubtree.engine = gpu and no usable GPU%'")" "t"
	check "engine = gpu, no GPU: logged once" \
		"$(grep -c 'gpubtree service: gpubtree.engine = gpu and no usable GPU' "$DIR/server.log")" 1
	e0=$(stat exports)
	check "engine = gpu, no GPU: the range's answer is gpubtree.device = off's" \
		"$(q g)" "$(q g 'SET gpubtree.device = off')"
	check "engine = gpu, no GPU: and btree's" "$(q g)" "$expected"
	check "engine = gpu, no GPU: no export, no build" \
		"$(stat "exports - $e0 || ':' || mirror_builds")" "0:0"
	check "engine = gpu, no GPU: no mirror" "$(mirrors)" 0
	check "engine = gpu, no GPU: EXPLAIN says why" \
		"$($PSQL -c "SET enable_seqscan = off" -c "EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM g WHERE k BETWEEN 1000 AND 90000" |
			grep -c 'no mirror: gpubtree.engine = gpu and the GPU service has no usable GPU')" 1
else
	check "engine = gpu with a GPU: the GPU" "$(stat engine)" "gpu"
fi
restart_with_engine cpu
check "engine = cpu: the CPU engine" "$(stat "engine_setting || ':' || engine || ':' || gpu::text")" "cpu:cpu:false"
check "engine = cpu: answer" "$(q g)" "$expected"
check "engine = cpu: a mirror on the CPU engine" "$(mirrors "current AND engine = 'cpu'")" 1

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
