#!/usr/bin/env bash
# The randomized differential test (diff.py) on a throwaway cluster.
#   test/differential/run.sh [SEED ...] [--concurrent [SEED ...]] [--mvcc [SEED ...]]
# Default: 3 fresh seeds of the serial test, 1 of the concurrent one
# (diff.py --concurrent: checks under one snapshot while writer sessions
# insert, update, delete, roll back and VACUUM) and 1 of the MVCC one
# (diff.py --mvcc: update- and delete-heavy transactions, committed, rolled
# back and in savepoints, serial and then concurrent, checked through the
# GpubtreeAggregate node against gpubtree.device = off at READ COMMITTED,
# REPEATABLE READ and SERIALIZABLE, and a REPEATABLE READ snapshot held
# throughout), all printed; about 2 minutes on 2 cores.  Seeds given: only
# those run (serial ones first, concurrent ones after --concurrent, MVCC
# ones after --mvcc).  A concurrent or MVCC seed fixes every session's SQL,
# not how the sessions interleave.
# GPUBTREE_ENGINE=gpu sets the cluster's gpubtree.engine; GPUBTREE_DEVICE=off
# sets gpubtree.device for every query.
# CONCURRENT_SECONDS (15) and CONCURRENT_WRITERS (3) size the concurrent
# runs, MVCC_SECONDS (15) and MVCC_WRITERS (2) the MVCC runs' writers.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
seeds=()
cseeds=()
mseeds=()
mode=serial
for a in "$@"; do
	case $a in
	--concurrent) mode=concurrent ;;
	--mvcc) mode=mvcc ;;
	*) case $mode in
		serial) seeds+=("$a") ;;
		concurrent) cseeds+=("$a") ;;
		mvcc) mseeds+=("$a") ;;
		esac ;;
	esac
done
fresh() { echo $(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 )); }
if [ $# -eq 0 ]; then
	for _ in 1 2 3; do seeds+=($(fresh)); done
	cseeds+=($(fresh))
	mseeds+=($(fresh))
fi

# Every index is checked with contrib's amcheck (PostgreSQL 16's wheel lacks it).
if [ ! -f "$("$PG_CONFIG" --sharedir)/extension/amcheck.control" ]; then
	echo "SKIPPED: no amcheck in this PostgreSQL ($("$PG_CONFIG" --sharedir))"
	exit 0
fi

DIR=$(mktemp -d /tmp/gpubtree-diff.XXXXXX)
PORT=${PORT:-54401}
trap 'cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "$PORT" && cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
export PGBIN
"$PGBIN/psql" -X -q -c "CREATE EXTENSION gpubtree" ||
	{ echo "CREATE EXTENSION gpubtree failed: run make install first"; echo "0 passed, 1 failed"; exit 1; }

rerun="${seeds[*]}${cseeds[*]:+ --concurrent ${cseeds[*]}}${mseeds[*]:+ --mvcc ${mseeds[*]}}"
echo "seeds: ${seeds[*]:-none}; concurrent: ${cseeds[*]:-none}; mvcc: ${mseeds[*]:-none} (rerun with: test/differential/run.sh ${rerun# })"
passed=0
failed=0
for seed in "${seeds[@]}"; do
	if python3 test/differential/diff.py "$seed"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
for seed in "${cseeds[@]}"; do
	if python3 test/differential/diff.py "$seed" --concurrent \
		--seconds "${CONCURRENT_SECONDS:-15}" --writers "${CONCURRENT_WRITERS:-3}"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		grep -E "PANIC|TRAP|terminated by signal|was terminated" "$DIR/server.log" | tail -5
	fi
done
for seed in "${mseeds[@]}"; do
	if python3 test/differential/diff.py "$seed" --mvcc \
		--seconds "${MVCC_SECONDS:-15}" --writers "${MVCC_WRITERS:-2}"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		grep -E "PANIC|TRAP|terminated by signal|was terminated" "$DIR/server.log" | tail -5
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
