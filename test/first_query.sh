#!/usr/bin/env bash
# With the shipped defaults, no query builds a mirror or waits for one: the
# first query after CREATE INDEX and after a bulk load is answered by nbtree
# while a background worker builds the mirror, and the queries after it use
# the mirror; a join on the key is planned as PostgreSQL would plan it until
# the mirror is current.  Many sessions asking at once start one build.  A mirror that
# cannot fit under gpubtree.mirror_memory_limit is refused before any export,
# logged once, and never exported while nothing changes.  Every answer is
# compared with btree's.  (The service's CPU engine follows the same paths
# as the GPU.)
set -uo pipefail
cd "$(dirname "$0")/.."
GBT_BUILD_WAIT=   # the shipped default: queries never wait for a build
. test/lib.sh

cluster_throwaway first-query "${PORT:-54405}"


$PSQL <<'SQL' || exit 1
CREATE EXTENSION gpubtree;
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT (i::int8 * 7919) % 300000, i FROM generate_series(1, 300000) i;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX b_k ON b (k) INCLUDE (v);
CREATE TABLE p AS SELECT i * 11 AS k FROM generate_series(1, 20000) i;
VACUUM ANALYZE g;
VACUUM ANALYZE b;
ANALYZE p;
SQL

BITMAP="SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET max_parallel_workers_per_gather = 0; SET gpubtree.enable_lookup = off;"
RANGE="SELECT count(*) || ':' || sum(v) FROM %s WHERE k BETWEEN 1000 AND 90000"
q() { $PSQL -c "$BITMAP" -c "$(printf "$RANGE" "$1")" | tail -1; }
# explain [SETTING]: the range aggregate's plan, as run (the aggregate node;
# with gpubtree.enable_aggregate = off, the bitmap scan's).
explain() { $PSQL -c "$BITMAP" ${1:+-c "$1"} -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $(printf "$RANGE" g)"; }
SCANS="SET gpubtree.enable_aggregate = off"
stat() { $PSQL -c "SELECT $1 FROM gpubtree_status()"; }
# A join on the key: the GpubtreeJoin node keeps no plan of PostgreSQL's to
# fall back to, so it is planned only while the mirror is current.
JOIN="SELECT count(*) || ':' || sum(t.v) FROM p JOIN %s t ON t.k = p.k"
join_plan() { $PSQL -c "EXPLAIN (COSTS OFF) $(printf "$JOIN" g)" | grep -c 'GpubtreeJoin'; }
state() { $PSQL -c "SELECT coalesce(string_agg(state, ','), 'none') FROM gpubtree_mirrors() WHERE index = '$1'::regclass"; }
reload() { $PSQL -c "ALTER SYSTEM SET $1" -c "SELECT pg_reload_conf()" >/dev/null; sleep 0.5; }
# wait_current INDEX: until the index has a current mirror (at most 60 s).
wait_current() {
	for _ in $(seq 1 120); do
		[ "$($PSQL -c "SELECT count(*) FROM gpubtree_mirrors() WHERE index = '$1'::regclass AND current")" = 1 ] && return 0
		sleep 0.5
	done
	return 1
}

expected=$(q b)
check "the resolved memory limit is shown" "$($PSQL -c "SELECT memory_limit > 0 AND memory_limit_source LIKE 'auto%' FROM gpubtree_status()")" "t"

# 1. The first query after CREATE INDEX: nbtree answers while a build is
#    held back on purpose; many sessions asking at once start one build.
reload "gpubtree.debug_build_delay = '5s'"
$PSQL -c "CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v)"
e0=$(stat exports)
out=$(explain)
check "first aggregate answered by the plan below, saying why" \
	"$(echo "$out" | grep -c 'Answered by: the plan below (no current mirror: build starting in the background)')" 1
out=$(explain "$SCANS")
check "first scan answered by nbtree" "$(echo "$out" | grep -c 'Service: 0 scans.*1 answered by nbtree')" 1
check "EXPLAIN says the mirror is being built" "$(echo "$out" | grep -c 'Mirror: no current mirror: build starting')" 1
check "the queries did not wait for the build" "$(state g_k)" "build starting"
check "first join planned without the GpubtreeJoin node" "$(join_plan)" 0
check "first join's answer" "$($PSQL -c "$(printf "$JOIN" g)")" "$($PSQL -c "$(printf "$JOIN" b)")"
for i in $(seq 1 8); do q g >"$DIR/answer.$i" & done
wait
same=0
for i in $(seq 1 8); do [ "$(cat "$DIR/answer.$i")" = "$expected" ] && same=$((same + 1)); done
check "answers while the build runs" "$same" 8
reload "gpubtree.debug_build_delay = 0"
wait_current g_k
check "one export for all the sessions that asked" "$(( $(stat exports) - e0 ))" 1
check "after the build, the service answers aggregates" "$(explain | grep -c 'Answered by: GPU service')" 1
check "after the build, the service answers scans" "$(explain "$SCANS" | grep -c 'Service: 1 scans')" 1
check "answer from the mirror" "$(q g)" "$expected"
check "after the build, joins are planned with the GpubtreeJoin node" "$(join_plan)" 1
check "the join's answer from the mirror" "$($PSQL -c "$(printf "$JOIN" g)")" "$($PSQL -c "$(printf "$JOIN" b)")"

# 2. The first query after a bulk load larger than the change log takes for
#    one transaction: the mirror is invalidated, nbtree answers, a new build
#    follows in the background.
$PSQL -c "INSERT INTO g SELECT (i::int8 * 7919) % 300000, -i FROM generate_series(1, 40000) i" \
	-c "INSERT INTO b SELECT (i::int8 * 7919) % 300000, -i FROM generate_series(1, 40000) i"
expected=$(q b)
reload "gpubtree.debug_build_delay = '5s'"
check "first query after the bulk load answered by nbtree" "$(explain "$SCANS" | grep -c '1 answered by nbtree')" 1
check "answer after the bulk load" "$(q g)" "$expected"
reload "gpubtree.debug_build_delay = 0"
wait_current g_k
check "rebuilt in the background" "$(explain "$SCANS" | grep -c 'Service: 1 scans')" 1
check "answer from the rebuilt mirror" "$(q g)" "$expected"

# 3. A mirror that cannot fit: refused before any export, logged once,
#    never exported again while nothing changes; EXPLAIN and
#    gpubtree_mirrors() say so.  Raising the limit lifts the refusal.
reload "gpubtree.mirror_memory_limit = 1"
$PSQL -c "DROP INDEX g_k" -c "CREATE INDEX g_k2 ON g USING gpubtree (k) INCLUDE (v)"
e0=$(stat exports)
for _ in 1 2 3; do
	check "answer when the mirror cannot fit" "$(q g)" "$expected"
done
check "never exported" "$(( $(stat exports) - e0 ))" 0
check "shown as refused" "$(state g_k2)" "refused: too large"
check "EXPLAIN of the aggregate says it was refused" "$(explain | grep -c 'Answered by: the plan below (no mirror: .* over gpubtree.mirror_memory_limit')" 1
check "EXPLAIN of the scan says it was refused" "$(explain "$SCANS" | grep -c 'over gpubtree.mirror_memory_limit')" 2
check "logged once" "$(grep -c 'index "g_k2" gets no mirror' "$DIR/server.log")" 1
reload "gpubtree.mirror_memory_limit = -1"
q g >/dev/null
wait_current g_k2
check "built once the limit allows it" "$(( $(stat exports) - e0 ))" 1
check "answer from the mirror after the refusal" "$(q g)" "$expected"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
