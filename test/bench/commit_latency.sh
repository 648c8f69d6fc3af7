#!/usr/bin/env bash
# test/bench/commit_latency.sh: what commit-time resync (issue 7) adds to
# writing transactions.  One throwaway cluster, one run, the same table
# t(k int8, v float8) pre-loaded with ROWS random rows for each variant:
#   a  btree      t_btree, a btree index on k (the baseline)
#   b  gpubtree   t_gpubtree, a gpubtree index on k, service running, no
#                 mirror (nothing ever scans it through the service)
#   c  mirror     t_mirror, a gpubtree index on k whose mirror is built before
#                 each run (one forced bitmap range scan) and kept in use
#                 during it by a reader (one forced bitmap range scan every
#                 READER_INTERVAL s), so every committed row goes through the
#                 change log into the mirror
#   d  nopreload  t_nopreload, a gpubtree index on k, measured last after a
#                 restart without shared_preload_libraries (no service);
#                 only with NOPRELOAD=1
# pgbench (-M prepared, every transaction logged with -l) runs scripts that
# insert 1, 10, 100, 1000 random keys per transaction, with 1 and 8 clients,
# DURATION s each; the variants alternate their order from cell to cell.
# Reported: tps, mean / median / p99 latency, latency per row, and the
# overhead of b, c (and d) against a.  synchronous_commit is on (default),
# but the cluster runs with fsync = off (test/lib.sh): commits cost no flush,
# which makes the overhead in percent larger than on a durable server.
#
#   test/bench/commit_latency.sh                 ~5 min on 2 cores
#   QUICK=1 test/bench/commit_latency.sh         ~1 min smoke run
#
# Environment (defaults in brackets):
#   ROWS [1000000; QUICK 100000]  rows pre-loaded per table
#   DURATION [10; QUICK 2]        seconds per pgbench run
#   CLIENTS ["1 8"]  BATCHES ["1 10 100 1000"]  rows per transaction
#   NOPRELOAD [0]                 1: also variant d (adds a quarter)
#   READER_INTERVAL [0.5]         seconds between the reader's scans; 0: no reader
#   PGCONF                        postgresql.conf lines appended last (they
#                                 override ours), e.g. PGCONF=$'fsync = on\nshared_buffers = 4GB'
#   PORT [54410]  PG_CONFIG [pg_config]
#   LABEL [hostname]  OUT [test/bench/out/<UTC date>-<LABEL>-commit-latency]
#                                 (out/ is git-ignored)
#   GBT_COMMIT                    commit id to record (default: the checkout's)
# Uses the installed extension (run `make install` first).  Writes
# results.csv, report.md (test/bench/commit_latency_report.py), settings.txt,
# status.txt (gpubtree_status(), gpubtree_mirrors(), per phase), bench.log
# (pgbench output) and server.log into OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	: "${ROWS:=100000}" "${DURATION:=2}"
else
	: "${ROWS:=1000000}" "${DURATION:=10}"
fi
CLIENTS=${CLIENTS:-"1 8"}
BATCHES=${BATCHES:-"1 10 100 1000"}
NOPRELOAD=${NOPRELOAD:-0}
READER_INTERVAL=${READER_INTERVAL:-0.5}
PORT=${PORT:-54410}
PGCONF=${PGCONF:-}
LABEL=${LABEL:-$(hostname -s 2>/dev/null || hostname)}
PG_CONFIG=${PG_CONFIG:-pg_config}
export PG_CONFIG
. "$ROOT/test/lib.sh"
export PATH=$PGBIN:$PATH
T0=$(date +%s)
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if [ -z "${OUT:-}" ]; then
	OUT=$ROOT/test/bench/out/$(date -u +%Y-%m-%d)-$LABEL-commit-latency
	[ -e "$OUT/results.csv" ] && OUT=$OUT-$(date -u +%H%M%S)
fi
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
LOG=$OUT/bench.log
: >"$LOG"
say() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }

NCPU=$(nproc)
MEM_MB=$(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo)
if command -v nvidia-smi >/dev/null 2>&1 && GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) && [ -n "$GPU" ]; then
	DEVNAME=$GPU
else
	DEVNAME="cpu: $(awk -F': *' '/model name/ {print $2; exit}' /proc/cpuinfo)"
fi
SB_MB=$((MEM_MB / 4)); [ $SB_MB -gt 16384 ] && SB_MB=16384
COMMIT=${GBT_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$([ -n "$(git -C "$ROOT" status --porcelain -- src sql cuda Makefile 2>/dev/null)" ] && echo ' + uncommitted changes')}

