#!/usr/bin/env bash
# Background mirror builds never hold a database: while a build worker is
# connected to it, CREATE DATABASE ... TEMPLATE, ALTER DATABASE ... RENAME
# and SET TABLESPACE and DROP DATABASE succeed, as they do while autovacuum
# works there; the build is asked for again by a later query, and built.
# A user who may not run the command calls no build off.  The builds are
# held connected with gpubtree.debug_build_delay.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh

cluster_throwaway db-commands "${PORT:-54412}"
mkdir -p "$DIR/ts"
[ "$(id -u)" = 0 ] && chown "$GBT_OS_USER" "$DIR/ts"

$PSQL >/dev/null <<SQL || exit 1
CREATE DATABASE src;
CREATE ROLE stranger LOGIN CREATEDB;
CREATE TABLESPACE ts LOCATION '$DIR/ts';
ALTER SYSTEM SET gpubtree.debug_build_delay = '60s';
SELECT pg_reload_conf();
SQL
$PSQL -d src <<'SQL' || exit 1
CREATE EXTENSION gpubtree;
CREATE TABLE t (k int8, v int8);
INSERT INTO t SELECT g, g FROM generate_series(1, 100000) g;
CREATE INDEX t_k ON t USING gpubtree (k) INCLUDE (v);
SQL

# workers DB: the build workers connected to database DB.
workers() {
	$PSQL -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'gpubtree build' AND datname = '$1'"
}

# start_build DB: a query asks for the mirror without waiting for it; wait
# until the build's worker is connected.
start_build() {
	$PSQL -d "$1" -c "SET gpubtree.build_wait = 0" -c "SET gpubtree.build_on_scan = on" \
		-c "SELECT gpubtree_count('t_k', 1, 10)" >/dev/null || return 1
	for _ in $(seq 1 100); do
		[ "$(workers "$1")" -ge 1 ] && return 0
		sleep 0.1
	done
	return 1
}

# run NAME SQL: SQL succeeds while a build is connected to the database it
# names, and no build worker is left there.
run() {
	local db=$3 out
	check "$1: a build is connected" "$(start_build "$db" && echo yes)" yes
	out=$($PSQL -c "$2" 2>&1) || echo "$out"
	check "$1: succeeds" "$([ -z "$out" ] && echo yes)" yes
	check "$1: no build worker left" "$(workers "$db")" 0
}

# Someone who may not run the commands calls no build off.
check "a build is connected" "$(start_build src && echo yes)" yes
out=$($PSQL -U stranger -c "DROP DATABASE src" 2>&1)
check "a stranger may not drop the database" "$(echo "$out" | grep -c 'must be owner')" 1
out=$($PSQL -U stranger -c "CREATE DATABASE copy3 TEMPLATE src" 2>&1)
check "nor copy it" "$(echo "$out" | grep -c 'permission denied')" 1
check "the stranger's commands left the build alone" "$(workers src)" 1

run "CREATE DATABASE ... TEMPLATE" "CREATE DATABASE copy TEMPLATE src" src
check "the copy has the table" "$($PSQL -d copy -c "SELECT count(*) FROM t")" 100000
run "CREATE DATABASE ... TEMPLATE (FILE_COPY)" "CREATE DATABASE copy2 TEMPLATE src STRATEGY FILE_COPY" src
run "ALTER DATABASE ... RENAME" "ALTER DATABASE src RENAME TO src2" src
run "ALTER DATABASE ... SET TABLESPACE" "ALTER DATABASE src2 SET TABLESPACE ts" src2
run "ALTER DATABASE ... RENAME back" "ALTER DATABASE src2 RENAME TO src" src2
run "DROP DATABASE" "DROP DATABASE copy" copy

# The builds called off are asked for again by a later query, and done.
$PSQL -c "ALTER SYSTEM RESET gpubtree.debug_build_delay" -c "SELECT pg_reload_conf()" >/dev/null
check "built after all" "$($PSQL -d src -c "SET gpubtree.build_wait = '60s'" \
	-c "SELECT gpubtree_count('t_k', 1, 10)" \
	-c "SELECT state FROM gpubtree_mirrors() WHERE index = 't_k'::regclass")" "10
current"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
