#!/usr/bin/env bash
# Many sessions mixing range and = ANY bitmap scans (through the service)
# with committed writes; every scan compares gpubtree's answer with btree's
# under one snapshot and raises an error on any difference.
#   CLIENTS=32 DURATION=60 test/concurrency/run.sh     (the GPU machine)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-15}
HERE=test/concurrency

DIR=$(mktemp -d /tmp/gpubtree-conc.XXXXXX)
PORT=${PORT:-54405}
trap 'cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "$PORT" && echo "max_connections = $((CLIENTS + 20))" >>"$DIR/data/postgresql.conf" &&
	cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1"
$PSQL -f $HERE/setup.sql >/dev/null || exit 1

r0=$($PSQL -c "SELECT requests FROM gpubtree_status()")
export PGOPTIONS="-c enable_seqscan=off -c enable_indexscan=off -c enable_indexonlyscan=off -c max_parallel_workers_per_gather=0 -c gpubtree.enable_lookup=off ${GPUBTREE_DEVICE:+-c gpubtree.device=$GPUBTREE_DEVICE}"
"$PGBIN/pgbench" -n -c "$CLIENTS" -j "$(( CLIENTS < 8 ? CLIENTS : 8 ))" -T "$DURATION" \
	-f $HERE/read_range.sql@20 -f $HERE/read_any.sql@20 -f $HERE/write.sql@1 postgres \
	>"$DIR/pgbench.log" 2>&1
rc=$?
unset PGOPTIONS
grep -E "number of transactions actually processed|tps =|aborted|ERROR" "$DIR/pgbench.log" | sort | uniq -c | head -12
served=$(( $($PSQL -c "SELECT requests FROM gpubtree_status()") - r0 ))
echo "service requests answered: $served; $($PSQL -c "SELECT 'fallbacks: ' || fallbacks || ', mirror builds: ' || mirror_builds FROM gpubtree_status()")"
if [ $rc = 0 ] && [ "$served" -gt 0 ] && ! grep -q "aborted" "$DIR/pgbench.log"; then
	echo "concurrency ($CLIENTS clients, ${DURATION}s): ok"
	echo "1 passed, 0 failed"
else
	echo "concurrency: FAILED (pgbench exit $rc, $served service requests)"
	echo "0 passed, 1 failed"
	exit 1
fi
