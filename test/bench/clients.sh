#!/usr/bin/env bash
# test/bench/clients.sh: many clients at once (issue 37), gpubtree against
# btree in one run on one cluster with shipped defaults (test/lib.sh's
# throwaway cluster, shared_preload_libraries, and max_connections raised
# for the clients; nothing else set).  Two tables of 2^N rows (k int8, v
# int8), keys 0 .. 2^N - 1, index (k) INCLUDE (v): t_g with gpubtree, t_b
# with btree.  Each workload runs with pgbench (-M prepared: bound
# parameters, as applications send them) at each client count, first on
# btree, then on gpubtree, every transaction logged (-l): throughput, and
# latency percentiles from the logs.
#
# Workloads (ONLY picks by id):
#   sum_0.01 sum_1 sum_10   SELECT count(*), sum(v) over a random range of
#                           that percent of the keys
#   any_1000 any_100000     SELECT count(*), sum(v) WHERE k = ANY($1): a
#                           bound array of that many random keys (one of 32
#                           sets, read from a small table first: \gset)
#   lookup                  SELECT v WHERE k = $1 (nbtree on both)
#   any2_1000 any2_100000   the same = ANY, each transaction on t_g or on
#                           t_g2 (a second gpubtree table, made only for
#                           these: on a host with two GPUs the service puts
#                           its mirror on the other one), so that the sum
#                           of both is what every GPU gives; btree's on t_b
#   arr_1000 arr_100000     SELECT count(*), sum(v) WHERE k = ANY ((SELECT
#   arr2_1000 arr2_100000   arr FROM keysets ...)): the same key sets, kept
#                           as int8[] and read by the query (an InitPlan),
#                           so that no client sends or parses them: the
#                           service's share of the work is the largest;
#                           arr2_* over t_g and t_g2 as any2_*
#   mix                     sum_1 while WRITERS more clients update one
#                           random row a transaction (v = v + 1): the
#                           readers' numbers, the writers' rate beside them
#
# For gpubtree, the service's request and fall-back counters
# (gpubtree_status()) before and after each run: "fell back" is how many
# scans tried the service and got nbtree; EXPLAIN ANALYZE of one query of
# each workload says what answered (plans in clients-plans.txt).
#
#   test/bench/clients.sh [LOG2_ROWS=26]
#   CLIENTS ["1 16 64 256"]  DURATION [10] seconds a run  WRITERS [8]
#   ONLY (workload ids)  RESULTS [test/bench/out/<UTC time>-clients]
#   PORT [54426]  BUDGET_S: seconds the runs may take (0: no limit); runs
#   that would not fit are left out and said so
#   PGCONF: lines added to postgresql.conf (a tuned run, beside a default
#   one: gpubtree.mirror_memory_limit below one mirror's estimate a device
#   splits it across the GPUs)
#   SERVICE_LOG=1: the service's DEBUG1 summaries (every 10 s and when
#   requests stop: rounds, the time of each part of a round, aggregates a
#   batch) of each gpubtree run into clients-service.txt
#
# Writes clients-report.md (rewritten after every run), clients.csv,
# clients-plans.txt, clients.log, server.log into RESULTS.  On the GPU
# machine: test/gpu/run.sh clients 26.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GBT_BUILD_WAIT=   # the shipped default
. test/lib.sh
export LC_ALL=C
. test/bench/compare_lib.sh	# bench_identity

LOG2=${1:-26}
ROWS=$((1 << LOG2))
CLIENTS=${CLIENTS:-1 16 64 256}
DURATION=${DURATION:-10}
WRITERS=${WRITERS:-8}
BUDGET_S=${BUDGET_S:-0}
RESULTS=${RESULTS:-test/bench/out/$(date -u +%Y%m%dT%H%M%SZ)-clients}
mkdir -p "$RESULTS" && RESULTS=$(cd "$RESULTS" && pwd) || exit 1
REPORT=$RESULTS/clients-report.md
CSV=$RESULTS/clients.csv
PLANS=$RESULTS/clients-plans.txt
LOG=$RESULTS/clients.log
: >"$PLANS"
: >"$LOG"
NCPU=$(nproc)
MAXC=$(tr ' ' '\n' <<<"$CLIENTS" | sort -n | tail -1)

