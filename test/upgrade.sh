#!/usr/bin/env bash
# ALTER EXTENSION gpubtree UPDATE: an installation of every earlier version
# (each script sql/gpubtree--V.sql), with live indexes and their mirrors,
# is updated along the scripts to the default version; then its extension
# objects are those of a fresh installation (every member, described), its
# capture trigger is there, and its answers after deletes equal the ordinary
# plan's.  A new version is covered by its scripts alone.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib.sh

cluster_throwaway upgrade "${PORT:-54413}"
default=$(sed -n "s/^default_version = '\(.*\)'/\1/p" gpubtree.control)

# members DB: the extension's objects, described, one a line.
members() {
	$PSQL -d "$1" -c "SELECT pg_describe_object(classid, objid, objsubid) FROM pg_depend
		WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpubtree') ORDER BY 1"
}
# agree DB: count and sum over a range, the node's against the ordinary plan's.
agree() {
	node_vs_plan "$1" "SELECT count(*) || ':' || coalesce(sum(v), 0) FROM u WHERE k BETWEEN 100 AND 40000"
}

$PSQL -c "CREATE DATABASE fresh" >/dev/null && $PSQL -d fresh -c "CREATE EXTENSION gpubtree" >/dev/null || exit 1
check "a fresh installation is the default version" \
	"$($PSQL -d fresh -c "SELECT extversion FROM pg_extension WHERE extname = 'gpubtree'")" "$default"

for script in sql/gpubtree--*.sql; do
	from=${script#sql/gpubtree--}
	from=${from%.sql}
	case "$from" in *--*) continue ;; esac	# an update script
	[ "$from" = "$default" ] && continue
	db=from_${from//./_}
	$PSQL -c "CREATE DATABASE $db" >/dev/null || exit 1
	$PSQL -d "$db" >/dev/null <<SQL || exit 1
CREATE EXTENSION gpubtree VERSION '$from';
CREATE TABLE u (k int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO u SELECT g, g % 1000 FROM generate_series(1, 50000) g;
CREATE INDEX u_k ON u USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE u;
SQL
	check "$from: answers before the update" "$(agree "$db")" same
	$PSQL -d "$db" -c "ALTER EXTENSION gpubtree UPDATE" >/dev/null || exit 1
	check "$from: updated to the default version" \
		"$($PSQL -d "$db" -c "SELECT extversion FROM pg_extension WHERE extname = 'gpubtree'")" "$default"
	check "$from: the objects of a fresh installation" "$(members "$db")" "$(members fresh)"
	$PSQL -d "$db" -c "DELETE FROM u WHERE k % 3 = 0" -c "UPDATE u SET v = v + 1 WHERE k % 5 = 0" >/dev/null
	check "$from: answers after the update and deletes" "$(agree "$db")" same
	check "$from: the capture trigger" \
		"$($PSQL -d "$db" -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'u'::regclass AND tgfoid = 'gpubtree_capture()'::regprocedure AND tgenabled = 'A'")" 1
	check "$from: the mirror holds the index" "$($PSQL -d "$db" -c "SELECT count(*) FROM gpubtree_verify('u_k')")" 0
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
