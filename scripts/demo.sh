#!/usr/bin/env bash
# What gpubtree is for, on a throwaway local cluster: the same range
# aggregate and the same k = ANY(large array) lookup, answered once by
# btree's plan (a table with a btree index) and once by gpubtree (the same
# rows with a gpubtree index), timed side by side, with EXPLAIN ANALYZE
# saying what answered.  Without a GPU the GPU service answers on its CPU
# engine, so the demo runs anywhere.
#
#   make demo                  (checks and installs dependencies first)
#   ROWS=4000000 make demo     another table size (default 2000000)
#   KEEP=1 make demo           leave the cluster running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh
export LC_ALL=C
GBT_BUILD_WAIT=   # the shipped defaults: no query waits for a mirror build   # numbers as psql prints them, for awk

ROWS=${ROWS:-2000000}
KEYS=$((ROWS / 40))   # the = ANY array: 2.5% of the rows
RUNS=3                # timed runs of each query; the median is reported

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
PSQL="$PGBIN/psql -X -q -v ON_ERROR_STOP=1"

say() { printf '\n== %s\n' "$*"; }
# EXPLAIN prints the = ANY array in full: keep its first three keys.
short() { sed -E "s/'\{(-?[0-9]+,-?[0-9]+,-?[0-9]+),[-0-9,]{20,}\}'/'{\1,...}'/g"; }

# The queries, with %s for the table.  The = ANY array comes from a psql
# variable (:'keys', set by each session's prelude), so the query is a
# constant array, as an application would send it.
LO=$((ROWS * 4 / 10 + 1)) HI=$((ROWS / 2))
RANGE="SELECT count(*), sum(v) FROM %s WHERE k BETWEEN $LO AND $HI"
ANY="SELECT count(*), sum(v) FROM %s WHERE k = ANY (:'keys'::bigint[])"
PRELUDE="SELECT array_agg(1 + g * 7919 % $ROWS)::text AS keys FROM generate_series(1, $KEYS) g \\gset"

echo "gpubtree demo: the same range aggregate and the same k = ANY(large array) lookup, answered by"
echo "btree's plan and by gpubtree, timed side by side, with EXPLAIN ANALYZE saying what answered."

say "Setting up: two tables of $ROWS rows (k bigint, v bigint) holding the same rows"
echo "   events_btree:    CREATE INDEX ... USING btree (k) INCLUDE (v)"
echo "   events_gpubtree: CREATE INDEX ... USING gpubtree (k) INCLUDE (v)"
$PSQL <<SQL
CREATE EXTENSION gpubtree;
CREATE TABLE events_btree (k bigint NOT NULL, v bigint);
CREATE TABLE events_gpubtree (k bigint NOT NULL, v bigint);
INSERT INTO events_btree SELECT i, i % 1000 FROM generate_series(1, $ROWS) i;
INSERT INTO events_gpubtree SELECT * FROM events_btree;
CREATE INDEX events_btree_k ON events_btree USING btree (k) INCLUDE (v);
CREATE INDEX events_gpubtree_k ON events_gpubtree USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE events_btree;
VACUUM ANALYZE events_gpubtree;
SQL
echo "   GPU service: $($PSQL -Atc "SELECT status FROM gpubtree_status()")"

say "Warming up: the first query that needs a mirror (the index's copy the GPU service searches) asks for it to be built in the background, and is answered by the ordinary plan meanwhile"
$PSQL -At -c "EXPLAIN (ANALYZE, COSTS OFF) $(printf "$RANGE" events_gpubtree)" |
	grep -E 'Answered by|Execution Time' | sed 's/^ */   first query on events_gpubtree: /'
