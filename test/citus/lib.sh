# test/citus/lib.sh: a Citus coordinator and two workers on the loopback
# address, each with gpubtree preloaded after Citus (sourced after
# test/lib.sh, from the repository root).

# citus_ready: true when Citus is installed in pg_config's PostgreSQL, or
# was built there from CITUS_SRC (test/citus/build_citus.sh); else says
# SKIPPED and is false.
citus_ready() {
	[ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] && return 0
	if [ -z "${CITUS_SRC:-}" ]; then
		echo "SKIPPED: Citus is not installed and CITUS_SRC names no source tree to build it from"
		return 1
	fi
	PG_CONFIG=$PG_CONFIG test/citus/build_citus.sh "$CITUS_SRC"
}

# citus_cluster PORT0: nodes 0 (the coordinator), 1 and 2 on ports PORT0..
# PORT0+2 under $CITUS_BASE, started, with Citus and gpubtree created and the
# workers added; stopped and removed when the script exits (CITUS_KEEP=1:
# kept).  psql_at N runs psql on node N, C on the coordinator.
citus_cluster() {
	local n
	CITUS_PORT0=$1
	CITUS_BASE=$(mktemp -d /tmp/gpubtree-citus.XXXXXX)
	chmod 755 "$CITUS_BASE"
	trap citus_cleanup EXIT
	for n in 0 1 2; do
		cluster_init "$CITUS_BASE/n$n" $((CITUS_PORT0 + n)) || return 1
		cat >>"$CITUS_BASE/n$n/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
shared_preload_libraries = 'citus,gpubtree'
wal_level = logical
max_connections = 100
max_prepared_transactions = 200
CONF
		[ -n "${CITUS_CONF:-}" ] && echo "$CITUS_CONF" >>"$CITUS_BASE/n$n/data/postgresql.conf"
		cluster_start "$CITUS_BASE/n$n" || return 1
		psql_at $n -c "CREATE EXTENSION citus" || return 1
	done
	C <<SQL
SELECT citus_set_coordinator_host('127.0.0.1', $CITUS_PORT0);
SELECT citus_add_node('127.0.0.1', $((CITUS_PORT0 + 1)));
SELECT citus_add_node('127.0.0.1', $((CITUS_PORT0 + 2)));
CREATE EXTENSION gpubtree;
SQL
}

citus_cleanup() {
	local n
	if [ -n "${CITUS_KEEP:-}" ]; then
		echo "kept: $CITUS_BASE (ports $CITUS_PORT0-$((CITUS_PORT0 + 2)))"
		return
	fi
	for n in 0 1 2; do cluster_stop "$CITUS_BASE/n$n" immediate; done
	rm -rf "$CITUS_BASE"
}

psql_at() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $((CITUS_PORT0 + $1)) -d postgres "${@:2}"; }
C() { psql_at 0 "$@"; }

# citus_tasks BEFORE AFTER NODE QUERY: the shard tasks of QUERY run between
# the statements BEFORE and AFTER, as "tasks with a NODE node (such as
# GpubtreeAggregate)/tasks answered by the service".
citus_tasks() {
	C <<SQL | awk -v node="$3" '$0 ~ "Custom Scan \\(" node "\\)" {g++}
		/Answered by: GPU service/ {s++} END {printf "%d/%d\n", g, s}'
$1
SET citus.explain_all_tasks = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $4;
$2
SQL
}
