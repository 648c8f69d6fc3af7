# Helpers of the benchmarks that compare gpubtree (table g, index g_k) with
# btree (table b) in one run; sourced after test/lib.sh, with $PSQL set.

# timed QUERY: one run's milliseconds (psql \timing).
timed() { $PSQL -c '\timing on' -c "$1" | awk '/^Time:/ {print $2}'; }
# median QUERY: median of RUNS (default 5) timed runs after one warm-up.
median() {
	local n=${RUNS:-5} args=(-c '\timing on') i
	for i in $(seq 0 "$n"); do args+=(-c "$1"); done
	$PSQL "${args[@]}" | awk '/^Time:/ {print $2}' | tail -"$n" | sort -n | sed -n "$(((n + 1) / 2))p"
}
# executed QUERY: median of RUNS (default 5) executor times (EXPLAIN
# ANALYZE's Execution Time, TIMING OFF: no rows to the client) after one
# warm-up.
executed() {
	local n=${RUNS:-5} args=() i
	for i in $(seq 0 "$n"); do args+=(-c "EXPLAIN (ANALYZE, TIMING OFF) $1"); done
	$PSQL "${args[@]}" | awk '/Execution Time:/ {print $3}' | tail -"$n" | sort -n |
		sed -n "$(((n + 1) / 2))p"
}
answer() { $PSQL -c "$1"; }	# rows in any order: compare them sorted
# answered QUERY: what answered the query on gpubtree.
answered() {
	local q=${1#COPY (}
	q=${q%) TO STDOUT}
	$PSQL -c "EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF) $q" |
		grep -E 'Answered by|Service:|Mirror:|Checked in Heap|Device Time' | sed 's/^ *//' |
		head -4 | paste -sd ';' -
}
# wait_mirror: seconds until g_k's mirror is current (at most 10 min).  A
# table small enough that the planner keeps btree's plans never asks for a
# mirror; gpubtree_count() always does (and never waits for it).
wait_mirror() {
	local t0=$SECONDS
	for _ in $(seq 1 1200); do
		[ "$($PSQL -c "SELECT count(*) FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass AND current")" = 1 ] && break
		$PSQL -c "SELECT gpubtree_count('g_k', 0, 0)" >/dev/null
		sleep 0.5
	done
	echo $((SECONDS - t0))
}
# ready_after QUERY: seconds since the call until QUERY takes < 20 ms (asked
# again and again, at most 10 min), and what answered it then.
ready_after() {
	local t0 ms
	t0=$(date +%s.%N)
	for _ in $(seq 1 6000); do
		ms=$(timed "$1")
		awk -v m="${ms:-1e9}" 'BEGIN { exit !(m < 20) }' && break
		sleep 0.05
	done
	echo "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'); $(answered "$1")"
}
row() {		# row WHAT QUERY-TEMPLATE TIMING-FUNCTION
	local q g b gt bt same
	q=$2
	gt=$($3 "$(printf "$q" g)")
	bt=$($3 "$(printf "$q" b)")
	same=$([ "$(answer "$(printf "$q" g)" | sort | md5sum)" = "$(answer "$(printf "$q" b)" | sort | md5sum)" ] &&
		echo yes || echo NO)
	printf '| %s | %s | %s | %s | %s |\n' "$1" "$bt" "$gt" "$same" "$(answered "$(printf "$q" g)")"
}

# load_tables ROWS: the extension, and tables g and b with the same ROWS
# rows (k int8, v int8): keys a permutation of 0 .. ROWS-1.
load_tables() {
	$PSQL <<SQL
CREATE EXTENSION gpubtree;
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT (i * 2654435761) % $1, i FROM generate_series(0::int8, $1 - 1) i;
CREATE TABLE b AS SELECT * FROM g;
SQL
}

# bench_identity: DEVNAME (the GPU's name, else the CPU's), COMMIT (the
# tree, "+ uncommitted changes" where src, sql, cuda or Makefile differ;
# GBT_COMMIT overrides), STAMP (UTC now) and PGVER (the server's version),
# for a benchmark's report.
bench_identity() {
	local gpu
	if command -v nvidia-smi >/dev/null 2>&1 && gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) && [ -n "$gpu" ]; then
		DEVNAME=$gpu
	else
		DEVNAME="cpu: $(awk -F': *' '/model name/ {print $2; exit}' /proc/cpuinfo)"
	fi
	COMMIT=${GBT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$([ -n "$(git status --porcelain -- src sql cuda Makefile 2>/dev/null)" ] && echo ' + uncommitted changes')}
	STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	PGVER=$($PSQL -c "SHOW server_version")
}
