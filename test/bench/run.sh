#!/usr/bin/env bash
# test/bench/run.sh: gpubtree against btree, same data, same run, same settings.
#
#   test/bench/run.sh [--rows "20 22"] [--quick] [--out DIR] [--device auto|off]
#                     [--engine auto|gpu|cpu] [--ams "btree gpubtree"] [--workloads "build range any bitmap ycsb write"]
#                     [--clients "1 4 16 64"] [--duration SEC] [--reps N] [--any-max N]
#                     [--fsync on|off] [--no-install]
#
# Needs a PostgreSQL 15 install (PG_CONFIG, default pg_config, with psql and
# pgbench) and the extension (it runs `make -s install` unless --no-install).
# Creates a throwaway cluster with test/lib.sh, loads one table per access
# method of 2^N rows (k int8, v int8) with an index on (k) INCLUDE (v), and
# measures every workload for every AM, alternating the AMs.  See
# test/bench/README.md for the workloads and how the timings are taken.
# Writes results.csv, settings.txt, report.md, plans.txt, logs and (when
# gnuplot exists) PNG plots into the out dir.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BENCH=$ROOT/test/bench

ROWS="20 22"; QUICK=0; OUTDIR=""; DEVICE=""; ENGINE=""; AMS="btree gpubtree"
WORKLOADS="build range any bitmap ycsb write"
CLIENTS=""; DURATION=""; REPS=""; ANY_MAX=""; FSYNC=on; INSTALL=1
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-1}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=$2; shift ;;
	--quick) QUICK=1 ;;
	--out) OUTDIR=$2; shift ;;
	--device) DEVICE=$2; shift ;;
	--engine) ENGINE=$2; shift ;;
	--ams) AMS=$2; shift ;;
	--workloads) WORKLOADS=$2; shift ;;
	--clients) CLIENTS=$2; shift ;;
	--duration) DURATION=$2; shift ;;
	--reps) REPS=$2; shift ;;
	--any-max) ANY_MAX=$2; shift ;;
	--fsync) FSYNC=$2; shift ;;
	--no-install) INSTALL=0 ;;
	-h|--help) usage 0 ;;
	*) echo "unknown argument: $1" >&2; usage ;;
	esac
	shift
done
case $DEVICE in
""|auto|off) ;;
gpu|cpu) echo "--device takes auto or off; the service's engine is --engine $DEVICE (gpubtree.engine)" >&2; exit 1 ;;
*) echo "--device must be auto or off" >&2; exit 1 ;;
esac
case $ENGINE in ""|auto|gpu|cpu) ;; *) echo "--engine must be auto, gpu or cpu" >&2; exit 1 ;; esac
if [ $QUICK = 1 ]; then
	: "${CLIENTS:=1 16 64}" "${DURATION:=2}" "${REPS:=3}" "${ANY_MAX:=100000}"
else
	: "${CLIENTS:=1 4 16 64}" "${DURATION:=5}" "${REPS:=5}" "${ANY_MAX:=10000000}"
fi
has_wl() { case " $WORKLOADS " in *" $1 "*) return 0 ;; esac; return 1; }

PG_CONFIG=${PG_CONFIG:-pg_config}
export PG_CONFIG
. "$ROOT/test/lib.sh"
export PATH=$PGBIN:$PATH
T0=$(date +%s)
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
OUTDIR=${OUTDIR:-$BENCH/out/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/bench.log
: >"$LOG"
say() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }

if [ $INSTALL = 1 ]; then
	say "make -s install (PG_CONFIG=$PG_CONFIG)"
	make -s PG_CONFIG="$PG_CONFIG" >>"$LOG" 2>&1 && make -s install PG_CONFIG="$PG_CONFIG" >>"$LOG" 2>&1 ||
		{ echo "build/install failed, see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }
fi

# ---- machine, versions, settings ------------------------------------------
NCPU=$(nproc)
MEM_MB=$(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo)
if command -v nvidia-smi >/dev/null 2>&1 && GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) && [ -n "$GPU" ]; then
	DEVNAME=$GPU
