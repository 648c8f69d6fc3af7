#!/usr/bin/env bash
# test/bench/analytic.sh: the analytic queries of issue 36 (GROUP BY
# buckets and INCLUDE columns, filters, FILTER clauses, composite keys),
# gpubtree against btree in one run on one cluster with shipped defaults
# (test/lib.sh's throwaway cluster, shared_preload_libraries and nothing
# raised).  Three tables, each twice (gpubtree / btree), 2^N rows each:
#
#   ta / tb     (k int8, v int8, c int4, g int4), index (k) INCLUDE (v, c, g):
#               keys spread over [0, 2^32), c 10 values, g 100,000 values
#   tt / tt_b   (ts timestamptz, amount int8), index (ts) INCLUDE (amount):
#               a year of timestamps (2025), in time order
#   tn / tn_b   (tenant int4, ts timestamptz, amount int8), index (tenant,
#               ts) INCLUDE (amount): 1000 tenants over the same year
#
# loaded in parallel (INSERT ... SELECT in slices, NCPU at a time), VACUUM
# (ANALYZE), then the indexes; the gpubtree mirrors are asked for and the
# script waits until they are current.  Every query of QUERIES below runs on
# both tables as users write it, the range sums also with bound parameters
# (ID-param: PREPARE/EXECUTE, a generic plan by PLAN_CACHE_MODE, what
# PostgreSQL settles on after five runs when the generic estimate is the
# cheaper): the first run, then RUNS runs timed by psql's \timing (wall:
# what users see) and RUNS of EXPLAIN (ANALYZE, TIMING OFF)'s Execution
# Time, median and max of each (fewer where they would take over QUERY_S
# seconds together; a query whose first run took over QUERY_S / 2 has one
# EXPLAIN run and its first run as its wall time), and what answered (the
# GpubtreeAggregate node's "Answered by", else the plan's nodes).  Each
# gpubtree answer is compared with btree's (md5 of the sorted rows; MISMATCH
# otherwise: the script then exits 1, as after a query that failed).  Then
# an UPDATE of 1 % of every table's rows, no VACUUM, and every query again.
#
# Writes to RESULTS (default test/bench/out/<UTC time>-analytic/):
# analytic-report.md (rewritten after every query, so that a run stopped by
# a time limit keeps what it measured), analytic.csv, analytic-plans.txt,
# analytic.log, psql-errors.log, server.log; prints the report at the end.  Uses the
# installed extension; on the GPU machine: test/gpu/run.sh analytic 26.
#
#   test/bench/analytic.sh [LOG2_ROWS=26]
#   RUNS [5]  QUERY_S [6]  PLAN_CACHE_MODE [force_generic_plan]  PORT [54424]
#   ONLY: query ids to run (and only the tables they read), e.g.
#         ONLY="histogram group_10 days"
#   BUDGET_S: seconds the whole may take: the first phase has 45 % of what
#         is left when it starts, the update and the second phase the rest;
#         past half of its share, a phase runs each query once of each kind
#   RESULTS  GBT_COMMIT
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GBT_BUILD_WAIT=   # the shipped default
. test/lib.sh
export LC_ALL=C
. test/bench/compare_lib.sh	# bench_identity

LOG2=${1:-26}
ROWS=$((1 << LOG2))
RUNS=${RUNS:-5}
QUERY_S=${QUERY_S:-6}
PCM=${PLAN_CACHE_MODE:-force_generic_plan}
BUDGET_S=${BUDGET_S:-0}
RESULTS=${RESULTS:-test/bench/out/$(date -u +%Y%m%dT%H%M%SZ)-analytic}
mkdir -p "$RESULTS" && RESULTS=$(cd "$RESULTS" && pwd) || exit 1
REPORT=$RESULTS/analytic-report.md
CSV=$RESULTS/analytic.csv
PLANS=$RESULTS/analytic-plans.txt
LOG=$RESULTS/analytic.log
: >"$PLANS"
: >"$LOG"
NCPU=$(nproc)

