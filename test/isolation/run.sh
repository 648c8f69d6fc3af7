#!/usr/bin/env bash
# Isolation tests of the mirror's consistency (commit-time resync): the
# specs of test/isolation/specs/ (the Makefile's ISOLATION), run by
# `make installcheck` (pg_isolation_regress only) against a throwaway
# cluster that preloads gpubtree (so the GPU service runs; its CPU engine
# where there is no GPU) and allows prepared transactions.  Every check
# there compares a forced bitmap scan with a sequential scan and shows that
# the service answered it.  Ends with "N passed, N failed", one per spec.
#   test/isolation/run.sh [SPEC...]     (default: every spec)
#   GPUBTREE_ENGINE=gpu test/isolation/run.sh   (the service on the GPU only)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
PORT=${PORT:-54408}

if [ $# -gt 0 ]; then
	nspecs=$#
	only=(ISOLATION="$*")
else
	nspecs=$(ls test/isolation/specs/*.spec | wc -l)
	only=()
fi

cluster_throwaway isolation "$PORT"
export PGOPTIONS="${GPUBTREE_DEVICE:+-c gpubtree.device=$GPUBTREE_DEVICE}"
LOG=$DIR/run.log
# REGRESS= leaves the pg_regress suite to test/run_all.sh's own part.
make -s installcheck REGRESS= "${only[@]}" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}

# (PostgreSQL 15 says "test NAME ... ok", 16 and later "ok N - NAME")
nfail=$(grep -cE '^(not ok|test .* \.\.\. FAILED|.* \.\.\. FAILED)' "$LOG")
npass=$(grep -cE '^ok |^test .* \.\.\. ok|^ +[a-z_0-9-]+ +\.\.\. ok' "$LOG")
if [ $((npass + nfail)) != "$nspecs" ]; then
	# Count whatever did not report as failed (the driver itself failed).
	nfail=$((nspecs - npass))
fi
if [ "$nfail" != 0 ] || [ "$rc" != 0 ]; then
	# (the outputs stay in output_iso/; the cluster goes away at exit)
	echo "--- output_iso/regression.diffs:"
	cat output_iso/regression.diffs 2>/dev/null
	echo "--- server log (last 30 lines)"
	tail -30 "$DIR/server.log"
	[ "$nfail" = 0 ] && nfail=1 npass=$((nspecs - 1))
fi
echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ] && [ "$rc" = 0 ]