cluster_throwaway "bench-clients" "${PORT:-54426}" || exit 1
cluster_stop "$DIR"
echo "max_connections = $((MAXC + WRITERS + 20))" >>"$DIR/data/postgresql.conf"
# (PGCONF: settings beside the defaults, for a tuned run beside the default one)
[ -z "${PGCONF:-}" ] || printf '%s\n' "$PGCONF" >>"$DIR/data/postgresql.conf"
cluster_start "$DIR" || exit 1
W=$(mktemp -d /tmp/gbt-clients.XXXXXX)
trap 'cluster_stop "$DIR" immediate; cp "$DIR/server.log" "$RESULTS/" 2>/dev/null; rm -rf "$DIR" "$W"' EXIT
trap 'echo "clients.sh: stopped (signal)" | tee -a "$LOG"; exit 124' TERM INT
START=$SECONDS

say() { echo "$*" | tee -a "$LOG"; }
if [ "${SERVICE_LOG:-}" = 1 ]; then
	$PSQL -c "ALTER SYSTEM SET log_min_messages = debug1" -c "SELECT pg_reload_conf()" >/dev/null
fi

bench_identity

# ---- data --------------------------------------------------------------------
GTABLES=t_g
for id in ${ONLY:-}; do [[ $id == any2_* || $id == arr2_* ]] && GTABLES="t_g t_g2"; done
say "loading $(wc -w <<<"$GTABLES t_b") x 2^$LOG2 rows"
t0=$SECONDS
$PSQL -c "CREATE EXTENSION gpubtree" || exit 1
for t in $GTABLES t_b; do
	$PSQL -c "CREATE TABLE $t (k int8 NOT NULL, v int8 NOT NULL)" || exit 1
done
pids=""
for t in $GTABLES t_b; do
	for ((s = 0; s < NCPU / 2 + 1; s++)); do
		lo=$((ROWS * s / (NCPU / 2 + 1)))
		hi=$((ROWS * (s + 1) / (NCPU / 2 + 1) - 1))
		$PSQL -c "INSERT INTO $t SELECT i, (i * 7919) % 1000003 FROM generate_series(${lo}::int8, $hi) i" &
		pids="$pids $!"
	done
done
wait $pids || exit 1
for t in $GTABLES t_b; do $PSQL -c "VACUUM (ANALYZE) $t" & done; wait
for t in $GTABLES; do $PSQL -c "CREATE INDEX ${t}_k ON $t USING gpubtree (k) INCLUDE (v)" & done
$PSQL -c "CREATE INDEX t_b_k ON t_b (k) INCLUDE (v)" & wait
# the key sets of the = ANY workloads: 32 of each size, random keys
$PSQL -c "CREATE TABLE keysets (size int, id int, keys text, arr int8[], PRIMARY KEY (size, id))" || exit 1
for size in 1000 100000; do
	$PSQL -c "INSERT INTO keysets SELECT $size, s, (SELECT array_agg((random() * ($ROWS - 1))::int8)::text
		FROM generate_series(1, $size) WHERE s > 0) FROM generate_series(1, 32) s" || exit 1
done
$PSQL -c "UPDATE keysets SET arr = keys::int8[]" -c "VACUUM keysets" >/dev/null || exit 1
say "loaded, vacuumed, indexed in $((SECONDS - t0)) s"
# the mirrors, asked for and waited for (gpubtree_count() asks, never waits)
for t in $GTABLES; do
	t0=$SECONDS
	while [ $((SECONDS - t0)) -lt 600 ]; do
		[ "$($PSQL -c "SELECT count(*) FROM gpubtree_mirrors() WHERE index = '${t}_k'::regclass AND current")" = 1 ] && break
		$PSQL -c "SELECT gpubtree_count('${t}_k', 0::int8, 0::int8)" >/dev/null
		sleep 0.2
	done
	say "mirror of ${t}_k current after $((SECONDS - t0)) s: $($PSQL -F' ' -c "SELECT engine, 'device', device, entries, pg_size_pretty(bytes) FROM gpubtree_mirrors() WHERE index = '${t}_k'::regclass")"
done
# warm both heaps and indexes alike
for t in $GTABLES t_b; do $PSQL -c "SELECT count(*) FROM $t" >/dev/null; done

