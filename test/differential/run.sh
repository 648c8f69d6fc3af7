#!/usr/bin/env bash
# The randomized differential test (diff.py) on a throwaway cluster.
#   test/differential/run.sh [SEED ...] [--concurrent [SEED ...]]
# Default: 5 fresh seeds of the serial test and 2 fresh seeds of the
# concurrent one (diff.py --concurrent: checks under one snapshot while
# writer sessions insert, update, delete, roll back and VACUUM), all printed.
# Seeds given: only those run (serial ones before --concurrent, concurrent
# ones after it).  A concurrent seed fixes every session's SQL, not how the
# sessions interleave.
# GPUBTREE_ENGINE=gpu sets the cluster's gpubtree.engine; GPUBTREE_DEVICE=off
# sets gpubtree.device for every query.
# CONCURRENT_SECONDS (30) and CONCURRENT_WRITERS (3) size the concurrent runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
seeds=()
cseeds=()
mode=serial
for a in "$@"; do
	case $a in
	--concurrent) mode=concurrent ;;
	*) if [ $mode = serial ]; then seeds+=("$a"); else cseeds+=("$a"); fi ;;
	esac
done
fresh() { echo $(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 )); }
if [ $# -eq 0 ]; then
	for _ in 1 2 3 4 5; do seeds+=($(fresh)); done
	for _ in 1 2; do cseeds+=($(fresh)); done
fi

DIR=$(mktemp -d /tmp/gpubtree-diff.XXXXXX)
PORT=${PORT:-54401}
trap 'cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "$PORT" && cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
export PGBIN
"$PGBIN/psql" -X -q -c "CREATE EXTENSION gpubtree" ||
	{ echo "CREATE EXTENSION gpubtree failed: run make install first"; echo "0 passed, 1 failed"; exit 1; }

rerun="${seeds[*]}${cseeds[*]:+ --concurrent ${cseeds[*]}}"
echo "seeds: ${seeds[*]:-none}; concurrent: ${cseeds[*]:-none} (rerun with: test/differential/run.sh ${rerun# })"
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
		--seconds "${CONCURRENT_SECONDS:-30}" --writers "${CONCURRENT_WRITERS:-3}"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		grep -E "PANIC|TRAP|terminated by signal|was terminated" "$DIR/server.log" | tail -5
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