# ---- cluster ----------------------------------------------------------------
DIR=$(mktemp -d /tmp/gpubtree-commit.XXXXXX)
chmod 755 "$DIR"
WORK=$DIR/work
mkdir -p "$WORK"
READER=""
stop_reader() {
	if [ -n "$READER" ]; then
		kill "$READER" 2>/dev/null
		wait "$READER" 2>/dev/null
		READER=""
	fi
}
# wait_reader_gone: the killed reader's backend finishes its scan (or the
# mirror build it started) before it notices; wait for it, so that it does
# not hold the index's one export slot when the next run primes the mirror.
wait_reader_gone() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$($PSQL -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'gbt_reader'" 2>/dev/null)" = 0 ] && return
		sleep 0.1
	done
	say "  WARNING: the reader's backend is still running"
}
cleanup() {
	stop_reader
	[ -f "$DIR/server.log" ] && tail -300 "$DIR/server.log" >"$OUT/server.log"
	cluster_stop "$DIR" immediate
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cluster_init "$DIR" "$PORT" || exit 1
cat >>"$DIR/data/postgresql.conf" <<CONF
# test/bench/commit_latency.sh (fsync = off comes from test/lib.sh)
shared_buffers = ${SB_MB}MB
max_connections = 100
synchronous_commit = on
autovacuum = off
jit = off
max_wal_size = 16GB
checkpoint_timeout = 30min
CONF
if [ -n "$PGCONF" ]; then
	printf '# PGCONF\n%s\n' "$PGCONF" >>"$DIR/data/postgresql.conf"
fi
cluster_start "$DIR" || exit 1
cluster_env "$DIR" "$PORT"
PSQL="psql -X -q -At -v ON_ERROR_STOP=1"
PGVER=$($PSQL -c "SHOW server_version")

TABLES="t_btree t_gpubtree t_mirror"
[ "$NOPRELOAD" = 1 ] && TABLES="$TABLES t_nopreload"
say "loading $ROWS rows into each of: $TABLES"
{
	echo "CREATE EXTENSION gpubtree;"
	for t in $TABLES; do echo "CREATE TABLE $t (k int8, v float8);"; done
	echo "INSERT INTO t_btree SELECT floor(random() * $ROWS)::int8, random() FROM generate_series(1, $ROWS);"
	for t in $TABLES; do
		[ $t = t_btree ] && continue
		echo "INSERT INTO $t SELECT * FROM t_btree;"
	done
	for t in $TABLES; do
		am=gpubtree; [ $t = t_btree ] && am=btree
		echo "CREATE INDEX ${t}_k ON $t USING $am (k);"
	done
	echo "VACUUM ANALYZE; CHECKPOINT;"
} | $PSQL >>"$LOG" 2>&1 || { echo "setup failed, see $LOG" >&2; tail -5 "$LOG" >&2; exit 1; }
say "loaded: $($PSQL -c "SELECT string_agg(relname || ' ' || pg_size_pretty(pg_relation_size(oid)), ', ' ORDER BY relname) FROM pg_class WHERE relname ~ '^t_'")"

SCAN_SET="SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET gpubtree.enable_aggregate = off; SET max_parallel_workers_per_gather = 0;"
# The reader's range holds about 250 of the pre-loaded rows (fewer than the
# 1024 TIDs a backend first makes room for): a larger answer that keeps
# growing under the inserts makes the scan fall back to nbtree after 3 tries.
SCAN_HI=${SCAN_HI:-$((ROWS / 4000 > 10 ? ROWS / 4000 : 10))}
SCAN="SELECT count(*) FROM t_mirror WHERE k BETWEEN 1 AND $SCAN_HI"

SETTINGS=$OUT/settings.txt
{
	echo "date=$STAMP"
	echo "label=$LABEL"
	echo "device=$DEVNAME"
	echo "host_cpus=$NCPU"
	echo "host_mem_mb=$MEM_MB"
	echo "cpu_model=$(awk -F': *' '/model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "pg_version=$PGVER"
	echo "gpubtree_commit=$COMMIT"
	echo "rows_preloaded=$ROWS"
	echo "duration_s=$DURATION"
	echo "clients=$CLIENTS"
	echo "rows_per_xact=$BATCHES"
	echo "quick=$QUICK"
	echo "nopreload_variant=$NOPRELOAD"
	echo "reader_interval_s=$READER_INTERVAL"
	echo "reader_scan=$SCAN"
	echo "pgconf_override=$(printf '%s' "$PGCONF" | tr '\n' ';')"
	echo "pgbench=pgbench -n -M prepared -c C -j min(C,$NCPU) -T $DURATION -l"
	$PSQL -F= -c "SELECT name, current_setting(name) FROM pg_settings WHERE name IN
		('fsync','synchronous_commit','wal_sync_method','full_page_writes','wal_level','shared_buffers',
		 'max_wal_size','checkpoint_timeout','autovacuum','jit','max_connections','shared_preload_libraries',
		 'wal_buffers','commit_delay','huge_pages') OR name LIKE 'gpubtree.%' ORDER BY name"
	echo "gpubtree_device_info=$($PSQL -F' ' -c "SELECT * FROM gpubtree_device_info()" 2>&1 | tr '\n' ';')"
	command -v nvidia-smi >/dev/null 2>&1 &&
		echo "nvidia_smi=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | tr '\n' ';')"
} >"$SETTINGS"
say "fsync = $($PSQL -c 'SHOW fsync'), synchronous_commit = $($PSQL -c 'SHOW synchronous_commit') (commits are not flushed to disk)"

STATUS=$OUT/status.txt
# status_dump TITLE: gpubtree_status() and gpubtree_mirrors() into status.txt
status_dump() {
	{
		echo "== $1"
		echo "-- SELECT * FROM gpubtree_status()"
		psql -X -P pager=off -c "SELECT * FROM gpubtree_status()" 2>&1
		echo "-- SELECT * FROM gpubtree_mirrors()"
		psql -X -P pager=off -c "SELECT database, index::regclass AS index, relfilenode, engine, entries, bytes, build_ms, hits, current, delta FROM gpubtree_mirrors()" 2>&1
	} >>"$STATUS"
}
: >"$STATUS"
status_dump "after loading"

# ---- measurement --------------------------------------------------------------
CSV=$OUT/results.csv
echo "device,date,pg_version,commit,label,rows_preloaded,variant,what,clients,rows_per_xact,duration_s,xacts,tps,lat_avg_ms,lat_p50_ms,lat_p99_ms,us_per_row,logged_entries,invalidations,fallbacks,mirror,reader_scans,reader_service_scans,failed" >"$CSV"


declare -A WHAT=([btree]="btree index" [gpubtree]="gpubtree, service, no mirror"
	[mirror]="gpubtree, current mirror in use" [nopreload]="gpubtree, no service (no preload)")
declare -A TABLE=([btree]=t_btree [gpubtree]=t_gpubtree [mirror]=t_mirror [nopreload]=t_nopreload)

for v in btree gpubtree mirror nopreload; do
	for n in $BATCHES; do
		if [ "$n" = 1 ]; then
			printf '\\set k random(0, %d)\nINSERT INTO %s VALUES (:k, random());\n' $((ROWS - 1)) "${TABLE[$v]}"
		else
			printf 'INSERT INTO %s SELECT floor(random() * %d)::int8, random() FROM generate_series(1, %d);\n' \
				"${TABLE[$v]}" "$ROWS" "$n"
		fi >"$WORK/ins_${v}_$n.sql"
	done
done
chmod -R a+rX "$WORK"

# status_counts: "logged_entries invalidations fallbacks" now (0 0 0 without a service)
status_counts() {
	local s
	s=$($PSQL -F' ' -c "SELECT coalesce(logged_entries, 0), coalesce(invalidations, 0), coalesce(fallbacks, 0) FROM gpubtree_status()" 2>/dev/null)
	echo "${s:-0 0 0}"
}
# mirror_state TABLE: none, or "current|stale <entries> entries, delta <d>"
mirror_state() {
	local s
	s=$($PSQL -c "SELECT CASE WHEN current THEN 'current' ELSE 'stale' END || ' ' || entries || ' entries delta ' || delta
		FROM gpubtree_mirrors() WHERE index = '${1}_k'::regclass" 2>/dev/null | head -1)
	echo "${s:-none}"
}
# prime_mirror: the forced bitmap range scan that builds (or refreshes) the mirror
prime_mirror() {
	local out
	out=$($PSQL -c "$SCAN_SET EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $SCAN" 2>&1)
	echo "--- priming scan: $(grep -E '^ *Service:' <<<"$out" | sed 's/^ *//')" >>"$LOG"
	grep -qE '^ *Service: [1-9]' <<<"$out" || say "  WARNING: the priming scan was not answered by the service"
}
start_reader() {
	[ "$READER_INTERVAL" = 0 ] && return
	printf '%s\nEXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) %s;\n\\watch %s\n' "$SCAN_SET" "$SCAN" "$READER_INTERVAL" |
		PGAPPNAME=gbt_reader psql -X -q -At >"$WORK/reader.log" 2>&1 &
	READER=$!
}

# run_one VARIANT CLIENTS ROWS_PER_XACT
run_one() {
	local v=$1 c=$2 n=$3 j=$2 out tps stats before after mirror rs=0 rss=0 failed
	[ "$j" -gt "$NCPU" ] && j=$NCPU
	if [ "$v" = mirror ]; then
		prime_mirror
		: >"$WORK/reader.log"
		start_reader
	fi
	before=$(status_counts)
	rm -f "$WORK"/pgbench_log.*
	out=$(cd "$WORK" && pgbench -n -M prepared -c "$c" -j "$j" -T "$DURATION" -l -f "$WORK/ins_${v}_$n.sql" 2>&1)
	after=$(status_counts)
	if [ "$v" = mirror ]; then
		stop_reader
		wait_reader_gone
		rs=$(grep -cE '^ *Service:' "$WORK/reader.log")
		rss=$(grep -cE '^ *Service: [1-9]' "$WORK/reader.log")
		{ echo "=== $c clients, $n rows/xact"; grep -E '^ *Service:|ERROR|FATAL' "$WORK/reader.log" | sort | uniq -c; } >>"$OUT/reader.log"
	fi
	mirror=$(mirror_state "${TABLE[$v]}")
	{ echo "--- $v, $c clients, $n rows/xact"; echo "$out" | grep -vE '^(pgbench|starting|transaction type|scaling|query mode|duration|number of (clients|threads))'; } >>"$LOG"
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p' <<<"$out")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
	# latency in µs is the third field of every log line
	stats=$(cat "$WORK"/pgbench_log.* 2>/dev/null | awk '{print $3}' | sort -n |
		awk '{a[NR] = $1; s += $1} END {if (NR == 0) {print "0 NA NA NA"; exit}
			p50 = a[int((NR + 1) / 2)]; i = int(NR * 0.99); if (i < 1) i = 1
			printf "%d %.4f %.4f %.4f\n", NR, s / NR / 1000, p50 / 1000, a[i] / 1000}')
	read -r nx avg p50 p99 <<<"$stats"
	read -r l0 i0 f0 <<<"$before"
	read -r l1 i1 f1 <<<"$after"
	local upr
	upr=$(awk -v a="$avg" -v n="$n" 'BEGIN {if (a == "NA") print "NA"; else printf "%.2f", a * 1000 / n}')
	tps=$(awk -v t="${tps:-NA}" 'BEGIN {if (t == "NA") print t; else printf "%.1f", t}')
	printf '"%s",%s,%s,"%s",%s,%s,%s,"%s",%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,"%s",%s,%s,%s\n' \
		"$DEVNAME" "$STAMP" "$PGVER" "$COMMIT" "$LABEL" "$ROWS" "$v" "${WHAT[$v]}" "$c" "$n" "$DURATION" \
		"$nx" "$tps" "$avg" "$p50" "$p99" "$upr" $((l1 - l0)) $((i1 - i0)) $((f1 - f0)) "$mirror" "$rs" "$rss" "${failed:-0}" >>"$CSV"
	say "  $(printf '%-9s' "$v") ${c}c x ${n} rows: $tps tps, avg ${avg} ms, p50 ${p50} ms, ${upr} µs/row; logged $((l1 - l0)), invalidations $((i1 - i0)), fallbacks $((f1 - f0)), mirror: $mirror$([ "$v" = mirror ] && echo ", reader scans $rss/$rs by the service")"
}

say "variants a btree, b gpubtree (no mirror), c mirror (current, reader every ${READER_INTERVAL}s); ${DURATION}s per run"
order="btree gpubtree mirror"
for c in $CLIENTS; do
	for n in $BATCHES; do
		for v in $order; do run_one "$v" "$c" "$n"; done
		order=$(echo $order | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
	done
done
status_dump "after the runs with the service"
{
	echo "-- gpubtree_verify('t_mirror_k'): problems"
	$PSQL -c "SELECT count(*) FROM gpubtree_verify('t_mirror_k')" 2>&1
} >>"$STATUS"

if [ "$NOPRELOAD" = 1 ]; then
	say "restart without shared_preload_libraries (variant d)"
	cluster_stop "$DIR" fast
	# gpubtree.engine exists only when preloaded (a WARNING in every session otherwise)
	sed -i "s/^shared_preload_libraries.*/# &/; s/^gpubtree\.engine.*/# &/" "$DIR/data/postgresql.conf"
	cluster_start "$DIR" || exit 1
	echo "nopreload_phase_shared_preload_libraries=$($PSQL -c 'SHOW shared_preload_libraries')" >>"$SETTINGS"
	for c in $CLIENTS; do
		for n in $BATCHES; do run_one nopreload "$c" "$n"; done
	done
	status_dump "after the runs without preload"
fi
echo "runtime_s=$(($(date +%s) - T0))" >>"$SETTINGS"

if command -v python3 >/dev/null 2>&1; then
	python3 "$ROOT/test/bench/commit_latency_report.py" "$OUT" && say "report: $OUT/report.md"
	sed -n '/^## Overhead/,/^## All runs/p' "$OUT/report.md" | sed '$d'
else
	say "no python3: report.md not written (results.csv is complete)"
fi
say "done in $(($(date +%s) - T0)) s; results in $OUT"