# ---- workloads ---------------------------------------------------------------
# script ID TABLE FILE: the pgbench script of workload ID on TABLE
script() {
	local id=$1 t=$2 w
	case $id in
		sum_*)
			w=$(awk -v n=$ROWS -v p="${id#sum_}" 'BEGIN {printf "%d", n * p / 100}')
			printf '\\set a random(0, %d)\nSELECT count(*), sum(v) FROM %s WHERE k BETWEEN :a AND :a + %d;\n' \
				$((ROWS - w)) "$t" $((w - 1)) ;;
		any2_*) script "any_${id#any2_}" "$t" ;;
		arr2_*) script "arr_${id#arr2_}" "$t" ;;
		arr_*)
			printf '\\set s random(1, 32)\nSELECT count(*), sum(v) FROM %s WHERE k = ANY ((SELECT arr FROM keysets WHERE size = %d AND id = :s)::int8[]);\n' \
				"$t" "${id#arr_}" ;;
		any_*)
			printf '\\set s random(1, 32)\nSELECT keys FROM keysets WHERE size = %d AND id = :s \\gset\nSELECT count(*), sum(v) FROM %s WHERE k = ANY (:keys::int8[]);\n' \
				"${id#any_}" "$t" ;;
		lookup)
			printf '\\set id random(0, %d)\nSELECT v FROM %s WHERE k = :id;\n' $((ROWS - 1)) "$t" ;;
		mix) script sum_1 "$t" ;;
		writer)
			printf '\\set id random(0, %d)\nUPDATE %s SET v = v + 1 WHERE k = :id;\n' $((ROWS - 1)) "$t" ;;
	esac
}
WORKLOADS="sum_0.01 sum_1 sum_10 any_1000 any_100000 any2_1000 any2_100000 arr_1000 arr_100000 arr2_1000 arr2_100000 lookup mix"
selected() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }

status() { $PSQL -F' ' -c "SELECT requests, fallbacks FROM gpubtree_status()"; }
# cpu_now: seconds, the host's busy and all clock ticks (every core), and
# the service process's (all its threads); what a run's CPU columns come from
cpu_now() {
	local pid
	pid=$(pgrep -P "$(head -1 "$DIR/data/postmaster.pid")" -f 'gpubtree service' | head -1)
	echo "$(date +%s.%N) $(awk '/^cpu / {idle = $5 + $6; all = 0; for (i = 2; i <= NF; i++) all += $i; print all - idle, all}' /proc/stat) $( [ -n "$pid" ] && awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)"
}

echo "workload,am,clients,tps,p50_ms,p95_ms,p99_ms,max_ms,transactions,failed,requests,fell_back,writer_tps,host_busy_pct,service_cores" >"$CSV"
ROWS_MD=""
report() {
	{
		echo "# Many clients at once: gpubtree against btree"
		echo
		echo "- device: $DEVNAME; PostgreSQL $PGVER; tree $COMMIT; $STAMP"
		echo "- 2^$LOG2 rows (k int8, v int8), index (k) INCLUDE (v); shipped defaults but max_connections"
		echo "- pgbench -n -M prepared -c C -j min(C, $NCPU) -T $DURATION -l, per workload and client count, btree first"
		echo "- latency: pgbench's per-transaction log (ms); fell back: scans that tried the service and got nbtree"
		echo "- host busy: the share of all cores' time not idle during the run (pgbench, backends, service, writers); service: the GPU service process's CPU, in cores"
		echo "- command: test/bench/clients.sh $LOG2 (CLIENTS=\"$CLIENTS\" DURATION=$DURATION WRITERS=$WRITERS${ONLY:+ ONLY=\"$ONLY\"})"
		echo
		echo "| workload | AM | clients | tps | p50 ms | p95 ms | p99 ms | max ms | failed | service requests / xact | fell back | writers' tps | host busy % | service cores |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		printf '%s' "$ROWS_MD"
		echo
		echo "Plans: clients-plans.txt; every number also in clients.csv."
	} >"$REPORT"
}