# The mirror may be built in the background: wait until it is current.
for _ in $(seq 1 60); do
	mirror=$($PSQL -Atc "SELECT entries || ' entries, built in ' || round(build_ms) || ' ms on the ' || engine || ' engine'
		FROM gpubtree_mirrors() WHERE index = 'events_gpubtree_k'::regclass AND current")
	[ -n "$mirror" ] && break
	$PSQL -c "$(printf "$RANGE" events_gpubtree)" >/dev/null
	sleep 0.5
done
[ -n "$mirror" ] || mirror="none yet (the queries below run the ordinary plan; EXPLAIN says why)"
echo "   mirror: $mirror"

# timed NAME QUERY: run QUERY on both tables, RUNS times each, after one
# untimed run; remember the median time (psql \timing: planning, execution
# and the round trip) and the answers.
declare -A ms answer
timed() {
	local name=$1 q=$2 t out
	for t in events_btree events_gpubtree; do
		out=$({ echo "$PRELUDE"; echo "$(printf "$q" $t);"; echo '\timing on'
			for _ in $(seq $RUNS); do echo "$(printf "$q" $t);"; done; } | $PSQL -At)
		answer[$name,$t]=$(echo "$out" | grep -v '^Time' | sort -u | tr '\n' ' ')
		ms[$name,$t]=$(echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -n |
			sed -n "$(((RUNS + 1) / 2))p" | awk '{ printf "%.1f", $1 }')
	done
}

# explain NAME QUERY: EXPLAIN ANALYZE on both tables; remember what answered
# the gpubtree query.
declare -A how
explain() {
	local name=$1 q=$2 plan
	echo "-- btree's plan, on events_btree: EXPLAIN (ANALYZE, COSTS OFF)"
	{ echo "$PRELUDE"; echo "EXPLAIN (ANALYZE, COSTS OFF) $(printf "$q" events_btree);"; } |
		$PSQL -At | short | sed 's/^/   /'
	echo "-- gpubtree, on events_gpubtree: EXPLAIN (ANALYZE, VERBOSE, COSTS OFF), Output lines left out"
	plan=$({ echo "$PRELUDE"; echo "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $(printf "$q" events_gpubtree);"; } |
		$PSQL -At | short | grep -v '^ *Output: ')
	echo "$plan" | sed 's/^/   /'
	how[$name]=$(echo "$plan" | sed -n 's/^ *Answered by: //p' | head -1)
	if [ "${how[$name]}" = "GPU service" ]; then
		how[$name]+=", $(echo "$plan" | sed -n 's/^ *Engine: //p' | head -1)"
	fi
	[ -n "${how[$name]}" ] || how[$name]="btree's plan (no GpubtreeAggregate node)"
}

say "1. Range aggregate over 10% of the keys: $(printf "$RANGE" '<table>')"
explain range "$RANGE"
timed range "$RANGE"

say "2. Lookup of $KEYS keys: $(printf "$ANY" '<table>') (:keys = $KEYS keys spread over the table)"
explain any "$ANY"
timed any "$ANY"

say "3. SET gpubtree.device = off: the planner no longer offers the service, and the gpubtree index (an nbtree on disk) answers with btree's plan, at btree's speed"
$PSQL -At -c "SET gpubtree.device = off" -c "EXPLAIN (ANALYZE, COSTS OFF) $(printf "$RANGE" events_gpubtree)" | sed 's/^/   /'

say "Summary: $ROWS rows, median of $RUNS runs each (psql \\timing), on $(nproc) CPU cores"
printf '%-34s %12s %12s %9s  %s\n' query "btree's plan" gpubtree speed-up "gpubtree answered by"
row() {
	local name=$1 label=$2 b=${ms[$1,events_btree]:-?} g=${ms[$1,events_gpubtree]:-?} x=?
	[ "$b" != "?" ] && [ "$g" != "?" ] && x=$(awk -v b="$b" -v g="$g" 'BEGIN { printf "%.1fx", b / g }')
	printf '%-34s %9s ms %9s ms %9s  %s\n' "$label" "$b" "$g" "$x" "${how[$name]}"
	if [ "${answer[$name,events_btree]}" != "${answer[$name,events_gpubtree]}" ]; then
		echo "   DIFFERENT ANSWERS: btree ${answer[$name,events_btree]}, gpubtree ${answer[$name,events_gpubtree]}"
		return 1
	fi
}
row range "count, sum over 10% of k"
row any "count, sum, k = ANY($KEYS keys)"
echo "(the same answers on both tables: ${answer[range,events_btree]}and ${answer[any,events_btree]}as count|sum;"
echo " the speed-up is btree's time / gpubtree's)"

if [ -n "${KEEP:-}" ]; then
	echo "cluster left running: PGHOST=$DIR PGPORT=$PORT PGUSER=$PGUSER psql postgres"
fi
