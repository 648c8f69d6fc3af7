#!/usr/bin/env bash
# gpubtree against btree as a new user runs it: shipped defaults (only
# shared_preload_libraries = 'gpubtree', on test/lib.sh's cluster), no
# setting raised.  One table per index, the same rows: (k int8, v int8),
# 2^N rows, index on (k) INCLUDE (v), all-visible after VACUUM ANALYZE.
#
# Measured, each against btree in the same run:
#   - the first query after CREATE INDEX (count(*) over 10 % of the keys),
#     and the seconds from the end of CREATE INDEX until it takes < 20 ms
#     (asked again and again, as a dashboard would);
#   - count(*) / sum(v) over 0.01 %, 10 % and 100 % of the keys once the
#     mirror is built (median of 5 runs after one warm-up);
#   - SELECT k, v of 1 % and 0.1 % of the keys: to psql, and the executor
#     time alone (EXPLAIN ANALYZE, TIMING OFF), also with ORDER BY k DESC;
#   - the first query after a bulk INSERT of 10 % more rows, and the same
#     queries once the mirror is current again;
#   - an UPDATE of 1 % of the rows (what it does to the mirror), a range
#     sum right after it and after VACUUM (each VACUUM after a CHECKPOINT;
#     the mirror's part of VACUUM g as it says at DEBUG1), and once more
#     after a second UPDATE of 1 %, gpubtree's VACUUM first this time.
# Every gpubtree answer is compared with btree's; EXPLAIN says what answered
# (and the service's time in its engine, Device Time).  The mirror's entries,
# delta, new trees and bytes per entry (against the index's size) after the
# build, after the bulk INSERT and 5 s later, after the update and after
# VACUUM.
# Prints a Markdown table per size.
#
#   test/bench/defaults.sh [LOG2_ROWS ...]      (default: 24)
set -uo pipefail
cd "$(dirname "$0")/../.."
GBT_BUILD_WAIT=   # the shipped default
. test/lib.sh
export LC_ALL=C

. test/bench/compare_lib.sh

# mirror_bytes MOMENT: a row of g_k's mirror at that moment: its entries,
# delta, new trees made, bytes an entry (host and GPU) and on the GPU.
mirror_bytes() {
	echo "| (mirror $1: $($PSQL -c "SELECT entries || ' entries, delta ' || delta || ', ' || rebuilds || ' new trees, ' || round(bytes_per_entry::numeric, 1) || ' bytes an entry, ' || round(device_bytes::numeric / entries, 1) || ' of them on the GPU; scratch ' || pg_size_pretty(scratch_bytes) FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass AND current"); index: $($PSQL -c "SELECT round(pg_relation_size('g_k')::numeric / entries, 1) FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass AND current") bytes an entry) | | | | |"
}

for LOG2 in ${@:-24}; do
	ROWS=$((1 << LOG2))
	cluster_throwaway "bench-defaults" "${PORT:-54421}"
	echo "## 2^$LOG2 rows"
	echo
	$PSQL -c "SELECT version()"
	t0=$SECONDS
	load_tables $ROWS || exit 1
	$PSQL <<SQL || exit 1
