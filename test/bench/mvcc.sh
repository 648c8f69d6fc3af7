#!/usr/bin/env bash
# Range aggregates on a table that is being written, with shipped defaults
# (only shared_preload_libraries = 'gpubtree', on test/lib.sh's cluster),
# gpubtree (table g, index g_k) against btree (table b) in the same run.
# Tables (k int8, v int8), 2^N rows, index on (k) INCLUDE (v), vacuumed,
# the mirror current; then:
#
#   update   an UPDATE of 1 % of the rows spread over the table, no VACUUM:
#            count(*) and sum(v) over 10 % and 100 % of the keys (median of
#            5 after a warm-up), with EXPLAIN ANALYZE's heap checks;
#   writers  8 pgbench clients updating random rows at full speed for as
#            long as one reader, in READS REPEATABLE READ transactions, sums
#            v over 10 % of the keys: the node's answer and time, then the
#            ordinary plan's answer under the same snapshot (equal?); the
#            same on btree's table for its time; writers' tps from
#            pg_stat_user_tables;
#   bulk     8 clients running 10000-row UPDATEs for BULK_S seconds: rows
#            and change-log entries per second, mirror invalidations, the
#            first read after (it waits for the service to catch up);
#   commit   1-row UPDATE transactions (pgbench -M prepared), 1 and 8
#            clients, COMMIT_S seconds each, g and b alternating: tps and
#            mean latency;
#   rebuild  15 % of the rows updated in 16 transactions, so that the
#            mirror's delta passes an eighth of its tree and the service
#            folds it into a new tree, while a reader sums v over 10 % of
#            the keys without pause until the new tree is in place (btree's
#            table: the same updates and reader): each read's time, the
#            rebuild's duration and the service's steps.
#
#   test/bench/mvcc.sh [LOG2_ROWS] (default 24)
#   PHASES ["update writers bulk commit"] (or rebuild)  READS [10]  COMMIT_S [10]  BULK_S [10]
#   SERVICE_LOG=1: the service's steps of 20 ms or more (DEBUG1) listed
set -uo pipefail
cd "$(dirname "$0")/../.."
GBT_BUILD_WAIT=   # the shipped default
. test/lib.sh
export LC_ALL=C
. test/bench/compare_lib.sh

LOG2=${1:-24}
ROWS=$((1 << LOG2))
PHASES=${PHASES:-update writers bulk commit}
BULK_S=${BULK_S:-10}
READS=${READS:-10}
COMMIT_S=${COMMIT_S:-10}
PGBENCH="$PGBIN/pgbench"
WORK=$(mktemp -d /tmp/gbt-mvcc.XXXXXX)
chmod 755 "$WORK"

cluster_throwaway "bench-mvcc" "${PORT:-54423}"
if [ "${SERVICE_LOG:-}" = 1 ]; then
	$PSQL -c "ALTER SYSTEM SET log_min_messages = debug1" -c "SELECT pg_reload_conf()" >/dev/null
fi
echo "## MVCC: 2^$LOG2 rows"
echo
$PSQL -c "SELECT version()"
t0=$SECONDS
load_tables $ROWS || exit 1
$PSQL -c "CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v)" -c "CREATE INDEX b_k ON b (k) INCLUDE (v)" \
	-c "VACUUM ANALYZE g" -c "VACUUM ANALYZE b" || exit 1
$PSQL -c "SELECT gpubtree_count('g_k', 0, 0)" >/dev/null
echo "loaded, indexed and vacuumed in $((SECONDS - t0)) s; mirror current after $(wait_mirror) s more"
$PSQL -c "SELECT coalesce(device_name || ' (' || round(device_memory / 2^30) || ' GiB)', status) FROM gpubtree_device_info()"
lo=$((ROWS / 3))
hi=$((lo + ROWS / 10 - 1))
R10="WHERE k BETWEEN $lo AND $hi"

