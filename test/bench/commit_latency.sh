#!/usr/bin/env bash
# What commit-time resync adds to writing transactions (issue 7): pgbench
# INSERT transactions of 1, 10, 100 and 1000 rows, 1 and 8 clients, into
#   btree    a table with a btree index on k
#   gpubtree a table with a gpubtree index on k and no mirror
#   mirror   a table with a gpubtree index on k whose mirror is current and
#            used (a reader runs a range count on it twice a second), so
#            every committed row goes through the change log into the mirror
# all in one run on one cluster (synchronous_commit on; the test cluster
# has fsync off).  Prints a Markdown table: tps, mean latency per
# transaction and per row, and the overhead against btree.
#   test/bench/commit_latency.sh        DURATION=10 ROWS=1000000 CLIENTS="1 8"
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
DURATION=${DURATION:-10}
ROWS=${ROWS:-1000000}
CLIENTS=${CLIENTS:-"1 8"}
BATCHES=${BATCHES:-"1 10 100 1000"}

cluster_throwaway commit 54410
$PSQL <<SQL || exit 1
CREATE EXTENSION gpubtree;
CREATE TABLE t_btree (k int8, v float8);
CREATE TABLE t_gpubtree (k int8, v float8);
CREATE TABLE t_mirror (k int8, v float8);
INSERT INTO t_btree SELECT (g::int8 * 7919) % $ROWS, g FROM generate_series(1, $ROWS) g;
INSERT INTO t_gpubtree SELECT * FROM t_btree;
INSERT INTO t_mirror SELECT * FROM t_btree;
CREATE INDEX ON t_btree (k);
CREATE INDEX ON t_gpubtree USING gpubtree (k);
CREATE INDEX ON t_mirror USING gpubtree (k);
VACUUM ANALYZE;
SQL
SCAN="SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET gpubtree.enable_aggregate = off; SELECT count(*) FROM t_mirror WHERE k BETWEEN 1000 AND 2000"
$PSQL -c "$SCAN" >/dev/null
( while :; do $PSQL -c "$SCAN" >/dev/null 2>&1; sleep 0.5; done ) &
READER=$!
trap 'kill $READER 2>/dev/null; cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT

echo "| table | rows/xact | clients | tps | ms/xact | µs/row | overhead vs btree |"
echo "|---|---|---|---|---|---|---|"
for c in $CLIENTS; do
	for n in $BATCHES; do
		base=""
		for t in btree gpubtree mirror; do
			echo "INSERT INTO t_$t SELECT random() * $ROWS, random() FROM generate_series(1, $n);" >"$DIR/w.sql"
			out=$("$PGBIN/pgbench" -n -c "$c" -j "$c" -T "$DURATION" -f "$DIR/w.sql" postgres 2>&1)
			tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
			lat=$(echo "$out" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
			[ -z "$base" ] && base=$lat
			echo "| $t | $n | $c | $tps | $lat | $(awk -v l=$lat -v n=$n 'BEGIN { printf "%.1f", l * 1000 / n }') | $(awk -v l=$lat -v b=$base 'BEGIN { printf "%+.1f%%", (l / b - 1) * 100 }') |"
		done
	done
done
echo
$PSQL -c "SELECT 'service: ' || status || ', logged ' || logged_entries || ', invalidations ' || invalidations || ', builds ' || mirror_builds FROM gpubtree_status()"
$PSQL -c "SELECT 'mirror of t_mirror: ' || entries || ' entries, delta ' || delta || ', current ' || current FROM gpubtree_mirrors() WHERE index = 't_mirror_k_idx'::regclass"
$PSQL -c "SELECT count(*) || ' problems' FROM gpubtree_verify('t_mirror_k_idx')"
