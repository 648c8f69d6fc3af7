#!/usr/bin/env bash
# The first range aggregates after pg_restore, as a new user runs it
# (issue 38): shipped defaults (test/lib.sh's cluster, only
# shared_preload_libraries = 'gpubtree'), a table (k int8, v int8) of 2^N
# rows with a gpubtree index (k) INCLUDE (v) and a btree twin, dumped with
# pg_dump -Fc and restored into a new database where nothing is vacuumed.
# Then a count(*) and a sum(v) over 10 % of the keys are asked again and
# again, as a dashboard would, for at most 60 s: each one's time
# (EXPLAIN ANALYZE's Execution Time), what answered it and the entries it
# checked in the heap, against btree's first answer of the same queries.
# Prints a Markdown table.
#
#   test/bench/restore.sh [LOG2_ROWS]      (default: 24)
set -uo pipefail
cd "$(dirname "$0")/../.."
GBT_BUILD_WAIT=   # the shipped default
. test/lib.sh
export LC_ALL=C

. test/bench/compare_lib.sh

LOG2=${1:-24}
ROWS=$((1 << LOG2))
lo=$((ROWS / 3))
cluster_throwaway "bench-restore" "${PORT:-54427}"
echo "## pg_restore of 2^$LOG2 rows"
echo
$PSQL -c "SELECT version()"
load_tables $ROWS || exit 1
$PSQL -c "SELECT coalesce(device_name || ' (' || round(device_memory / 2^30) || ' GiB)', status) FROM gpubtree_device_info()"
$PSQL -c "CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v)" \
	-c "CREATE INDEX b_k ON b (k) INCLUDE (v)" || exit 1
t0=$SECONDS
"$PGBIN"/pg_dump -Fc -f "$DIR/dump" || exit 1
echo "pg_dump -Fc: $((SECONDS - t0)) s"
$PSQL -c "CREATE DATABASE restored" || exit 1
t0=$SECONDS
"$PGBIN"/pg_restore -d restored "$DIR/dump" || exit 1
restored_at=$(date +%s.%N)
echo "pg_restore: $((SECONDS - t0)) s (no VACUUM after it)"
echo

# ask QUERY: "ms; what answered; entries checked in the heap", from one
# EXPLAIN ANALYZE of QUERY in the restored database.
ask() {
	$PSQL -d restored -c "EXPLAIN (ANALYZE, TIMING OFF) $1" |
		awk '/Answered by:/ {sub(/^ *Answered by: /, ""); who = $0}
			/Entries Checked in Heap:/ {heap = $NF}
			/Execution Time:/ {ms = $3}
			END {printf "%s; %s; %s\n", ms, who == "" ? "no service node" : who, heap == "" ? "-" : heap}'
}

echo "| query | btree: first, ms | gpubtree: first (ms; answered by; checked in heap) | s after pg_restore until the service answered | that answer (ms; checked in heap) | same |"
echo "|---|---|---|---|---|---|"
for what in "count(*)" "sum(v)"; do
	q="SELECT $what FROM %s WHERE k BETWEEN $lo AND $((lo + ROWS / 10 - 1))"
	bfirst=$(ask "$(printf "$q" b)" | cut -d';' -f1)
	gfirst=$(ask "$(printf "$q" g)")
	served="not in 60 s"
	answer=""
	while awk -v a="$restored_at" -v b="$(date +%s.%N)" 'BEGIN { exit !(b - a < 60) }'; do
		got=$(ask "$(printf "$q" g)")
		if [[ "$got" == *"; GPU service; "* ]]; then
			served=$(awk -v a="$restored_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
			answer="${got%%;*};${got##*;}"
			break
		fi
		sleep 0.1
	done
	same=$([ "$($PSQL -d restored -c "$(printf "$q" g)")" = "$($PSQL -d restored -c "$(printf "$q" b)")" ] &&
		echo yes || echo NO)
	echo "| $what 10 % | $bfirst | $gfirst | $served | $answer | $same |"
done
echo
$PSQL -d restored -c "SELECT index::regclass, engine, entries, decided_by, stamped, note FROM gpubtree_mirrors()" | sed 's/^/    /'