has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
updated() { $PSQL -c "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = '$1'"; }
# pgbench_script TABLE FILE SET-LINE WHERE: an UPDATE of v, keys chosen by SET-LINE
pgbench_script() {
	echo "$3" >"$2"
	echo "UPDATE $1 SET v = v + 1 WHERE $4;" >>"$2"
}

if has update; then
	echo
	echo "### An UPDATE of 1 % of the rows, no VACUUM"
	echo
	echo "| query | btree ms | gpubtree ms | same | gpubtree: what answered |"
	echo "|---|---|---|---|---|"
	row "sum(v) 10 % before the update" "SELECT sum(v) FROM %s $R10" median
	inv0=$($PSQL -c "SELECT invalidations FROM gpubtree_status()")
	for t in b g; do
		echo "| UPDATE of 1 % of the rows (v = v + 1), $t (ms) | $(timed "UPDATE $t SET v = v + 1 WHERE k % 100 = 7") | | | |"
	done
	echo "| (mirror after the update: invalidations, current) | | $(($($PSQL -c "SELECT invalidations FROM gpubtree_status()") - inv0)), $($PSQL -c "SELECT string_agg(current::text, ',') FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass") | | |"
	row "first sum(v) 10 % after the update" "SELECT sum(v) FROM %s $R10" timed
	for what in "count(*)" "sum(v)"; do
		row "$what 10 % after the update" "SELECT $what FROM %s $R10" median
		row "$what 100 % after the update" "SELECT $what FROM %s" median
	done
	for t in b g; do
		echo "| DELETE of 1 % of the rows, $t (ms) | $(timed "DELETE FROM $t WHERE k % 100 = 9") | | | |"
	done
	for what in "count(*)" "sum(v)"; do
		row "$what 10 % after the delete" "SELECT $what FROM %s $R10" median
	done
fi

# reader TABLE: READS REPEATABLE READ transactions, each the node's sum
# (timed; on b the btree plan's) and on g the ordinary plan's under the
# same snapshot.  Prints "ms_list equal_count".
reader() {
	local t=$1 i
	{
		echo '\timing on'
		for i in $(seq 1 "$READS"); do
			echo "BEGIN ISOLATION LEVEL REPEATABLE READ;"
			echo "SELECT 'A', sum(v) FROM $t $R10;"
			if [ "$t" = g ]; then
				echo "SET LOCAL gpubtree.device = off;"
				echo "SELECT 'B', sum(v) FROM $t $R10;"
			fi
			echo "COMMIT;"
		done
	} | $PSQL >"$WORK/reader-$t.out" 2>&1
	awk '/^A\|/ {a = $0; getline; if ($1 == "Time:") print $2}' "$WORK/reader-$t.out" >"$WORK/ms-$t"
	paste -d' ' <(grep '^A|' "$WORK/reader-$t.out" | cut -d'|' -f2) \
		<(grep '^B|' "$WORK/reader-$t.out" | cut -d'|' -f2) | awk '$1 == $2' | wc -l >"$WORK/eq-$t"
}

stats() {	# stats FILE: mean / median / max of one number a line
	sort -n "$1" | awk '{v[NR] = $1; s += $1} END {if (NR) printf "%.1f / %.1f / %.1f", s / NR, v[int((NR + 1) / 2)], v[NR]}'
}

