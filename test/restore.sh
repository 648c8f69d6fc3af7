#!/usr/bin/env bash
# Dump and restore with parallel jobs: pg_restore -j creates a table's
# gpubtree indexes in several sessions at once, each of which makes sure
# the table has its capture trigger.  Every restored table ends with exactly
# one (internal, firing ALWAYS), and deletes after the restore are counted
# right: the node's answers equal the ordinary plan's and gpubtree_verify()
# finds nothing wrong.  Several rounds, since the race is timing's.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh

cluster_throwaway restore "${PORT:-54412}"
ROUNDS=${ROUNDS:-4}

$PSQL <<'SQL' || exit 1
CREATE EXTENSION gpubtree;
CREATE TABLE r (k int8, v int8, w int8, x int8);
INSERT INTO r SELECT g, g % 1000, -g, g * 7 FROM generate_series(1, 50000) g;
CREATE INDEX r_k ON r USING gpubtree (k) INCLUDE (v);
CREATE INDEX r_w ON r USING gpubtree (w);
CREATE INDEX r_x ON r USING gpubtree (x) INCLUDE (v);
CREATE INDEX r_kw ON r USING gpubtree (k, w);
CREATE TABLE rp (k int8, v int8, d int) PARTITION BY RANGE (d);
CREATE TABLE rp_1 PARTITION OF rp FOR VALUES FROM (0) TO (10);
CREATE TABLE rp_2 PARTITION OF rp FOR VALUES FROM (10) TO (20);
INSERT INTO rp SELECT g, g, g % 20 FROM generate_series(1, 20000) g;
CREATE INDEX rp_k ON rp USING gpubtree (k) INCLUDE (v);
CREATE INDEX rp_v ON rp USING gpubtree (v);
SQL
"$PGBIN/pg_dump" -h "$DIR" -p "$PGPORT" -Fd -f "$DIR/dump" postgres || exit 1

# triggers DB: "table:count:enabled" of every table's capture triggers.
triggers() {
	$PSQL -d "$1" -c "SELECT string_agg(c.relname || ':' || count || ':' || coalesce(en, '-'), ' ' ORDER BY c.relname)
		FROM pg_class c
		CROSS JOIN LATERAL (SELECT count(*), string_agg(t.tgenabled::text || t.tgisinternal::text, ',') AS en
							FROM pg_trigger t WHERE t.tgrelid = c.oid
							AND t.tgfoid = 'gpubtree_capture()'::regprocedure) x
		WHERE c.relkind = 'r' AND c.relname LIKE 'r%'"
}
# agree DB: count and sum over a range, the node's against the ordinary plan's.
agree() {
	node_vs_plan "$1" "SELECT count(*) || ':' || coalesce(sum(v), 0) FROM r WHERE k BETWEEN 100 AND 40000"
}

expected="r:1:Atrue rp_1:1:Atrue rp_2:1:Atrue"
for round in $(seq 1 "$ROUNDS"); do
	db=restored_$round
	$PSQL -c "CREATE DATABASE $db" >/dev/null || exit 1
	"$PGBIN/pg_restore" -h "$DIR" -p "$PGPORT" -j 4 -d "$db" "$DIR/dump" || exit 1
	check "round $round: one capture trigger per table" "$(triggers "$db")" "$expected"
	$PSQL -d "$db" -c "VACUUM ANALYZE r" >/dev/null
	check "round $round: answers after the restore" "$(agree "$db")" same
	$PSQL -d "$db" -c "DELETE FROM r WHERE k % 3 = 0" -c "UPDATE r SET v = v + 1 WHERE k % 5 = 0" >/dev/null
	check "round $round: answers after deletes" "$(agree "$db")" same
	check "round $round: the mirror holds the index" \
		"$($PSQL -d "$db" -c "SELECT count(*) FROM gpubtree_verify('r_k')")" 0
	# Dropping every gpubtree index of a table drops its trigger too.
	$PSQL -d "$db" -c "DROP INDEX r_k, r_w, r_x, r_kw" >/dev/null
	check "round $round: no trigger after the last index" \
		"$($PSQL -d "$db" -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'r'::regclass")" 0
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