# run ID AM C: one pgbench run; a line of the report and the CSV
run() {
	local id=$1 am=$2 c=$3 t=t_$2 j=$3 out rc wpid="" wout="" wtps="" before after
	[ "$j" -gt "$NCPU" ] && j=$NCPU
	local files="-f $W/$id-$am.sql"
	script "$id" "$t" >"$W/$id-$am.sql"
	if [[ ($id == any2_* || $id == arr2_*) && $am == g ]]; then
		script "$id" t_g2 >"$W/$id-$am-2.sql"
		files="$files -f $W/$id-$am-2.sql"
	fi
	rm -f "$W"/pgbench_log.*
	if [ "$id" = mix ]; then
		script writer "$t" >"$W/writer-$am.sql"
		wout=$(mktemp)
		(cd /tmp && "$PGBIN"/pgbench -n -M prepared -c "$WRITERS" -j "$WRITERS" -T $((DURATION + 2)) \
			-f "$W/writer-$am.sql" >"$wout" 2>&1) &
		wpid=$!
		sleep 1
	fi
	before=$(status)
	local logat
	logat=$(wc -l <"$DIR/server.log")
	local cpu0 cpu1 busy cores
	cpu0=$(cpu_now)
	out=$(cd "$W" && "$PGBIN"/pgbench -n -M prepared -c "$c" -j "$j" -T "$DURATION" -l $files 2>&1)
	rc=$?
	cpu1=$(cpu_now)
	read -r busy cores < <(awk -v hz="$(getconf CLK_TCK)" -v a="$cpu0" -v b="$cpu1" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.0f %.2f\n", 100 * (y[2] - x[2]) / (y[3] - x[3] + 1e-9), (y[4] - x[4]) / hz / (y[1] - x[1] + 1e-9) }')
	[ "$am" = g ] || cores=""
	after=$(status)
	if [ -n "$wpid" ]; then
		wait "$wpid"
		wtps=$(sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p' "$wout" | awk '{printf "%.0f", $1}')
		rm -f "$wout"
	fi
	{ echo "--- $id $am $c clients (rc $rc)"; grep -E "tps|latency|failed|ERROR|error|transactions" <<<"$out"; } >>"$LOG"
	local tps xacts failed req fb stats
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p' <<<"$out" | awk '{printf "%.0f", $1}')
	xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
	[ "$rc" != 0 ] && [ -z "$failed" ] && failed="rc $rc"
	stats=$(cat "$W"/pgbench_log.* 2>/dev/null | awk '{print $3 / 1000}' | sort -n |
		awk 'function at(q,  i) { i = int(NR * q) + 1; return a[i > NR ? NR : i] }
			{a[NR] = $1}
			END {if (NR == 0) print "NA NA NA NA"; else printf "%.2f %.2f %.2f %.2f\n", at(0.50), at(0.95), at(0.99), a[NR]}')
	rm -f "$W"/pgbench_log.*
	req="" fb=""
	if [ "$am" = g ]; then
		read -r r0 f0 <<<"$before"
		read -r r1 f1 <<<"$after"
		req=$(awk -v a="$r0" -v b="$r1" -v x="${xacts:-0}" 'BEGIN {if (x > 0) printf "%.2f", (b - a) / x}')
		fb=$((f1 - f0))
	fi
	if [ "${SERVICE_LOG:-}" = 1 ] && [ "$am" = g ]; then
		# the service logs its summary a second after the last request, or
		# (kept busy by writers' changes) every 10 s: wait for one
		local waited=0 lines
		while sleep 0.5; waited=$((waited + 1)); [ "$waited" -lt 24 ]; do
			lines=$(tail -n +$((logat + 1)) "$DIR/server.log" |
				sed -n 's/^.*gpubtree service: \(.* requests in .*\)$/\1/p')
			[ -n "$lines" ] && [ "$waited" -ge 3 ] && break
		done
		{ echo "--- $id, $c clients"; tail -n +$((logat + 1)) "$DIR/server.log" |
			sed -n 's/^.*gpubtree service: \(.* requests in .*\)$/\1/p'; } >>"$RESULTS/clients-service.txt"
	fi
	read -r p50 p95 p99 pmax <<<"$stats"
	local name=$([ "$am" = g ] && echo gpubtree || echo btree)
	echo "$id,$name,$c,${tps:-NA},$p50,$p95,$p99,$pmax,${xacts:-NA},${failed:-0},$req,$fb,$wtps,$busy,$cores" >>"$CSV"
	ROWS_MD="$ROWS_MD| $id | $name | $c | ${tps:-NA} | $p50 | $p95 | $p99 | $pmax | ${failed:-0} | $req | $fb | $wtps | $busy | $cores |
"
	say "  $id $name $c clients: ${tps:-NA} tps, p50 $p50 p99 $p99 ms, failed ${failed:-0}${req:+, requests/xact $req, fell back $fb}${wtps:+, writers $wtps tps}"
	report
}

# explain ID AM: what answers workload ID's query (its first statement's values)
explain() {
	local id=$1 t=t_$2 q
	case $id in
		sum_*|mix) q=$(script "$id" "$t" | sed -n '2p' | sed "s/:a/0/g") ;;
		arr_*|arr2_*) q="SELECT count(*), sum(v) FROM $t WHERE k = ANY ((SELECT arr FROM keysets WHERE size = ${id#arr*_} AND id = 1)::int8[])" ;;
		any_*|any2_*) id=any_${id#any*_}; q="SELECT count(*), sum(v) FROM $t WHERE k = ANY ((SELECT keys FROM keysets WHERE size = ${id#any_} AND id = 1)::int8[])" ;;
		lookup) q="SELECT v FROM $t WHERE k = 12345" ;;
	esac
	{ echo "=== $id $2"; echo "$q"; $PSQL -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${q%;}"; echo; } >>"$PLANS" 2>&1
}

report
nruns=0
for id in $WORKLOADS; do selected "$id" && nruns=$((nruns + 2 * $(wc -w <<<"$CLIENTS"))); done
per_run=$((DURATION + 4))
for id in $WORKLOADS; do
	selected "$id" || continue
	explain "$id" b
	explain "$id" g
	for c in $CLIENTS; do
		for am in b g; do
			if [ "$BUDGET_S" -gt 0 ] && [ $((SECONDS - START + per_run)) -gt "$BUDGET_S" ]; then
				say "  $id $am $c clients: left out (BUDGET_S=$BUDGET_S)"
				ROWS_MD="$ROWS_MD| $id | $am | $c | left out (time budget) | | | | | | | | | | |
"
				continue
			fi
			run "$id" "$am" "$c"
		done
	done
done
# With a second gpubtree table: every answer of = ANY on both, from the
# most clients of CLIENTS at once (rounds holding both mirrors' requests), against what the
# data says (v = (k * 7919) % 1000003, every key in the table).
if [[ $GTABLES == *t_g2* ]]; then
	$PSQL -c "CREATE TABLE expected AS SELECT size, id, count(*) AS n, sum((k * 7919) % 1000003) AS sv
		FROM (SELECT DISTINCT size, id, unnest(keys::int8[]) AS k FROM keysets) x GROUP BY size, id" >/dev/null
	for size in 1000 100000; do
		for t in $GTABLES; do
			printf '\\set s random(1, 32)\nSELECT keys FROM keysets WHERE size = %d AND id = :s \\gset\nSELECT count(*) AS n, sum(v) AS sv FROM %s WHERE k = ANY (:keys::int8[]) \\gset\nSELECT CASE WHEN n = :n AND sv = :sv THEN 1 ELSE 1 / (n - n) END FROM expected WHERE size = %d AND id = :s;\n' \
				"$size" "$t" "$size" >"$W/check-$size-$t.sql"
		done
		out=$(cd /tmp && "$PGBIN"/pgbench -n -M prepared -c "$MAXC" -j "$NCPU" -T 5 $(for t in $GTABLES; do echo "-f $W/check-$size-$t.sql"; done) 2>&1)
		rc=$?
		[ "$rc" = 0 ] || head -5 <<<"$out" | tee -a "$LOG"
		say "check: = ANY of $size keys on $GTABLES from $MAXC clients, each answer against the data's: rc $rc, $(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out") transactions, $(grep -c 'division by zero' <<<"$out") wrong"
		ROWS_MD="$ROWS_MD| check any2_$size | gpubtree | $MAXC | rc $rc, $(grep -c 'division by zero' <<<"$out") wrong answers | | | | | | | | | | |
"
	done
fi
report
cat "$REPORT"
[ -f "$RESULTS/clients-service.txt" ] && { echo; echo "The service's summaries:"; cat "$RESULTS/clients-service.txt"; }
say "clients: total $((SECONDS - START)) s; results in $RESULTS"
