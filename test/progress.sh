#!/usr/bin/env bash
# A gpubtree build reports its phases in pg_stat_progress_create_index.
# Samples the view from a second session while CREATE INDEX runs.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh

cluster_throwaway progress "${PORT:-54402}"

$PSQL -c "CREATE EXTENSION gpubtree" -c "CREATE TABLE big AS SELECT (random() * 1e9)::int8 AS k FROM generate_series(1, 3000000)" || exit 1

$PSQL -c "SET maintenance_work_mem = '8MB'" -c "CREATE INDEX big_k ON big USING gpubtree (k)" &
builder=$!
: >"$DIR/phases"
while kill -0 $builder 2>/dev/null; do
	$PSQL -Atc "SELECT command, phase, blocks_total > 0 FROM pg_stat_progress_create_index WHERE relid = 'big'::regclass" >>"$DIR/phases" 2>/dev/null
done
wait $builder || { echo "progress: CREATE INDEX failed"; echo "0 passed, 1 failed"; exit 1; }

sort -u "$DIR/phases" | sed 's/^/  seen: /'
if grep -q '^CREATE INDEX|building index: scanning table|t$' "$DIR/phases" &&
	grep -Eq '^CREATE INDEX\|building index: (sorting live tuples|loading tuples in tree)\|' "$DIR/phases"; then
	echo "progress: ok"
	echo "1 passed, 0 failed"
else
	echo "progress: the scan and sort/load phases were not both reported"
	echo "0 passed, 1 failed"
	exit 1
fi