cluster_throwaway "bench-analytic" "${PORT:-54424}"
W=$(mktemp -d /tmp/gbt-analytic.XXXXXX)
trap 'sess_close; cluster_stop "$DIR" immediate; cp "$DIR/server.log" "$RESULTS/" 2>/dev/null; rm -rf "$DIR" "$W"' EXIT
trap 'echo "analytic.sh: stopped (signal)" | tee -a "$LOG"; exit 124' TERM INT

say() { echo "$*" | tee -a "$LOG"; }
# since T0: seconds since T0 (an $EPOCHREALTIME)
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", b - a }'; }

# ---- machine, tree -----------------------------------------------------------
bench_identity

# ---- persistent sessions -----------------------------------------------------
# One psql session (one backend) per access method for all of its queries,
# as in test/bench/run.sh: what a backend sets up once is not charged to
# every query.
SESS_FDS=""
sess_open() {
	local name=$1 fin fout
	mkfifo "$W/in_$name" "$W/out_$name"
	PGOPTIONS="-c client_min_messages=warning" $PGBIN/psql -X -q -At -v ON_ERROR_STOP=0 \
		<"$W/in_$name" >"$W/out_$name" 2>>"$RESULTS/psql-errors.log" &
	exec {fin}>"$W/in_$name"
	exec {fout}<"$W/out_$name"
	SESS_FDS="$SESS_FDS $fin $fout"
	eval "SESS_IN_$name=$fin SESS_OUT_$name=$fout"
}
sess_close() {
	local fd
	for fd in $SESS_FDS; do eval "exec $fd>&-"; done
	SESS_FDS=""
}
# sq NAME SQL: run SQL (statements and meta-commands) in NAME's session;
# its output on stdout.
sq() {
	local in out line
	eval "in=\$SESS_IN_$1 out=\$SESS_OUT_$1"
	printf '%s\n\\echo __GBT_END__\n' "$2" >&"$in"
	while :; do
		IFS= read -r line <&"$out" || { say "the psql session of $1 ended (server crash?)"; exit 1; }
		[ "$line" = __GBT_END__ ] && break
		printf '%s\n' "$line"
	done
}

# parallel JOBS SQL...: each SQL in its own psql, JOBS at a time; fails if
# one fails.
parallel() {
	local jobs=$1 sql rc=0 running=0
	shift
	for sql in "$@"; do
		if [ $running -ge "$jobs" ]; then
			wait -n || rc=1
			running=$((running - 1))
		fi
		$PSQL -c "$sql" >>"$LOG" 2>&1 &
		running=$((running + 1))
	done
	while [ $running -gt 0 ]; do
		wait -n || rc=1
		running=$((running - 1))
	done
	return $rc
}

# ---- data --------------------------------------------------------------------
# Tables per access method: gpubtree ta, tt, tn; btree tb, tt_b, tn_b.  SQL
# templates name them @A@, @T@, @N@.
tables_of() { [ "$1" = g ] && echo "ta tt tn" || echo "tb tt_b tn_b"; }
subst() {
	local a t n
	read -r a t n <<<"$(tables_of "$1")"
	sed -e "s/@A@/$a/g" -e "s/@T@/$t/g" -e "s/@N@/$n/g" <<<"$2"
}
# Timestamps: 2025 (UTC) in 2^N even steps of whole microseconds.
STEP_US=$((31536000000000 / ROWS))
TS="timestamptz '2025-01-01 00:00:00+00' + (i * $STEP_US) * interval '1 microsecond'"
declare -A GEN=(
	[A]="SELECT (i * 2654435761) % 4294967296, (i * 7919) % 1000003, (i % 10)::int4, (i % 100000)::int4"
	[T]="SELECT $TS, (i * 7919) % 1000003"
	[N]="SELECT (i % 1000)::int4, $TS, (i * 7919) % 1000003"
)
declare -A COLS=(
	[A]="k int8, v int8, c int4, g int4"
	[T]="ts timestamptz, amount int8"
	[N]="tenant int4, ts timestamptz, amount int8"
)
declare -A INDEX=([A]="(k) INCLUDE (v, c, g)" [T]="(ts) INCLUDE (amount)" [N]="(tenant, ts) INCLUDE (amount)")

