#!/usr/bin/env bash
# Without shared_preload_libraries there is no GPU service: the access
# method still works, bitmap scans are answered by nbtree, and EXPLAIN and
# gpubtree_status() say why.
set -uo pipefail
cd "$(dirname "$0")/.."
export GBT_PRELOAD=0
. test/lib.sh

cluster_throwaway nopreload "${PORT:-54404}"

out=$($PSQL <<'SQL' 2>&1
CREATE EXTENSION gpubtree;
CREATE TABLE g AS SELECT g % 5000 AS k, g AS v FROM generate_series(1, 50000) g;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX ON g USING gpubtree (k);
CREATE INDEX ON b (k);
VACUUM ANALYZE g;
VACUUM ANALYZE b;
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SELECT (SELECT sum(v) FROM g WHERE k BETWEEN 10 AND 3000) = (SELECT sum(v) FROM b WHERE k BETWEEN 10 AND 3000);
EXPLAIN (COSTS OFF) SELECT sum(v) FROM g WHERE k BETWEEN 10 AND 3000;
SELECT running, status FROM gpubtree_status();
SQL
)
echo "$out"
if echo "$out" | grep -qx 't' &&
	echo "$out" | grep -q 'nbtree (no GPU service: gpubtree is not in shared_preload_libraries)' &&
	echo "$out" | grep -q '^f|no GPU service'; then
	echo "no preload: ok"
	echo "1 passed, 0 failed"
else
	echo "no preload: FAILED"
	echo "0 passed, 1 failed"
	exit 1
fi