if has writers; then
	echo
	echo "### 8 writers updating random rows, one reader (REPEATABLE READ)"
	echo
	echo "| table | writers' tps | reader's sum(v) 10 %: mean / median / max ms | answers equal to the ordinary plan's under the same snapshot | node answered by |"
	echo "|---|---|---|---|---|"
	for t in g b; do
		pgbench_script $t "$WORK/upd-$t.sql" "\\set id random(0, $((ROWS - 1)))" "k = :id"
		upd0=$(updated $t)
		t0=$(date +%s.%N)
		$PGBENCH -n -M prepared -c 8 -j 8 -T 3600 -f "$WORK/upd-$t.sql" >"$WORK/writers-$t.out" 2>&1 &
		wpid=$!
		sleep 2
		reader $t
		how=$(answered "SELECT sum(v) FROM $t $R10")
		kill -TERM $wpid 2>/dev/null
		wait $wpid
		sleep 1.5	# the writers' counts reach the statistics
		upd1=$(updated $t)
		tps=$(echo "$t0 $(date +%s.%N) $upd0 $upd1" | awk '{printf "%d", ($4 - $3) / ($2 - $1 - 1.5)}')
		if [ $t = g ]; then
			echo "| gpubtree | $tps | $(stats "$WORK/ms-$t") | $(cat "$WORK/eq-$t") of $(wc -l <"$WORK/ms-$t") | $how |"
		else
			echo "| btree | $tps | $(stats "$WORK/ms-$t") | | |"
		fi
	done
	echo
	echo "Each read, ms: gpubtree $(tr '\n' ' ' <"$WORK/ms-g"); btree $(tr '\n' ' ' <"$WORK/ms-b")"
	if [ "${SERVICE_LOG:-}" = 1 ]; then
		echo
		echo "The service's steps of 20 ms or more (aggregates: 5 ms):"
		echo
		grep -h "gpubtree service: aggregate" "$DIR/server.log" | sed 's/^.*gpubtree service: /    /' | tail -30
		grep -h "gpubtree service: " "$DIR/server.log" | grep -v "service: aggregate" |
			sed 's/^.*gpubtree service: /    /' | tail -30
	fi
fi

if has bulk; then
	echo
	echo "### Bulk changes: 8 clients, each transaction an UPDATE of 10000 consecutive keys, for ${BULK_S}s"
	echo
	echo "An updated row logs two entries: its old entry's delete and its new entry (v is an INCLUDE column: no HOT)."
	echo
	echo "| table | rows updated / s | change-log entries / s | mirror invalidations | first sum(v) 10 % after, ms | equal to the ordinary plan's |"
	echo "|---|---|---|---|---|---|"
	for t in g b; do
		# each client its own eighth of the keys: no lock waits
		pgbench_script $t "$WORK/bulk-$t.sql" \
			"\\set a :client_id * $((ROWS / 8)) + random(0, $((ROWS / 8 - 10000)))" \
			"k BETWEEN :a AND :a + 9999"
		inv0=$($PSQL -c "SELECT invalidations FROM gpubtree_status()")
		upd0=$(updated $t)
		t0=$(date +%s.%N)
		$PGBENCH -n -M prepared -c 8 -j 8 -T "$BULK_S" -f "$WORK/bulk-$t.sql" >"$WORK/bulk-$t.out" 2>&1
		t1=$(date +%s.%N)
		first=$(timed "SELECT sum(v) FROM $t $R10")
		# the node's answer against the ordinary plan's on the same table
		same=$([ "$(answer "SELECT sum(v) FROM $t $R10")" = \
			"$($PSQL -c "SET gpubtree.device = off" -c "SELECT sum(v) FROM $t $R10")" ] && echo yes || echo NO)
		sleep 1.5	# the counts reach the statistics
		upd1=$(updated $t)
		inv1=$($PSQL -c "SELECT invalidations FROM gpubtree_status()")
		rate=$(echo "$t0 $t1 $upd0 $upd1" | awk '{printf "%d", ($4 - $3) / ($2 - $1)}')
		if [ $t = g ]; then
			echo "| gpubtree | $rate | $((2 * rate)) | $((inv1 - inv0)) | $first | $same |"
		else
			echo "| btree | $rate | | | $first | |"
		fi
	done
fi