VACUUM ANALYZE g;
VACUUM ANALYZE b;
SQL
	$PSQL -c "SELECT coalesce(device_name || ' (' || round(device_memory / 2^30) || ' GiB)', status) FROM gpubtree_device_info()"
	echo "loaded in $((SECONDS - t0)) s; settings: $($PSQL -c "SELECT string_agg(name || '=' || setting, ', ') FROM pg_settings WHERE name LIKE 'gpubtree.%' OR name IN ('shared_buffers', 'max_parallel_workers_per_gather')")"
	echo "service: $($PSQL -c "SELECT status || '; memory_limit ' || pg_size_pretty(memory_limit) || ' (' || memory_limit_source || ')' FROM gpubtree_status()")"
	lo=$((ROWS / 3))
	R10="SELECT count(*) FROM %s WHERE k BETWEEN $lo AND $((lo + ROWS / 10 - 1))"
	echo
	echo "| query | btree ms | gpubtree ms | same | gpubtree: what answered |"
	echo "|---|---|---|---|---|"
	t0=$SECONDS
	$PSQL -c "CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v)"
	tg=$((SECONDS - t0))
	first_g=$(timed "$(printf "$R10" g)")
	ready=$(ready_after "$(printf "$R10" g)")
	t0=$SECONDS
	$PSQL -c "CREATE INDEX b_k ON b (k) INCLUDE (v)"
	echo "| CREATE INDEX (s) | $((SECONDS - t0)) | $tg | | |"
	echo "| first count(*) 10 % after CREATE INDEX | $(timed "$(printf "$R10" b)") | $first_g | | |"
	echo "| (s from the end of CREATE INDEX until that count takes < 20 ms; its plan then) | | $ready | | |"
	echo "| (mirror built in the background, s after the first query) | | $(wait_mirror) | | |"
	echo "| (where the build's time went: $($PSQL -c "SELECT note FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass")) | | | | |"
	mirror_bytes "after the build"
	for what in "count(*)" "sum(v)"; do
		row "$what 0.01 %" "SELECT $what FROM %s WHERE k BETWEEN $lo AND $((lo + ROWS / 10000 - 1))" median
		row "$what 10 %" "SELECT $what FROM %s WHERE k BETWEEN $lo AND $((lo + ROWS / 10 - 1))" median
		row "$what 100 %" "SELECT $what FROM %s" median
	done
	# Rows of a key range, to the client and in the executor alone.
	for share in "100 1 %" "1000 0.1 %"; do
		set -- $share
		q="SELECT k, v FROM %s WHERE k BETWEEN $lo AND $((lo + ROWS / $1 - 1))"
		row "SELECT k, v of $2 $3 of the keys, to psql" "$q" median
		row "(the same, executor time: EXPLAIN ANALYZE)" "$q" executed
		row "(the same, ORDER BY k DESC, executor time)" "$q ORDER BY k DESC" executed
	done
	t0=$SECONDS
	for t in g b; do
		$PSQL -c "INSERT INTO $t SELECT $ROWS + i, i FROM generate_series(0::int8, $ROWS / 10 - 1) i"
	done
	echo "| (bulk INSERT of 10 % more rows into each, s) | | $((SECONDS - t0)) | | |"
	row "first count(*) 10 % after the bulk INSERT" "$R10" timed
	echo "| (mirror current again, s after the first query) | | $(wait_mirror) | | |"
	row "count(*) 10 % once the mirror is current" "$R10" median
	row "sum(v) 100 % then (heap not vacuumed)" "SELECT sum(v) FROM %s" median
	mirror_bytes "after the bulk INSERT and its queries"
	sleep 5
	mirror_bytes "5 s later (a quiet mirror folds a large delta into a new tree)"
	inv0=$($PSQL -c "SELECT invalidations FROM gpubtree_status()")
	for t in b g; do
		echo "| UPDATE of 1 % of the rows (v = v + 1), $t (ms) | $(timed "UPDATE $t SET v = v + 1 WHERE k % 100 = 7") | | | |"
	done
	echo "| (mirror after the update: invalidations, current) | | $(($($PSQL -c "SELECT invalidations FROM gpubtree_status()") - inv0)), $($PSQL -c "SELECT string_agg(current::text, ',') FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass") | | |"
	row "sum(v) 10 % after the update (no VACUUM)" "SELECT sum(v) FROM %s WHERE k BETWEEN $lo AND $((lo + ROWS / 10 - 1))" median
	mirror_bytes "after the update"
	# (each after a CHECKPOINT: neither VACUUM pays for the other's writes)
	# (the mirror's part said at DEBUG1: its sweep, and the visibility told)
	declare -A vacuum_ms
	for t in b g; do
		$PSQL -c "CHECKPOINT"
		vacuum_ms[$t]=$(PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=debug1" timed "VACUUM $t" 2>"$DIR/vacuum_$t.log")
		echo "| VACUUM $t (ms) | ${vacuum_ms[$t]} | | | |"
	done
	grep -o 'gpubtree: index "g_k": .*' "$DIR/vacuum_g.log" | sed 's/^/| (VACUUM g: /; s/$/) | | | | |/'
	row "sum(v) 10 % after VACUUM" "SELECT sum(v) FROM %s WHERE k BETWEEN $lo AND $((lo + ROWS / 10 - 1))" median
	row "count(*) 100 % after VACUUM" "SELECT count(*) FROM %s" median
	mirror_bytes "after VACUUM"
	# Once more, other rows, gpubtree's VACUUM first: one run in each order,
	# so that the ratio is not the order's.
	for t in b g; do
		$PSQL -c "UPDATE $t SET v = v + 1 WHERE k % 100 = 13" >/dev/null
	done
	for t in g b; do
		$PSQL -c "CHECKPOINT"
		vacuum_ms[${t}2]=$(timed "VACUUM $t")
		echo "| VACUUM $t after a second UPDATE of 1 %, gpubtree's first (ms) | ${vacuum_ms[${t}2]} | | | |"
	done
	echo "| (VACUUM, gpubtree's against btree's: $(awk -v g1="${vacuum_ms[g]}" -v b1="${vacuum_ms[b]}" -v g2="${vacuum_ms[g2]}" -v b2="${vacuum_ms[b2]}" \
		'BEGIN { if (b1 > 0 && b2 > 0) printf "%.3fx with btree first, %.3fx with gpubtree first", g1 / b1, g2 / b2 }')) | | | | |"
	echo
	$PSQL -c "SELECT index::regclass, engine, entries, pg_size_pretty(bytes) AS bytes, round(bytes_per_entry::numeric, 1) AS bytes_per_entry, pg_size_pretty(device_bytes) AS device_bytes, pg_size_pretty(scratch_bytes) AS scratch_bytes, round(build_ms) AS build_ms, delta, rebuilds, state FROM gpubtree_mirrors()" | sed 's/^/    /'
	for i in g_k b_k; do
		echo "    index size, $i: $($PSQL -c "SELECT pg_size_pretty(pg_relation_size('$i')) || ' (' || round(pg_relation_size('$i')::numeric / $ROWS, 1) || ' bytes a row)'")"
	done
	cluster_stop "$DIR" immediate
	rm -rf "$DIR"
	trap - EXIT
done