else
	DEVNAME="cpu: $(awk -F': *' '/model name/ {print $2; exit}' /proc/cpuinfo)"
fi
CUDAVER=$(command -v nvcc >/dev/null 2>&1 && nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -1)
SB_MB=$((MEM_MB / 4)); [ $SB_MB -gt 16384 ] && SB_MB=16384
ECS_MB=$((MEM_MB / 2))
MWM_MB=$((MEM_MB / 16)); [ $MWM_MB -gt 2048 ] && MWM_MB=2048
PW=$((NCPU / 2)); [ $PW -lt 1 ] && PW=1; [ $PW -gt 8 ] && PW=8

DIR=$(mktemp -d /tmp/gbt-bench.XXXXXX)
chmod 755 "$DIR"
PORT=$((20000 + RANDOM % 20000))
WORK=$DIR/work; mkdir -p "$WORK"; [ "$(id -u)" = 0 ] && chown "$GBT_OS_USER" "$WORK"
cleanup() {
	for fd in ${SESS_FDS:-}; do eval "exec $fd>&-" 2>/dev/null; done
	sleep 0.5
	[ -f "$DIR/server.log" ] && tail -200 "$DIR/server.log" >"$OUTDIR/server.log"
	cluster_stop "$DIR" immediate
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'echo "a psql session died (server crash?): see $OUTDIR/psql-errors.log and $OUTDIR/server.log" | tee -a "$LOG" >&2; exit 1' PIPE

cluster_init "$DIR" "$PORT" || exit 1
cat >>"$DIR/data/postgresql.conf" <<CONF
# test/bench/run.sh
shared_preload_libraries = 'gpubtree'
shared_buffers = ${SB_MB}MB
effective_cache_size = ${ECS_MB}MB
work_mem = 64MB
maintenance_work_mem = ${MWM_MB}MB
max_connections = 200
max_worker_processes = $((NCPU + 8))
max_parallel_workers = $NCPU
max_parallel_workers_per_gather = $PW
max_parallel_maintenance_workers = $PW
random_page_cost = 1.1
jit = off
autovacuum = off
max_wal_size = 16GB
checkpoint_timeout = 30min
synchronous_commit = on
fsync = off
CONF
[ -n "$ENGINE" ] && echo "gpubtree.engine = '$ENGINE'" >>"$DIR/data/postgresql.conf"
cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
psql -X -q -c "CREATE EXTENSION gpubtree" >>"$LOG" 2>&1 || { echo "CREATE EXTENSION failed" >&2; exit 1; }
GBT_SET=""
[ -n "$DEVICE" ] && GBT_SET="SET gpubtree.device = '$DEVICE';"
PGVER=$(psql -X -At -c "SHOW server_version")
GBT_DEVICE=$(psql -X -At -c "$GBT_SET SHOW gpubtree.device" | tail -1)

SETTINGS=$OUTDIR/settings.txt
{
	echo "date=$STAMP"
	echo "device=$DEVNAME"
	echo "host_cpus=$NCPU"
	echo "host_mem_mb=$MEM_MB"
	echo "cpu_model=$(awk -F': *' '/model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "pg_version=$PGVER"
	echo "cuda_version=${CUDAVER:-none}"
	echo "gpubtree_commit=${GBT_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$([ -n "$(git -C "$ROOT" status --porcelain -- src sql cuda Makefile 2>/dev/null)" ] && echo ' + uncommitted changes')}"
	echo "rows_log2=$ROWS"
	echo "ams=$AMS"
	echo "workloads=$WORKLOADS"
	echo "quick=$QUICK"
	echo "reps=$REPS"
	echo "pgbench_clients=$CLIENTS"
	echo "pgbench_duration_s=$DURATION"
	echo "any_max_keys=$ANY_MAX"
	echo "write_phase_fsync=$FSYNC"
	echo "gpubtree.device(gpubtree sessions)=$GBT_DEVICE"
	psql -X -At -F= -c "SELECT name, current_setting(name) FROM pg_settings WHERE name IN
		('shared_buffers','work_mem','maintenance_work_mem','effective_cache_size','max_worker_processes',
		 'max_parallel_workers','max_parallel_workers_per_gather','max_parallel_maintenance_workers',
		 'random_page_cost','jit','autovacuum','max_wal_size','synchronous_commit','wal_level',
		 'shared_preload_libraries','huge_pages') OR name LIKE 'gpubtree.%' ORDER BY name"
	echo "gpubtree_device_info=$(psql -X -At -F' ' -c "SELECT * FROM gpubtree_device_info()" 2>&1 | tr '\n' ';')"
	[ -n "$CUDAVER" ] && command -v nvidia-smi >/dev/null &&
		echo "nvidia_smi=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tr '\n' ';')"
} >"$SETTINGS"
say "settings:"; sed 's/^/    /' "$SETTINGS" | tee -a "$LOG"

CSV=$OUTDIR/results.csv
echo "device,date,pg_version,cuda_version,rows,am,gpubtree_device,workload,param,median,min,unit,n,plan" >"$CSV"
PLANS=$OUTDIR/plans.txt
: >"$PLANS"
# emit AM WORKLOAD PARAM MEDIAN MIN UNIT N PLAN
emit() {
	local dev=""
	[ "$1" = gpubtree ] && dev=$GBT_DEVICE
	printf '"%s",%s,%s,%s,%s,%s,%s,%s,"%s",%s,%s,%s,%s,"%s"\n' "$DEVNAME" "$STAMP" "$PGVER" "${CUDAVER:-}" \
		"$NROWS" "$1" "$dev" "$2" "$3" "$4" "$5" "$6" "$7" "${8//\"/\'}" >>"$CSV"
}
# median and min of numbers on stdin
medmin() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "NA NA"; exit}
	m = (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.3f %.3f\n", m, a[1]}'; }

# ---- persistent psql sessions, one per AM ---------------------------------
# Each AM keeps one backend for all of its queries (a GPU context, once there
# is one, is made once per backend; it must not be charged to every query).
SESS_FDS=""
sess_open() {
	local am=$1 fin fout
	mkfifo "$DIR/in_$am" "$DIR/out_$am"
	local opts="-c client_min_messages=warning"
	[ "$am" = gpubtree ] && [ -n "$DEVICE" ] && opts="$opts -c gpubtree.device=$DEVICE"
	PGOPTIONS="$opts" psql -X -q -At -v ON_ERROR_STOP=0 <"$DIR/in_$am" >"$DIR/out_$am" 2>>"$OUTDIR/psql-errors.log" &
	exec {fin}>"$DIR/in_$am"
	exec {fout}<"$DIR/out_$am"
	SESS_FDS="$SESS_FDS $fin $fout"
	eval "SESS_IN_$am=$fin SESS_OUT_$am=$fout"
}
# sq AM SQL: run SQL (may hold several statements and psql meta-commands) in
# AM's session; its output goes to stdout.
sq() {
	local am=$1 in out line
	eval "in=\$SESS_IN_$am out=\$SESS_OUT_$am"
	printf '%s\n\\echo __GBT_END__\n' "$2" >&"$in"
	while :; do
		IFS= read -r line <&"$out" || { echo "psql session of $am ended (server crash?)" | tee -a "$LOG" >&2; kill -PIPE $$; exit 1; }
		[ "$line" = __GBT_END__ ] && break
		printf '%s\n' "$line"
	done
}
# plan summary from EXPLAIN text: node names, outer to inner
plan_of() {
	awk '/^ *InitPlan/ { init = 1 }
		NR == 1 || /^ *->/ {
			s = $0; sub(/^ *(-> *)?/, "", s); sub(/ *\((actual|never|cost).*/, "", s)
			sub(/ on [a-z_0-9]+( [a-z_0-9]+)?$/, "", s)
			if (init) { s = "InitPlan(" s ")"; init = 0 }
			n = n (n == "" ? "" : " > ") s }
		/Workers Launched:/ { n = n "[" $3 " workers]" }
		/Heap Fetches:/ { n = n "[heap fetches " $3 "]" }
		/^ *Service: / { s = $0; sub(/^ *Service: /, "", s); n = n " [gpubtree service: " s "]" }
		END { print n }'
}

# measure WORKLOAD PARAM SETUP SQL(with @T@ for the table): EXPLAIN ANALYZE,
# TIMING OFF; one warm-up run and REPS timed runs per AM, AMs alternating.
measure() {
	local wl=$1 param=$2 setup=$3 sql=$4 am out t reps=$REPS r
	declare -A times plan
	for am in $AMS; do
		sq "$am" "$setup" >/dev/null
		out=$(sq "$am" "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) ${sql//@T@/t_$am};")
		plan[$am]=$(plan_of <<<"$out")
		t=$(sed -n 's/^Execution Time: \([0-9.]*\) ms/\1/p' <<<"$out")
		{ echo "=== rows=2^$LOG2 $am $wl $param (warm-up ${t:-ERROR} ms)"; echo "$out"; } >>"$PLANS"
		# slow queries get fewer timed runs: 3 above 2 s, 1 above 10 s
		if [ -z "$t" ]; then reps=0; elif [ "${t%.*}" -gt 10000 ]; then reps=$((reps < 1 ? reps : 1))
		elif [ "${t%.*}" -gt 2000 ]; then reps=$((reps < 3 ? reps : 3)); fi
		times[$am]=""
	done
	local order=$AMS
	for ((r = 0; r < reps; r++)); do
		for am in $order; do
			out=$(sq "$am" "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) ${sql//@T@/t_$am};")
			t=$(sed -n 's/^Execution Time: \([0-9.]*\) ms/\1/p' <<<"$out")
			times[$am]="${times[$am]} $t"
		done
		order=$(echo $order | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
	done
	local line=""
	for am in $AMS; do
		sq "$am" "RESET ALL;" >/dev/null
		read -r med min < <(tr ' ' '\n' <<<"${times[$am]}" | grep . | medmin)
		emit "$am" "$wl" "$param" "$med" "$min" ms "$reps" "${plan[$am]}"
		line="$line  $am ${med}ms"
	done
	say "  $wl $param:$line"
}

# timed AM SQL: wall time of SQL in AM's session by psql \timing (ms)
timed() {
	sq "$1" "\\timing on
$2
\\timing off" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | awk '{s += $1} END {printf "%.3f\n", s}'
}

# pgbench_run AM CLIENTS DURATION SCRIPT... -> "tps latency_avg_ms"
pgbench_run() {
	local am=$1 c=$2 d=$3; shift 3
	local j=$c opts=""
	[ $j -gt $NCPU ] && j=$NCPU
	[ "$am" = gpubtree ] && [ -n "$DEVICE" ] && opts="-c gpubtree.device=$DEVICE"
	local out
	out=$(cd "$WORK" && PGOPTIONS="$opts" pgbench -n -M prepared -c "$c" -j "$j" -T "$d" -D n="$NROWS" "$@" 2>&1)
	echo "--- pgbench $am -c $c -T $d $*" >>"$LOG"; echo "$out" | grep -E "tps|latency|failed|ERROR|error" >>"$LOG"
	local tps lat
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p' <<<"$out" | awk '{printf "%.1f", $1}')
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
	echo "${tps:-NA} ${lat:-NA}"
}

for am in $AMS; do sess_open "$am"; done
[ -n "$DEVICE" ] && sq gpubtree "SHOW gpubtree.device" >/dev/null

# ---- per table size -------------------------------------------------------
for LOG2 in $ROWS; do
	NROWS=$((1 << LOG2))
	say "=== rows = 2^$LOG2 = $NROWS"
	# Load: one heap per AM, same contents; loaded in parallel.
	pids=""
	for am in $AMS; do
		sq "$am" "DROP TABLE IF EXISTS t_$am; CREATE TABLE t_$am (k int8 NOT NULL, v int8 NOT NULL);
			INSERT INTO t_$am SELECT i, (i * 7919) % 1000003 FROM generate_series(0::int8, $NROWS - 1) i;
			VACUUM (FREEZE) t_$am;" >/dev/null &
		pids="$pids $!"
	done
	wait $pids
	say "  loaded and vacuumed (hint bits set before the index builds)"
	# CREATE INDEX: 3 builds per AM (alternating), the last one kept.
	declare -A bt
	for am in $AMS; do bt[$am]=""; done
	BREPS=3; [ $QUICK = 1 ] && BREPS=2; has_wl build || BREPS=1
	for ((r = 0; r < BREPS; r++)); do
		for am in $AMS; do
			sq "$am" "DROP INDEX IF EXISTS t_${am}_k; CHECKPOINT;" >/dev/null
			t=$(timed "$am" "CREATE INDEX t_${am}_k ON t_$am USING $am (k) INCLUDE (v);")
			bt[$am]="${bt[$am]} $t"
		done
	done
	if has_wl build; then
		line=""
		for am in $AMS; do
			read -r med min < <(tr ' ' '\n' <<<"${bt[$am]}" | grep . | medmin)
			emit "$am" create_index "(k) INCLUDE (v)" "$med" "$min" ms "$BREPS" "CREATE INDEX [$PW maintenance workers]"
			line="$line  $am ${med}ms"
		done
		say "  create_index:$line"
	fi
	for am in $AMS; do sq "$am" "VACUUM (ANALYZE) t_$am; CHECKPOINT;" >/dev/null; done
	say "  vacuumed: $(psql -X -At -c "SELECT string_agg(c.relname || ' ' || pg_size_pretty(pg_relation_size(c.oid)), ', ' ORDER BY c.relname)
		FROM pg_class c WHERE c.relname ~ '^t_'")"
	for am in $AMS; do sq "$am" "SELECT count(*) FROM t_$am;" >/dev/null; done   # warm the heaps

	IOS="SET enable_seqscan = off; SET enable_bitmapscan = off;"
	if has_wl range; then
		for pct in 0.01 1 10 100; do
			w=$(awk -v n=$NROWS -v p=$pct 'BEGIN {printf "%d", n * p / 100}')
			lo=$(((NROWS - w) / 2)); hi=$((lo + w))
			for agg in "count(*)" "sum(v)"; do
				measure "range_${agg%%(*}" "$pct%" "$IOS" "SELECT $agg FROM @T@ WHERE k >= $lo AND k < $hi"
			done
		done
	fi
	if has_wl any; then
		m=1000; mlist=""
		while [ $m -le $ANY_MAX ] && [ $m -le $((NROWS * 2)) ]; do mlist="$mlist $m"; m=$((m * 10)); done
		psql -X -q -c "DROP TABLE IF EXISTS bench_arrays; CREATE TABLE bench_arrays (m int8, a int8[]);" >>"$LOG" 2>&1
		for m in $mlist; do
			# m keys spread over [0, 2n): about half of them are in the table
			psql -X -q -c "INSERT INTO bench_arrays SELECT $m, array_agg((i * 2654435761) % ($NROWS * 2))
				FROM generate_series(1::int8, $m) i" >>"$LOG" 2>&1
		done
		for m in $mlist; do
			measure any_count "$m keys" "$IOS" "SELECT count(*) FROM @T@ WHERE k = ANY ((SELECT a FROM bench_arrays WHERE m = $m)::int8[])"
		done
	fi
	if has_wl bitmap; then
		BMP="SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;"
		for pct in 1 10; do
			w=$(awk -v n=$NROWS -v p=$pct 'BEGIN {printf "%d", n * p / 100}')
			lo=$(((NROWS - w) / 2)); hi=$((lo + w))
			measure bitmap_rows "$pct%" "$BMP" "SELECT k, v FROM @T@ WHERE k >= $lo AND k < $hi"
		done
	fi

	# ---- write phase: durable commits from here on ----
	if has_wl ycsb || has_wl write; then
		psql -X -q -c "CHECKPOINT" -c "ALTER SYSTEM SET fsync = $FSYNC" -c "SELECT pg_reload_conf()" >>"$LOG" 2>&1
		sleep 1
		say "  write phase, fsync = $(psql -X -At -c 'SHOW fsync'), synchronous_commit = $(psql -X -At -c 'SHOW synchronous_commit')"
	fi
	if has_wl ycsb; then
		for am in $AMS; do
			for dist in uniform zipfian; do
				case $dist in
				uniform) expr="random(0, :n - 1)" ;;
				zipfian) expr="permute(random_zipfian(0, :n - 1, 1.001), :n)" ;;
				esac
				printf '\\set id %s\nSELECT v FROM t_%s WHERE k = :id;\n' "$expr" "$am" >"$WORK/read_${dist}_$am.sql"
				printf '\\set id %s\nUPDATE t_%s SET v = v + 1 WHERE k = :id;\n' "$expr" "$am" >"$WORK/update_${dist}_$am.sql"
			done
			plan_r=$(sq "$am" "EXPLAIN (COSTS OFF) SELECT v FROM t_$am WHERE k = 42;" | plan_of)
			plan_u=$(sq "$am" "EXPLAIN (COSTS OFF) UPDATE t_$am SET v = v + 1 WHERE k = 42;" | plan_of)
			eval "PLAN_R_$am=\$plan_r PLAN_U_$am=\$plan_u"
		done
		chmod -R a+r "$WORK"
		YORDER=$(echo $AMS | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
		for mix in C B A; do
			case $mix in C) wr=100 ;; B) wr=95 ;; A) wr=50 ;; esac
			for dist in uniform zipfian; do
				for c in $CLIENTS; do
					line=""
					YORDER=$(echo $YORDER | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')   # alternate who goes first
					for am in $YORDER; do
						args=(-f "$WORK/read_${dist}_$am.sql@$wr")
						[ $wr -lt 100 ] && args+=(-f "$WORK/update_${dist}_$am.sql@$((100 - wr))")
						read -r tps lat < <(pgbench_run "$am" "$c" "$DURATION" "${args[@]}")
						eval "pr=\$PLAN_R_$am pu=\$PLAN_U_$am"
						p="read: $pr"; [ $wr -lt 100 ] && p="$p; update: $pu"
						emit "$am" "ycsb_${mix}_$dist" "$c clients" "$tps" "" tps "$DURATION" "$p"
						line="$line  $am $tps tps (lat $lat ms)"
					done
					say "  ycsb_${mix}_$dist $c clients:$line"
				done
			done
		done
		AMS=$(echo $AMS | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')   # fair order for what follows
		for am in $AMS; do sq "$am" "VACUUM t_$am;" >/dev/null; done
		AMS=$(echo $AMS | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
	fi
	if has_wl write; then
		# batch INSERT ... SELECT of B rows with keys spread over the key range
		B=$((NROWS / 16)); [ $B -gt 1048576 ] && B=1048576
		declare -A ti tu
		for am in $AMS; do ti[$am]=""; tu[$am]=""; done
		for ((r = 0; r < 3; r++)); do
			for am in $AMS; do
				t=$(timed "$am" "INSERT INTO t_$am SELECT ((i + $r * $B) * 2654435761) % $NROWS, i
					FROM generate_series(1::int8, $B) i;")
				ti[$am]="${ti[$am]} $t"
			done
		done
		# batch UPDATE of the rows in a key range of about U rows (index columns change: no HOT)
		U=$((NROWS / 64)); [ $U -gt 262144 ] && U=262144
		for ((r = 0; r < 3; r++)); do
			lo=$(((NROWS / 4) * r + 1000))
			for am in $AMS; do
				t=$(timed "$am" "UPDATE t_$am SET v = v + 1 WHERE k >= $lo AND k < $((lo + U));")
				tu[$am]="${tu[$am]} $t"
			done
		done
		line=""
		for am in $AMS; do
			read -r med min < <(tr ' ' '\n' <<<"${ti[$am]}" | grep . | medmin)
			emit "$am" insert_batch "$B rows" "$med" "$min" ms 3 "INSERT ... SELECT generate_series"
			p=$(sq "$am" "EXPLAIN (COSTS OFF) UPDATE t_$am SET v = v + 1 WHERE k >= 1000 AND k < $((1000 + U));" | plan_of)
			read -r med2 min2 < <(tr ' ' '\n' <<<"${tu[$am]}" | grep . | medmin)
			emit "$am" update_batch "$U keys" "$med2" "$min2" ms 3 "$p"
			line="$line  $am insert ${med}ms update ${med2}ms"
		done
		say "  batch ($B inserted, ~$U keys updated):$line"
		# single-row INSERT commit latency, one client, every transaction logged
		for am in $AMS; do
			printf '\\set id random(0, :n - 1)\nINSERT INTO t_%s VALUES (:id, 0);\n' "$am" >"$WORK/commit_$am.sql"
		done
		chmod -R a+r "$WORK"
		line=""
		for am in $AMS; do
			rm -f "$WORK"/commitlog*
			read -r tps lat < <(pgbench_run "$am" 1 "$DURATION" -l --log-prefix="$WORK/commitlog" -f "$WORK/commit_$am.sql")
			read -r med min < <(cat "$WORK"/commitlog* 2>/dev/null | awk '{print $3 / 1000}' | medmin)
			n=$(cat "$WORK"/commitlog* 2>/dev/null | wc -l)
			emit "$am" commit_latency "1 client, 1-row INSERT" "$med" "$min" ms "$n" "INSERT ... VALUES, commit per row"
			emit "$am" commit_tps "1 client, 1-row INSERT" "$tps" "" tps "$DURATION" "INSERT ... VALUES, commit per row"
			line="$line  $am ${med}ms (${tps} tps)"
		done
		say "  commit latency:$line"
	fi
	psql -X -q -c "ALTER SYSTEM RESET fsync" -c "SELECT pg_reload_conf()" >>"$LOG" 2>&1
	for am in $AMS; do sq "$am" "DROP TABLE IF EXISTS t_$am;" >/dev/null; done
	psql -X -q -c "DROP TABLE IF EXISTS bench_arrays; CHECKPOINT" >>"$LOG" 2>&1
done
echo "runtime_s=$(($(date +%s) - T0))" >>"$SETTINGS"

# ---- report and plots -----------------------------------------------------
PY=$(command -v python3 || command -v python)
if [ -n "$PY" ]; then
	"$PY" "$BENCH/report.py" "$OUTDIR" && say "report: $OUTDIR/report.md"
else
	say "no python3: report.md not written (results.csv is complete)"
fi
if command -v gnuplot >/dev/null 2>&1; then
	"$BENCH/plot.sh" "$OUTDIR" >>"$LOG" 2>&1 && say "plots: $(cd "$OUTDIR" && ls *.png 2>/dev/null | tr '\n' ' ')"
else
	say "gnuplot not found: plots skipped (make them later with test/bench/plot.sh $OUTDIR)"
fi
say "done in $(($(date +%s) - T0)) s; results in $OUTDIR"