load() {
	local ntab=$((2 * $(wc -w <<<"$NEED"))) s lo hi x am t inserts=() vac=() idx=() t0=$EPOCHREALTIME
	local a=$NCPU b=$ntab slices
	# slices a table: the INSERTs fill NCPU jobs in whole rounds
	while [ $b -gt 0 ]; do s=$((a % b)) a=$b b=$s; done
	slices=$((NCPU / a))
	$PSQL -c "CREATE EXTENSION gpubtree" || return 1
	for am in g b; do
		for x in $NEED; do
			t=$(subst $am "@$x@")
			$PSQL -c "CREATE TABLE $t (${COLS[$x]})" || return 1
			for ((s = 0; s < slices; s++)); do
				lo=$((ROWS * s / slices))
				hi=$((ROWS * (s + 1) / slices - 1))
				inserts+=("INSERT INTO $t ${GEN[$x]} FROM generate_series(${lo}::int8, $hi) i")
			done
			vac+=("VACUUM (ANALYZE) $t")
			[ $am = g ] && idx+=("CREATE INDEX ${t}_k ON $t USING gpubtree ${INDEX[$x]}") ||
				idx+=("CREATE INDEX ${t}_k ON $t ${INDEX[$x]}")
		done
	done
	parallel "$NCPU" "${inserts[@]}" || return 1
	LOAD_S=$(since "$t0")
	t0=$EPOCHREALTIME
	parallel "$NCPU" "${vac[@]}" || return 1
	VACUUM_S=$(since "$t0")
	t0=$EPOCHREALTIME
	parallel "$NCPU" "${idx[@]}" || return 1
	INDEX_S=$(since "$t0")
}

# wait_mirrors: ask for the gpubtree mirrors (gpubtree_count() asks and
# never waits) until each is current, or the service says it is not coming
# (failed, refused), or MIRROR_WAIT_S (600) pass.  Prints seconds.
wait_mirrors() {
	local t0=$SECONDS t1=$EPOCHREALTIME x t names="" ask=""
	declare -A LEAD=([A]="0::int8" [T]="now()" [N]="0")
	for x in $NEED; do
		t=$(subst g "@$x@")
		names="$names${names:+, }'${t}_k'::regclass"
		ask="$ask${ask:+, }gpubtree_count('${t}_k', ${LEAD[$x]}, ${LEAD[$x]})"
	done
	while [ $((SECONDS - t0)) -lt "${MIRROR_WAIT_S:-600}" ]; do
		[ "$($PSQL -c "SELECT count(*) FROM gpubtree_mirrors() WHERE index IN ($names) AND (current OR state ~ 'fail|refus')")" = "$(wc -w <<<"$NEED")" ] && break
		$PSQL -c "SELECT $ask" >/dev/null
		sleep 0.2
	done
	since "$t1"
}
mirrors() {
	$PSQL -F' | ' -c "SELECT index::regclass, engine, entries, pg_size_pretty(bytes), round(build_ms), current, delta, state, coalesce(note, '') FROM gpubtree_mirrors() ORDER BY index::regclass::text" |
		sed 's/^/| /; s/$/ |/'
}

