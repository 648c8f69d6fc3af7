#!/usr/bin/env bash
# Isolation tests of the mirror's consistency (commit-time resync):
# pg_isolation_regress runs test/isolation/specs/*.spec against a throwaway
# cluster that preloads gpubtree (so the GPU service runs; its CPU engine
# where there is no GPU).  Every check there compares a forced bitmap scan
# with a sequential scan and shows that the service answered it.
#   test/isolation/run.sh [SPEC...]     (default: every spec)
#   GPUBTREE_ENGINE=gpu test/isolation/run.sh   (the service on the GPU only)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
HERE=test/isolation
PORT=${PORT:-54408}
REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress

if [ $# -gt 0 ]; then
	specs=("$@")
else
	specs=()
	for f in $HERE/specs/*.spec; do specs+=("$(basename "$f" .spec)"); done
fi

if [ ! -x "$REGRESS" ]; then
	echo "pg_isolation_regress not found at $REGRESS"
	echo "0 passed, ${#specs[@]} failed"
	exit 1
fi

cluster_throwaway isolation "$PORT"
export PGOPTIONS="${GPUBTREE_DEVICE:+-c gpubtree.device=$GPUBTREE_DEVICE}"
OUT=$DIR/out
mkdir -p "$OUT"
[ "$(id -u)" = 0 ] && chown "$GBT_OS_USER" "$OUT"
# --use-existing creates no database: make it, with the extension.
$PSQL -c "CREATE DATABASE isolation_regression" &&
	$PSQL -d isolation_regression -c "CREATE EXTENSION gpubtree" ||
	{ echo "CREATE EXTENSION gpubtree failed: run make install first"; echo "0 passed, ${#specs[@]} failed"; exit 1; }

"$REGRESS" --use-existing --host="$DIR" --port="$PORT" --user="$PGUSER" \
	--dbname=isolation_regression \
	--inputdir=$HERE --outputdir="$OUT" "${specs[@]}" 2>&1 | tee "$OUT/run.log"
rc=${PIPESTATUS[0]}

nfail=$(grep -cE '^(not ok|test .* \.\.\. FAILED|.* \.\.\. FAILED)' "$OUT/run.log")
npass=$(grep -cE '^ok |^test .* \.\.\. ok|^ +[a-z_0-9-]+ +\.\.\. ok' "$OUT/run.log")
if [ $((npass + nfail)) != ${#specs[@]} ]; then
	# Count whatever did not report as failed (the driver itself failed).
	nfail=$((${#specs[@]} - npass))
fi
if [ "$nfail" != 0 ] || [ "$rc" != 0 ]; then
	# The cluster's directory goes away at exit: keep the outputs.
	KEPT=$(mktemp -d /tmp/gpubtree-isolation-results.XXXXXX)
	cp -r "$OUT"/results "$OUT"/regression.diffs "$DIR/server.log" "$KEPT" 2>/dev/null
	echo "--- outputs kept in $KEPT; regression.diffs:"
	cat "$OUT/regression.diffs" 2>/dev/null
	echo "--- server log (last 30 lines)"
	tail -30 "$DIR/server.log"
	[ "$nfail" = 0 ] && nfail=1 npass=$((${#specs[@]} - 1))
fi
echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ] && [ "$rc" = 0 ]
