#!/usr/bin/env bash
# Crash test: several sessions load gpubtree-indexed tables (committed,
# rolled-back and in-flight transactions); the server is stopped with
# `pg_ctl stop -m immediate` in the middle and restarted (WAL recovery).
# Then: every transaction whose COMMIT was acknowledged survived, and the
# gpubtree indexes answer exactly as a sequential scan and a freshly built
# btree do, under index, index-only and bitmap scans; amcheck verifies them.
# Writing goes on after recovery and is checked again.  Two crash cycles.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh

DIR=$(mktemp -d /tmp/gpubtree-crash.XXXXXX)
PORT=${PORT:-54407}
trap 'kill $(jobs -p) 2>/dev/null; cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "$PORT" && cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1"

$PSQL <<'SQL' || exit 1
CREATE EXTENSION gpubtree;
CREATE EXTENSION amcheck;
CREATE TABLE c (id bigserial, k int8, k2 int4, v float8);
CREATE INDEX c_k ON c USING gpubtree (k) INCLUDE (v);
CREATE INDEX c_k2k ON c USING gpubtree (k2, k);
CREATE TABLE committed (tx int8 PRIMARY KEY);
SQL

passed=0
failed=0
check() {
	if [ "$2" = "$3" ]; then
		echo "ok: $1"; passed=$((passed + 1))
	else
		echo "FAILED: $1: got '$2', expected '$3'"; failed=$((failed + 1))
	fi
}

# load TAG [N]: N transactions, or until the server goes away; psql echoes
# each acknowledged commit's id into $DIR/acked.TAG.
load() {
	local tag=$1 i
	for i in $(seq 1 "${2:-200000}"); do
		local tx=$((tag * 1000000 + i)) k=$(( (i * 7919 + tag) % 5000 ))
		echo "BEGIN;
INSERT INTO c (k, k2, v) SELECT $k + g % 50, g % 7, g / 3.0 FROM generate_series(1, 20) g;
UPDATE c SET k = k + 1 WHERE k = $((k + 3));
DELETE FROM c WHERE k = $((k + 11)) AND k2 = 3;
INSERT INTO committed VALUES ($tx);"
		if [ $((i % 5)) = 0 ]; then echo "ROLLBACK;"; else echo "COMMIT;"; echo "\\echo $tx"; fi
	done | $PSQL >"$DIR/acked.$tag" 2>/dev/null
}

# same LABEL QUERY: the query's answer through each gpubtree plan shape and
# through a fresh btree equals a sequential scan's.
same() {
	local label=$1 q=$2 expected got shape
	expected=$(echo "SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q;" |
		$PSQL | md5sum)
	for shape in "enable_bitmapscan = off; SET enable_indexonlyscan = off" \
		"enable_bitmapscan = off" "enable_indexscan = off; SET enable_indexonlyscan = off"; do
		got=$(echo "SET enable_seqscan = off; SET $shape; $q;" | $PSQL | md5sum)
		check "$label: gpubtree, SET $shape: $q" "$got" "$expected"
	done
	got=$(echo "BEGIN; DROP INDEX c_k, c_k2k; CREATE INDEX ON c (k) INCLUDE (v); CREATE INDEX ON c (k2, k);
		SET LOCAL enable_seqscan = off; $q; ROLLBACK;" | $PSQL | md5sum)
	check "$label: fresh btree: $q" "$got" "$expected"
}

verify() {
	local label=$1 missing
	missing=$(cat "$DIR"/acked.* | sort -u | comm -23 - <($PSQL -c "SELECT tx FROM committed ORDER BY tx::text" | sort -u) | wc -l)
	check "$label: acknowledged commits all present ($(cat "$DIR"/acked.* | wc -l))" "$missing" 0
	same "$label" "SELECT k, v FROM c WHERE k BETWEEN 100 AND 900 ORDER BY k, v"
	same "$label" "SELECT k2, k FROM c WHERE k2 = 3 AND k < 2000 ORDER BY k2, k"
	same "$label" "SELECT count(*), sum(k) FROM c WHERE k >= 0"
	$PSQL -c "SELECT gpubtree_index_check('c_k', true)" -c "SELECT gpubtree_index_check('c_k2k', true)" >/dev/null
	check "$label: amcheck verifies both gpubtree indexes" "$?" 0
}

for cycle in 1 2; do
	for w in 1 2 3 4; do load $((cycle * 10 + w)) & done
	sleep 5
	cluster_stop "$DIR" immediate
	wait 2>/dev/null
	cluster_start "$DIR" || { echo "restart failed"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
	check "cycle $cycle: rows were loaded before the crash" "$(( $($PSQL -c 'SELECT count(*) FROM c') > 0 ))" 1
	verify "cycle $cycle, after recovery"
	load $((cycle * 10 + 9)) 300
	verify "cycle $cycle, after more writes"
done

echo "crash test: $([ $failed = 0 ] && echo ok || echo FAILED)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