# ---- queries -----------------------------------------------------------------
# query ID TARGET X10 LABEL SQL [TYPES ARGS]: one query of the benchmark, run
# as written; with TYPES also as ID-param, a prepared statement whose
# parameters ($1, ...) are ARGS, bound when it runs (a generic plan:
# PLAN_CACHE_MODE), and ARGS written in for $n in the first form.  TARGET:
# issue 36's bound in ms; X10: its speed-up over btree.  ONLY (ids) picks.
QUERIES=()
selected() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
query() {
	local id=$1 target=$2 x10=$3 label=$4 sql=$5 types=${6:-} args=${7:-} lit=$5 vals i v
	IFS=',' read -ra vals <<<"$args"
	for ((i = ${#vals[@]}; i > 0; i--)); do
		v=${vals[i - 1]}
		lit=${lit//\$$i/${v# }}
	done
	selected "$id" && QUERIES+=("$id|$label|$target|$x10|||$lit")
	[ -n "$types" ] && selected "$id-param" && QUERIES+=("$id-param|$label; parameters bound (PREPARE/EXECUTE)|$target|$x10|$types|$args|$sql")
}
# Keys: 10 % of [0, 2^32) from 30 %; times: 10 % of the year from 45 %
# (days 164.25 to 200.75), and 30 days in March in the session's TimeZone.
K10="1288490188, $((1288490188 + 429496729 - 1))"
W10="'2025-06-14 06:00:00+00', '2025-07-20 18:00:00+00'"
query range_sum "" "" "count(*), sum(v) over 10 % of the keys (answered before issue 36)" \
	'SELECT count(*), sum(v) FROM @A@ WHERE k BETWEEN $1 AND $2' "int8, int8" "$K10"
query histogram 10 "" "100-bucket histogram over the whole table: width_bucket(k, 0, 2^32, 100), count(*), sum(v), GROUP BY 1" \
	'SELECT width_bucket(k, 0, 4294967296, 100), count(*), sum(v) FROM @A@ GROUP BY 1'
query days 10 "" "date_trunc('day', ts), count(*), sum(amount) over 30 days, GROUP BY 1" \
	"SELECT date_trunc('day', ts), count(*), sum(amount) FROM @T@ WHERE ts >= '2025-03-01' AND ts < '2025-03-31' GROUP BY 1"
query group_10 10 "" "GROUP BY c (10 groups): c, count(*), sum(v) over 10 % of the keys" \
	"SELECT c, count(*), sum(v) FROM @A@ WHERE k BETWEEN ${K10/, / AND } GROUP BY c"
query group_100k "" 10 "GROUP BY g (100,000 groups): g, count(*), sum(v) over 10 % of the keys" \
	"SELECT g, count(*), sum(v) FROM @A@ WHERE k BETWEEN ${K10/, / AND } GROUP BY g"
query group_expr 10 "" "GROUP BY an expression of a column (c % 3, 3 groups): c % 3, count(*), sum(v) over 10 % of the keys" \
	"SELECT c % 3, count(*), sum(v) FROM @A@ WHERE k BETWEEN ${K10/, / AND } GROUP BY 1"
query group_expr_1k "" 10 "GROUP BY an expression of a column of 100,000 values (g / 100, 1000 groups) over 10 % of the keys" \
	"SELECT g / 100, count(*), sum(v) FROM @A@ WHERE k BETWEEN ${K10/, / AND } GROUP BY 1"
query filter_sum 10 "" "sum(v) over 10 % of the keys AND c = 3" \
	'SELECT sum(v) FROM @A@ WHERE k BETWEEN $1 AND $2 AND c = $3' "int8, int8, int4" "$K10, 3"
query count_filter "" "" "count(*) FILTER (WHERE c = 3) over 10 % of the keys" \
	"SELECT count(*) FILTER (WHERE c = 3) FROM @A@ WHERE k BETWEEN ${K10/, / AND }"
query tenant_sum 5 "" "one tenant's sum(amount) over 10 % of the year (tenant = 5, a ts range)" \
	'SELECT sum(amount) FROM @N@ WHERE tenant = $1 AND ts >= $2 AND ts < $3' "int4, timestamptz, timestamptz" "5, $W10"
query tenant_totals 20 "" "per-tenant totals over 10 % of the year: tenant, sum(amount), GROUP BY tenant" \
	"SELECT tenant, sum(amount) FROM @N@ WHERE ts >= ${W10/, / AND ts < } GROUP BY tenant"
[ ${#QUERIES[@]} -gt 0 ] || { echo "ONLY=\"$ONLY\" names no query" >&2; exit 2; }
# The tables the queries read (A, T, N).
NEED=$(printf '%s\n' "${QUERIES[@]}" | grep -o '@[ATN]@' | tr -d @ | sort -u | paste -sd' ' -)

# plan_summary: the plan's nodes, outer to inner, from EXPLAIN's text.
plan_summary() {
	awk 'NR == 1 || /^ *->/ {
			s = $0; sub(/^ *(-> *)?/, "", s); sub(/ *\((actual|never|cost).*/, "", s)
			sub(/ using [a-z_0-9]+/, "", s); sub(/ on [a-z_0-9]+( [a-z_0-9]+)?$/, "", s)
			n = n (n == "" ? "" : " > ") s }
		/Workers Launched:/ { n = n " [" $3 " workers]" }
		/Heap Fetches:/ { h += $3 }
		END { if (h) n = n " [heap fetches " h "]"; print n }'
}
# answered_by: the GpubtreeAggregate node's "Answered by" (and the entries
# it checked in the heap), else the plan's nodes.
answered_by() {
	local plan=$1 a
	a=$(sed -n 's/^ *Answered by: //p' <<<"$plan" | head -1)
	if [ -n "$a" ]; then
		local heap
		heap=$(sed -n 's/^ *Entries Checked in Heap: //p' <<<"$plan" | head -1)
		[ "${heap:-0}" = 0 ] && heap=""
		echo "GpubtreeAggregate: $a${heap:+ ($heap entries checked in the heap)}"
	else
		plan_summary <<<"$plan"
	fi
}
# med_max: median and max of the numbers on stdin ("- -" if none).
med_max() {
	sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) { print "- -"; exit }
		m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f %.3f\n", m, a[NR] }'
}
times_of() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'; }

echo "device,date,commit,pg_version,rows,phase,query,am,first_ms,wall_median_ms,wall_max_ms,exec_median_ms,exec_max_ms,wall_runs,exec_runs,answered_by,same_as_btree" >"$CSV"
: >"$W/rows.tsv"

# measure PHASE IDX AM: one query on one access method's tables; appends a
# row to rows.tsv and the CSV, the first plan to the plans file.
measure() {
	local phase=$1 am=$3 id label target x10 types args sql setup exec first n wall i out plan t exs=""
	IFS='|' read -r id label target x10 types args sql <<<"${QUERIES[$2]}"
	sql=$(subst "$am" "$sql")
	if [ -n "$types" ]; then
		setup="SET plan_cache_mode = $PCM;
PREPARE q_${id//-/_} ($types) AS $sql;"
		exec="EXECUTE q_${id//-/_} ($args);"
	else
		setup=""
		exec="$sql;"
	fi
	sq "$am" "$setup" >/dev/null
	# psql times a statement that failed too: its ERROR variable tells
	out=$(sq "$am" "\\o $W/$phase-$id-$am.out
\\timing on
$exec
\\timing off
\\o
\\echo __error :ERROR")
	first=$(times_of <<<"$out")
	grep -qx '__error false' <<<"$out" || { first=""; touch "$W/$phase-$id-$am.error"; }
	# RUNS runs of each kind, fewer where they would take over QUERY_S
	# together; a query whose first run took over QUERY_S / 2 gets one
	# EXPLAIN run and its first run is its wall time.
	n=0 wall=0
	if [ -n "$first" ]; then
		n=$(awk -v f="$first" -v b="$QUERY_S" -v r="$RUNS" 'BEGIN { n = int(b * 1000 / (2 * f)); print (n < 1 ? 1 : (n > r ? r : n)) }')
		wall=$n
		awk -v f="$first" -v b="$QUERY_S" 'BEGIN { exit !(2 * f > b * 1000) }' && wall=0
		if [ "$BUDGET_S" -gt 0 ] && [ $SECONDS -gt $(((PHASE_T0 + PHASE_END) / 2)) ]; then
			n=1
			wall=$((wall < 1 ? wall : 1))
		fi
	fi
	out=$(sq "$am" "\\o /dev/null
\\timing on
$(for ((i = 0; i < wall; i++)); do echo "$exec"; done)
\\timing off
\\o")
	[ $wall = 0 ] && out="Time: $first ms"
	read -r wmed wmax < <(times_of <<<"${first:+$out}" | med_max)
	for ((i = 0; i < n; i++)); do
		out=$(sq "$am" "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $exec")
		[ $i = 0 ] && plan=$out
		t=$(sed -n 's/^Execution Time: \([0-9.]*\) ms/\1/p' <<<"$out")
		exs="$exs $t"
	done
	[ $n = 0 ] && plan=$(sq "$am" "EXPLAIN (COSTS OFF) $exec")
	read -r emed emax < <(tr ' ' '\n' <<<"$exs" | grep . | med_max)
	[ -n "$types" ] && sq "$am" "DEALLOCATE q_${id//-/_}; RESET plan_cache_mode;" >/dev/null
	{
		echo "=== $phase $id $am: first ${first:-ERROR} ms, $wall + $n runs"
		[ -n "$types" ] && echo "PREPARE q_${id//-/_} ($types) AS $sql; (plan_cache_mode = $PCM)"
		echo "$exec"
		echo "$plan"
		echo
	} >>"$PLANS"
	M_ANSWER=$(answered_by "$plan" | tr '\t|' '  ')
	[ -n "$first" ] || M_ANSWER="ERROR (psql-errors.log); $M_ANSWER"
	M_TSV=$(printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' "$phase" "$id" "$am" "${first:-ERROR}" \
		"$wmed" "$wmax" "$emed" "$emax" "$wall + $n" "$M_ANSWER")
	M_CSV="\"$DEVNAME\",$STAMP,\"$COMMIT\",\"$PGVER\",$ROWS,$phase,$id,$am,${first:-ERROR},$wmed,$wmax,$emed,$emax,$wall,$n,\"${M_ANSWER//\"/\'}\""
}

# same PHASE ID: do gpubtree's rows equal btree's (sorted)?
same() {
	local g=$W/$1-$2-g.out b=$W/$1-$2-b.out
	if [ -f "$W/$1-$2-g.error" ] || [ -f "$W/$1-$2-b.error" ]; then
		echo ERROR
		echo "ERROR: $1 $2 failed (psql-errors.log)" | tee -a "$LOG" >&2
		return
	fi
	if [ "$(sort "$g" | md5sum)" = "$(sort "$b" | md5sum)" ]; then
		echo yes
	else
		echo MISMATCH
		{
			echo "MISMATCH: $1 $2: gpubtree's rows (<) differ from btree's (>)"
			diff <(sort "$g") <(sort "$b") | head -20
		} | tee -a "$LOG" >&2
	fi
}

# run_phase PHASE SHARE: every query on both tables.  With BUDGET_S, the
# phase has SHARE % of the time left; past half of it, one run of each kind
# a query.
run_phase() {
	local phase=$1 i i2 am id s tsv csv
	PHASE_T0=$SECONDS
	PHASE_END=$((SECONDS + (BUDGET_S - SECONDS) * $2 / 100))
	for i in "${!QUERIES[@]}"; do
		id=${QUERIES[$i]%%|*}
		tsv=()
		csv=()
		# the access method going first alternates
		for am in $([ $((i % 2)) = 0 ] && echo g b || echo b g); do
			measure "$phase" "$i" "$am"
			tsv+=("$M_TSV")
			csv+=("$M_CSV")
		done
		s=$(same "$phase" "$id")
		for i2 in 0 1; do
			printf '%s\t%s\n' "${tsv[$i2]}" "$s" >>"$W/rows.tsv"
			printf '%s,%s\n' "${csv[$i2]}" "$s" >>"$CSV"
		done
		say "$phase $id: $(awk -F'\t' -v p="$phase" -v q="$id" '$1 == p && $2 == q {
			printf "%s %s ms (%s); ", ($3 == "g" ? "gpubtree" : "btree"), $5, $10 }' "$W/rows.tsv")same: $s"
		report
	done
}

# report: analytic-report.md from what was measured so far.
report() {
	local q id label target x10 types args sql
	{
		echo "# Analytic queries (issue 36): gpubtree against btree, 2^$LOG2 rows"
		echo
		if [ -z "${DONE:-}" ]; then
			echo "**Partial: the run had not ended when this was written.**"
			echo
		fi
		echo "- device: $DEVNAME; gpubtree_device_info(): ${DEVINFO:-?}"
		echo "- date: $STAMP; tree: $COMMIT; PostgreSQL $PGVER; $NCPU cores${DONE:+; the whole run $SECONDS s}"
		echo "- service: ${SERVICE:-?}"
		echo "- cluster: test/lib.sh's, shipped defaults; settings not at their built-in defaults (the locale and time zone settings of initdb aside): $SETTINGS; TimeZone $TZ_SETTING"
		echo "- tables of 2^$LOG2 rows each, gpubtree / btree (loaded: $(for x in $NEED; do echo "$(subst g "@$x@") / $(subst b "@$x@")"; done | paste -sd, - | sed 's/,/, /g')):"
		echo "  ta / tb (k int8, v int8, c int4, g int4), index (k) INCLUDE (v, c, g), keys spread over [0, 2^32) in no order, c 10 values, g 100,000;"
		echo "  tt / tt_b (ts timestamptz, amount int8), index (ts) INCLUDE (amount), the year 2025, loaded in time order (slices side by side);"
		echo "  tn / tn_b (tenant int4, ts timestamptz, amount int8), index (tenant, ts) INCLUDE (amount), 1000 tenants over the same year"
		echo "- loading: INSERT ... SELECT $LOAD_S s, VACUUM (ANALYZE) $VACUUM_S s, CREATE INDEX $INDEX_S s (each step for every table at once, $NCPU jobs at a time); the mirrors current ${MIRROR_S} s after the indexes; $DISK"
		echo "- each query, on each table, in one session per access method: the first run, then RUNS=$RUNS runs timed by psql's \\timing (wall: what users see) and $RUNS of EXPLAIN (ANALYZE, TIMING OFF)'s Execution Time (exec), median and max of each; fewer runs where they would take over QUERY_S=$QUERY_S s together, and where the first took over QUERY_S / 2, one EXPLAIN run and the first run as the wall time (column runs: wall + EXPLAIN)"
		echo "- ID-param: the same query as a prepared statement, its values bound when it runs (PREPARE/EXECUTE, plan_cache_mode = $PCM)"
		[ -n "${UPDATE_S:-}" ] && echo "- UPDATE of 1 % of the rows of each table (v or amount + 1 where it is 7 mod 100), no VACUUM, all at once in $UPDATE_S s: $(paste -sd ',' <<<"$UPD_MS" | sed 's/,/ ms, /g') ms"
		echo
		echo "## Summary: wall ms (median), gpubtree against btree"
		echo
		echo "Targets of issue 36 (2^26 rows on the GPU machine); after the update, each at most 2x its time on the vacuumed table. same: every answer of gpubtree equals btree's (sorted rows)."
		echo
		echo "| query | btree ms | gpubtree ms | answered by (gpubtree) | after update: btree ms | after update: gpubtree ms | answered by after update | target | met (vacuumed / after update) | same |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		for q in "${QUERIES[@]}"; do
			IFS='|' read -r id label target x10 types args sql <<<"$q"
			awk -F'\t' -v id="$id" -v label="$label" -v target="$target" -v x10="$x10" '
				$2 == id { k = ($1 == "vacuumed" ? "v" : "u") $3; w[k] = $5; a[k] = $10
					if (!($11 in seen)) { seen[$11] = 1; same = same (same == "" ? "" : ", ") $11 } }
				END {
					t = target != "" ? "<= " target " ms" : (x10 != "" ? ">= " x10 "x btree" : "-")
					met = "-"; mu = "-"
					if (("vg" in w) && w["vg"] != "-") {
						if (target != "") met = (w["vg"] <= target ? "yes" : "no")
						else if (x10 != "" && w["vb"] != "-") met = (w["vb"] / w["vg"] >= x10 ? "yes" : "no")
						if (("ug" in w) && w["ug"] != "-") mu = (w["ug"] <= 2 * w["vg"] ? "yes" : "no")
					}
					printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |\n", label,
						w["vb"] == "" ? "" : w["vb"], w["vg"], a["vg"], w["ub"], w["ug"], a["ug"], t, met, mu, same
				}' "$W/rows.tsv"
		done
		echo
		echo "## Every number"
		echo
		echo "ms; wall: psql's \\timing; exec: EXPLAIN (ANALYZE, TIMING OFF)'s Execution Time; plan: what answered (gpubtree) or the plan's nodes."
		echo
		echo "| phase | query | table | first | wall median | wall max | exec median | exec max | runs | answered by / plan | same |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|"
		awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			($1 == "updated" ? "after 1 % update" : $1), $2, ($3 == "g" ? "gpubtree" : "btree"), $4, $5, $6, $7, $8, $9, $10, $11 }' "$W/rows.tsv"
		echo
		echo "## Mirrors"
		echo
		echo "| index | engine | entries | bytes | build ms | current | delta | state | note |"
		echo "|---|---|---|---|---|---|---|---|---|"
		echo "${MIRRORS_BEFORE:-}" | sed 's/^| /| (vacuumed) /'
		[ -n "${MIRRORS_UPDATED:-}" ] && echo "$MIRRORS_UPDATED" | sed 's/^| /| (right after the update) /'
		[ -n "${MIRRORS_AFTER:-}" ] && echo "$MIRRORS_AFTER" | sed 's/^| /| (at the end) /'
		[ -n "${STATUS_AFTER:-}" ] && echo && echo "Service at the end: $STATUS_AFTER"
		echo
		echo "## Queries (gpubtree's tables; btree's: tb, tt_b, tn_b)"
		echo
		for q in "${QUERIES[@]}"; do
			IFS='|' read -r id label target x10 types args sql <<<"$q"
			echo "- $id: \`$(subst g "$sql")\`${types:+ with (\$1, ...) = ($args)}"
		done
		echo
		echo "Plans: analytic-plans.txt; every row also in analytic.csv."
	} >"$REPORT.tmp" && mv "$REPORT.tmp" "$REPORT"
}

# ---- the run -----------------------------------------------------------------
say "analytic.sh: 2^$LOG2 rows a table, $DEVNAME, tree $COMMIT, results in $RESULTS"
free_gb() { df -P "$DIR" | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }'; }
FREE0=$(free_gb)
load || { say "loading failed (see $LOG)"; exit 1; }
DISK="database $($PSQL -c "SELECT pg_size_pretty(pg_database_size(current_database()))") after loading; $FREE0 GB free on its disk before, $(free_gb) GB after"
say "loaded in $LOAD_S s, VACUUM (ANALYZE) $VACUUM_S s, CREATE INDEX $INDEX_S s ($((2 * $(wc -w <<<"$NEED"))) tables of 2^$LOG2 rows, $NCPU jobs at a time)"
say "$DISK"
MIRROR_S=$(wait_mirrors)
say "mirrors asked for and current (or given up) after $MIRROR_S s more"
MIRRORS_BEFORE=$(mirrors)
SERVICE=$($PSQL -c "SELECT status || ', engine ' || engine || ', memory limit ' || pg_size_pretty(memory_limit) || ' (' || memory_limit_source || ')' FROM gpubtree_status()")
DEVINFO=$($PSQL -F' ' -c "SELECT * FROM gpubtree_device_info()" 2>&1 | tr '\n' ';')
TZ_SETTING=$($PSQL -c "SHOW TimeZone")
SETTINGS=$($PSQL -c "SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name) FROM pg_settings WHERE source = 'configuration file' AND setting IS DISTINCT FROM boot_val AND name !~* '^(lc_|log_timezone|timezone|datestyle|default_text_search_config|unix_socket_directories|listen_addresses|port$)'")
sess_open g
sess_open b
report
run_phase vacuumed 45

t0=$EPOCHREALTIME
UPD_MS=$(
	for x in $NEED; do
		for am in g b; do
			t=$(subst $am "@$x@")
			col=v; [ $x = A ] || col=amount
			( ms=$($PSQL -c '\timing on' -c "UPDATE $t SET $col = $col + 1 WHERE $col % 100 = 7" | times_of) || ms=""
			  echo "$t ${ms:-ERROR}" ) &
		done
	done
	wait
)
UPDATE_S=$(since "$t0")
say "UPDATE of 1 % of each table's rows (all at once) in $UPDATE_S s: $(paste -sd ',' <<<"$UPD_MS" | sed 's/,/ ms, /g') ms"
MIRRORS_UPDATED=$(mirrors)
run_phase updated 100
MIRRORS_AFTER=$(mirrors)
STATUS_AFTER=$($PSQL -c "SELECT 'requests ' || requests || ', mirror builds ' || mirror_builds || ', fallbacks ' || fallbacks || ', invalidations ' || invalidations FROM gpubtree_status()")
DONE=1
say "analytic.sh: done in $SECONDS s"
report
cat "$REPORT"
if grep -qE $'\t(MISMATCH|ERROR)$' "$W/rows.tsv"; then
	say "MISMATCH or ERROR: some gpubtree answers differ from btree's or failed (the column same; the rows in $LOG)"
	exit 1
fi
