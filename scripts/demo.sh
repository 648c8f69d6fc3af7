#!/usr/bin/env bash
# Build, install and demonstrate gpubtree on a throwaway local cluster.
#   make demo            (or: scripts/demo.sh)
#   KEEP=1 make demo     leave the cluster running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh

make -s
make -s install

DIR=$(mktemp -d /tmp/gpubtree-demo.XXXXXX)
PORT=${PORT:-54391}
cluster_init "$DIR" "$PORT"
cluster_start "$DIR"
cluster_env "$DIR" "$PORT"
if [ -z "${KEEP:-}" ]; then
	trap 'cluster_stop "$DIR" fast; rm -rf "$DIR"' EXIT
fi

"$PGBIN/psql" -X -v ON_ERROR_STOP=1 -e <<'SQL'
CREATE EXTENSION gpubtree;
SELECT built_with_cuda, cuda_version, device_name, status FROM gpubtree_device_info();

CREATE TABLE events (k bigint, v bigint, at timestamptz);
INSERT INTO events
  SELECT i, i % 1000, '2026-01-01'::timestamptz + i * interval '1 second'
  FROM generate_series(1, 1000000) i;
CREATE INDEX events_k ON events USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE events;

EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM events WHERE k BETWEEN 1000 AND 200000;
SELECT count(*), sum(v) FROM events WHERE k BETWEEN 1000 AND 200000;

EXPLAIN (COSTS OFF) SELECT k, v FROM events WHERE k = ANY ('{5,50,500,5000}') ORDER BY k;
SELECT k, v FROM events WHERE k = ANY ('{5,50,500,5000}') ORDER BY k;

EXPLAIN (COSTS OFF) SELECT k FROM events ORDER BY k DESC LIMIT 3;
SELECT k FROM events ORDER BY k DESC LIMIT 3;
SQL

if [ -n "${KEEP:-}" ]; then
	echo "cluster left running: PGHOST=$DIR PGPORT=$PORT PGUSER=$PGUSER psql postgres"
fi
