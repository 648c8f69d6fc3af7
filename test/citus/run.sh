#!/usr/bin/env bash
# gpubtree on Citus: a coordinator and two workers on the loopback address,
# each with gpubtree preloaded after Citus (its own GPU service, mirrors of
# its own shards).  A table distributed over 8 shards with a gpubtree index
# and a btree twin with the same rows; checks that
#   - the index, and its capture trigger, are on every shard;
#   - range aggregates reach the shards' GpubtreeAggregate nodes
#     (citus.explain_all_tasks) and the services answer them;
#   - range aggregates (count, sum, avg, min, max) and = ANY (aggregates
#     and rows) equal the twin's: after loading, after multi-shard updates,
#     deletes and inserts, after a rolled-back multi-shard transaction,
#     after a shard move and after a shard split (where the index and the
#     trigger must be on the new shards too);
#   - gpubtree.device reaches the shards where Citus carries it (SET LOCAL
#     with citus.propagate_set_commands = 'local', ALTER ROLE ... SET,
#     ALTER DATABASE ... SET) and not through a plain SET (Citus's default).
#
#   test/citus/run.sh                     Citus installed in pg_config's PostgreSQL
#   CITUS_SRC=DIR test/citus/run.sh       built first from the source tree DIR
#                                         (test/citus/build_citus.sh)
#
# Without either it prints SKIPPED (never counted as passed).  Ends with
# "N passed, N failed".  CITUS_ROWS sets the rows (default 200000).
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
export LC_ALL=C
ROWS=${CITUS_ROWS:-200000}
PORT0=${PORT:-54460}

. test/citus/lib.sh
citus_ready || exit 0
citus_cluster "$PORT0" >/dev/null || exit 1
C <<SQL || exit 1
SET citus.shard_count = 8;
CREATE TABLE t (id int8, k int8, v int8);
SELECT create_distributed_table('t', 'id');
CREATE TABLE tb (id int8, k int8, v int8);
SELECT create_distributed_table('tb', 'id', colocate_with := 't');
INSERT INTO t SELECT i, (i * 7919) % ($ROWS / 2), i % 1000 - 300 FROM generate_series(1, $ROWS) i;
INSERT INTO tb SELECT * FROM t;
CREATE INDEX t_k ON t USING gpubtree (k) INCLUDE (v);
CREATE INDEX tb_k ON tb (k) INCLUDE (v);
VACUUM ANALYZE t;
VACUUM ANALYZE tb;
SQL
echo "coordinator and 2 workers on 127.0.0.1:$PORT0-$((PORT0 + 2)); $ROWS rows in 8 shards"

# on_every_shard SQL: how many of t's shards SQL (a count, %s the shard)
# says 1 for, against how many shards t has.
on_every_shard() {
	C -c "SELECT count(*) FILTER (WHERE result = '1') || ' of ' || count(*)
		FROM run_command_on_shards('t', \$\$$1\$\$)"
}
INDEX_ON_SHARD="SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = '%s'::regclass AND a.amname = 'gpubtree'"
TRIGGER_ON_SHARD="SELECT count(*) FROM pg_trigger WHERE tgrelid = '%s'::regclass
	AND tgname LIKE 'gpubtree\_capture\_%%' AND tgenabled = 'A'"
MIRROR_OF_SHARD="SELECT count(*) FROM gpubtree_mirrors() m JOIN pg_index i ON i.indexrelid = m.index
	WHERE i.indrelid = '%s'::regclass AND m.decided_by = 'stamps'"
shards() { C -c "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 't'::regclass"; }

# The queries compared with the twin: range aggregates and = ANY arrays long
# enough for the service (aggregates and rows).
QUERIES=()
for r in "0 60000" "12345 12400" "-5 100000000" "70000 70000" "99000 99999"; do
	set -- $r
	QUERIES+=("SELECT count(*), sum(v), round(avg(v), 6), min(v), max(v) FROM %s WHERE k BETWEEN $1 AND $2")
done
QUERIES+=("SELECT count(*), sum(v) FROM %s WHERE k = ANY ((SELECT array_agg(i * 3) FROM generate_series(1, 5000) i)::int8[])"
	"SELECT count(*), sum(v) FROM %s WHERE k = ANY ('{$(seq -s, 1 7 14000)}'::int8[])"
	"SELECT k, v FROM %s WHERE k = ANY ('{$(seq -s, 2 11 22000)}'::int8[]) ORDER BY k, v, id")

# compare WHEN: every query on t and tb, answers equal.
compare() {
	local q a b bad=0
	for q in "${QUERIES[@]}"; do
		a=$(C -c "$(printf "$q" t)" | md5sum)
		b=$(C -c "$(printf "$q" tb)" | md5sum)
		if [ "$a" != "$b" ]; then
			bad=$((bad + 1))
			echo "  differs $1: $(printf "$q" t | cut -c1-120)"
		fi
	done
	check "${#QUERIES[@]} queries equal the btree twin $1" "$bad" 0
}

RANGE_AGG="SELECT count(*), sum(v) FROM t WHERE k BETWEEN 1000 AND 90000"
# tasks BEFORE AFTER: citus_tasks of a range aggregate's GpubtreeAggregate nodes.
tasks() { citus_tasks "$1" "$2" GpubtreeAggregate "$RANGE_AGG"; }

n=$(shards)
check "the gpubtree index on every shard" "$(on_every_shard "$INDEX_ON_SHARD")" "$n of $n"
check "the capture trigger on every shard" "$(on_every_shard "$TRIGGER_ON_SHARD")" "$n of $n"
compare "after loading"
check "range aggregates answered by every shard's GpubtreeAggregate node and service" \
	"$(tasks "" "")" "$n/$n"
