#!/usr/bin/env bash
# The randomized differential test (diff.py) on a throwaway cluster.
#   test/differential/run.sh [SEED ...]      default: 5 fresh seeds, printed
# GPUBTREE_DEVICE=gpu sets gpubtree.device for every query.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
seeds=("$@")
if [ ${#seeds[@]} -eq 0 ]; then
	for _ in 1 2 3 4 5; do seeds+=($(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 ))); done
fi

DIR=$(mktemp -d /tmp/gpubtree-diff.XXXXXX)
PORT=${PORT:-54401}
trap 'cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
cluster_init "$DIR" "$PORT" && cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
export PGBIN
"$PGBIN/psql" -X -q -c "CREATE EXTENSION gpubtree" ||
	{ echo "CREATE EXTENSION gpubtree failed: run make install first"; echo "0 passed, 1 failed"; exit 1; }

echo "seeds: ${seeds[*]} (rerun with: test/differential/run.sh ${seeds[*]})"
passed=0
failed=0
for seed in "${seeds[@]}"; do
	if python3 test/differential/diff.py "$seed"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