if has commit; then
	echo
	echo "### Commit latency of 1-row UPDATE transactions"
	echo
	echo "| clients | btree tps | gpubtree tps | btree mean ms | gpubtree mean ms | gpubtree / btree latency |"
	echo "|---|---|---|---|---|---|"
	for c in 1 8; do
		for t in b g g b; do
			pgbench_script $t "$WORK/upd-$t.sql" "\\set id random(0, $((ROWS - 1)))" "k = :id"
			$PGBENCH -n -M prepared -c $c -j $c -T "$COMMIT_S" -f "$WORK/upd-$t.sql" >>"$WORK/commit-$c-$t.out" 2>&1
		done
		tb=$(awk '/^tps/ {s += $3; n++} END {printf "%d", s / n}' "$WORK/commit-$c-b.out")
		tg=$(awk '/^tps/ {s += $3; n++} END {printf "%d", s / n}' "$WORK/commit-$c-g.out")
		lb=$(awk '/^latency average/ {s += $4; n++} END {printf "%.3f", s / n}' "$WORK/commit-$c-b.out")
		lg=$(awk '/^latency average/ {s += $4; n++} END {printf "%.3f", s / n}' "$WORK/commit-$c-g.out")
		echo "| $c | $tb | $tg | $lb | $lg | $(awk -v g="$lg" -v b="$lb" 'BEGIN {printf "%.2f", g / b}') |"
	done
fi
if has rebuild; then
	echo
	echo "### 15 % of the rows updated in 16 transactions: the delta passes an eighth of the tree, a new tree is made while a reader sums"
	echo
	echo "| table | updates, s | new tree in place after the updates, s | reads | reader's sum(v) 10 %: mean / median / max ms | final answer equal to btree's table's |"
	echo "|---|---|---|---|---|---|"
	for t in b g; do
		rb0=$($PSQL -c "SELECT coalesce(max(rebuilds), 0) FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass")
		rm -f "$WORK/stop"
		(
			while [ ! -e "$WORK/stop" ]; do
				timed "SELECT sum(v) FROM $t $R10"
			done
		) >"$WORK/rb-ms-$t" &
		rpid=$!
		t0=$SECONDS
		for i in $(seq 0 15); do
			$PSQL -c "UPDATE $t SET v = v + 1 WHERE k % 100 < 15 AND k BETWEEN $((i * ROWS / 16)) AND $(((i + 1) * ROWS / 16 - 1))" >/dev/null
		done
		upd_s=$((SECONDS - t0))
		t0=$SECONDS
		waited=""
		if [ $t = g ]; then
			waited="did not happen in 300 s"
			for _ in $(seq 1 600); do
				if [ "$($PSQL -c "SELECT coalesce(max(rebuilds), 0) FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass")" -gt "$rb0" ]; then
					waited=$((SECONDS - t0))
					break
				fi
				sleep 0.5
			done
		else
			sleep 5
		fi
		touch "$WORK/stop"
		wait $rpid
		same=""
		[ $t = g ] && same=$([ "$(answer "SELECT sum(v) FROM g $R10")" = "$(answer "SELECT sum(v) FROM b $R10")" ] && echo yes || echo NO)
		echo "| $([ $t = g ] && echo gpubtree || echo btree) | $upd_s | $waited | $(wc -l <"$WORK/rb-ms-$t") | $(stats "$WORK/rb-ms-$t") | $same |"
	done
	echo
	echo "gpubtree's reads, ms: $(tr '\n' ' ' <"$WORK/rb-ms-g")"
	if [ "${SERVICE_LOG:-}" = 1 ]; then
		echo
		echo "The service's steps of 20 ms or more while it made the new tree:"
		echo
		grep -h -E "gpubtree service: (copying|building a new tree)" "$DIR/server.log" | sed 's/^.*gpubtree service: /    /' | tail -40
	fi
fi
echo
$PSQL -c "SELECT index::regclass, engine, entries, pg_size_pretty(bytes) AS bytes, delta, state FROM gpubtree_mirrors()" | sed 's/^/    /'
echo "service: $($PSQL -c "SELECT 'requests ' || requests || ', fallbacks ' || fallbacks || ', invalidations ' || invalidations FROM gpubtree_status()")"
rm -rf "$WORK"