check "rows of = ANY answered by every shard's GpubtreeLookup node and service" \
	"$(citus_tasks "" "" GpubtreeLookup "SELECT k, v FROM t WHERE k = ANY ('{$(seq -s, 2 11 22000)}'::int8[])")" "$n/$n"
check "each shard's mirror on its worker's service, deciding by its stamps" \
	"$(on_every_shard "$MIRROR_OF_SHARD")" "$n of $n"

C <<SQL || exit 1
UPDATE t SET v = v + 1 WHERE k % 10 = 3;
UPDATE tb SET v = v + 1 WHERE k % 10 = 3;
UPDATE t SET k = k + 50000 WHERE id % 97 = 0;
UPDATE tb SET k = k + 50000 WHERE id % 97 = 0;
DELETE FROM t WHERE k % 13 = 5;
DELETE FROM tb WHERE k % 13 = 5;
INSERT INTO t SELECT i, i % 70000, i FROM generate_series($ROWS + 1, $ROWS + 20000) i;
INSERT INTO tb SELECT i, i % 70000, i FROM generate_series($ROWS + 1, $ROWS + 20000) i;
SQL
compare "after multi-shard updates, deletes and inserts"
C <<SQL || exit 1
BEGIN;
UPDATE t SET v = v * 2 WHERE k < 30000;
DELETE FROM t WHERE k BETWEEN 40000 AND 45000;
INSERT INTO t SELECT i, i % 1000, 5 FROM generate_series(1, 3000) i;
ROLLBACK;
SQL
compare "after a rolled-back multi-shard transaction"

C <<SQL || exit 1
SELECT citus_move_shard_placement(s.shardid, '127.0.0.1', $((PORT0 + 1)), '127.0.0.1', $((PORT0 + 2)),
								  shard_transfer_mode := 'block_writes')
FROM pg_dist_shard s JOIN pg_dist_shard_placement p USING (shardid)
WHERE s.logicalrelid = 't'::regclass AND p.nodeport = $((PORT0 + 1))
ORDER BY s.shardid LIMIT 1;
SQL
n=$(shards)
check "after a shard move: the index on every shard" "$(on_every_shard "$INDEX_ON_SHARD")" "$n of $n"
check "after a shard move: the capture trigger on every shard" "$(on_every_shard "$TRIGGER_ON_SHARD")" "$n of $n"
compare "after a shard move"
C -c "UPDATE t SET v = v - 3 WHERE k % 5 = 1" -c "UPDATE tb SET v = v - 3 WHERE k % 5 = 1" || exit 1
compare "after an update of the moved shard"

C <<SQL || exit 1
SELECT citus_split_shard_by_split_points(s.shardid,
		ARRAY[((s.shardminvalue::int8 + s.shardmaxvalue::int8) / 2)::text],
		ARRAY[(SELECT nodeid FROM pg_dist_node WHERE nodeport = $((PORT0 + 1))),
			  (SELECT nodeid FROM pg_dist_node WHERE nodeport = $((PORT0 + 2)))],
		shard_transfer_mode := 'block_writes')
FROM pg_dist_shard s WHERE s.logicalrelid = 't'::regclass ORDER BY s.shardid LIMIT 1;
SQL
n=$(shards)
check "after a shard split: 9 shards" "$n" 9
check "after a shard split: the index on every shard" "$(on_every_shard "$INDEX_ON_SHARD")" "$n of $n"
check "after a shard split: the capture trigger on every shard" "$(on_every_shard "$TRIGGER_ON_SHARD")" "$n of $n"
compare "after a shard split"
# The new shards' rows were copied in by a transaction their mirrors cannot
# tell: until VACUUM vouches for their pages the heap decides, and until
# ANALYZE the planner, with no statistics, may keep nbtree for them
# (autovacuum does both in time; here by hand).
C -c "VACUUM ANALYZE t" || exit 1
check "after the split and VACUUM ANALYZE: each shard's mirror decides by its stamps" \
	"$(on_every_shard "$MIRROR_OF_SHARD")" "$n of $n"
C -c "DELETE FROM t WHERE k % 17 = 2" -c "DELETE FROM tb WHERE k % 17 = 2" || exit 1
compare "after a delete over the split shards"
check "after the move and the split: range aggregates answered by every shard's node and service" \
	"$(tasks "" "")" "$n/$n"

# Settings: a plain SET stays on the coordinator (Citus's default
# citus.propagate_set_commands = none); SET LOCAL with 'local' and ALTER
# ROLE ... SET reach the shards.
check "a plain SET gpubtree.device = off does not reach the shards" \
	"$(tasks "SET gpubtree.device = off;" "" | cut -d/ -f2)" "$n"
check "SET LOCAL gpubtree.device = off with citus.propagate_set_commands = 'local' reaches them" \
	"$(tasks "BEGIN; SET LOCAL citus.propagate_set_commands = 'local'; SET LOCAL gpubtree.device = off;" "COMMIT;" | cut -d/ -f2)" 0
C -c "ALTER ROLE CURRENT_USER SET gpubtree.device = off" || exit 1
check "ALTER ROLE ... SET gpubtree.device = off reaches them (new connections)" \
	"$(tasks "" "" | cut -d/ -f2)" 0
C -c "ALTER ROLE CURRENT_USER RESET gpubtree.device" || exit 1
C -c "ALTER DATABASE postgres SET gpubtree.device = off" || exit 1
check "ALTER DATABASE ... SET gpubtree.device = off reaches them (new connections)" \
	"$(tasks "" "" | cut -d/ -f2)" 0
C -c "ALTER DATABASE postgres RESET gpubtree.device" || exit 1
compare "with the setting reset"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
