#!/usr/bin/env bash
# The documents against the tree: what of README.md and ARCHITECTURE.md a
# script can check, so that they do not drift from the code.
#
#   test/docs_check.sh
#
# 1. ARCHITECTURE.md's file table (the rows between "## Files" and the next
#    "## " heading whose first cell is a path in backticks) names every
#    *.c, *.h, *.cu and *.cuh file under src/ and cuda/, and every file it names
#    exists.  After a file is added, split or renamed, the failures say
#    which rows to add or drop.  Every path of the tree the documents
#    write in backticks exists.
# 2. Every function written in backticks with empty parentheses, `name()`
#    or `file.c: name()`, in README.md and ARCHITECTURE.md is defined in
#    src/, cuda/, sql/, test/ or scripts/ (a C definition starts its line,
#    as pgindent lays it out, or a macro that defines functions is given its
#    name first; an SQL one follows FUNCTION), or is one of
#    PostgreSQL's own that the documents name on purpose (POSTGRES_NAMES
#    below, or any name the server's headers declare).
#    A function named with its file, `file.c: name()`, is defined in that
#    file.
# 3. Every setting src/common/settings.c defines has a row in README.md's
#    settings table.
#
# Needs no cluster and no build.  Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }

# PostgreSQL's functions the documents name: those static in its sources,
# which no installed header declares, and the rest for a machine without the
# server's headers.
POSTGRES_NAMES="index_build PrepareSortSupportFromIndexRel BuildSpeculativeIndexInfo
match_rowcompare_to_indexcol ATAddForeignKeyConstraint transformIndexConstraint
DefineIndex get_actual_variable_range refresh_by_match_merge
resolve_unique_index_expr get_relation_info ec_member_matches_indexcol
get_opfamily_member HeapTupleSatisfiesMVCC GetOldestNonRemovableTransactionId
btinsert btbulkdelete btcostestimate tbm_add_tuples table_index_fetch_tuple
add_path add_partial_path statement_timestamp have_createdb_privilege
bt_index_check bt_index_parent_check now"

# --- 1. the file table -------------------------------------------------------

table=$(awk '/^## Files/ { on = 1; next } on && /^## / { on = 0 } on' ARCHITECTURE.md |
	grep -oE '^\| *`[^`]+`' | sed -E 's/^\| *`([^`]+)`/\1/' | sort -u)
if [ -z "$table" ]; then
	fail "ARCHITECTURE.md has no file table under a \"## Files\" heading"
fi

tree=$(find src cuda -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)

for f in $tree; do
	if grep -qxF "$f" <<<"$table"; then
		pass
	else
		fail "$f is not in ARCHITECTURE.md's file table (add a row: | \`$f\` | what it holds |)"
	fi
done
for f in $table; do
	if [ -e "$f" ]; then
		pass
	else
		fail "ARCHITECTURE.md's file table names $f, which does not exist (drop or rename its row)"
	fi
done

# Every path of the repository written in backticks in README.md and
# ARCHITECTURE.md (one that starts with a top folder of the tree) exists,
# or matches a file when it has a wildcard: a moved test or script leaves
# no stale pointer behind.
# (what the documents write as a pattern or of PostgreSQL's tree)
NOT_PATHS="src/backend/access/nbtree/README sql/gpubtree--V.sql sql/gpubtree--V--W.sql"
tops=$(git ls-files 2>/dev/null | grep / | cut -d/ -f1 | sort -u | paste -sd'|')
for doc in README.md ARCHITECTURE.md; do
	for path in $(grep -oE '`[^` ]+`' "$doc" | tr -d '`' | grep -E "^($tops)/[A-Za-z0-9_./*-]*$" |
		sed -E 's/[.,:;]+$//' | sort -u); do
		case " $NOT_PATHS " in *" $path "*) continue ;; esac
		if compgen -G "$path" >/dev/null || [ -e "$path" ] || [ -e "$path.sql" ]; then
			pass
		else
			fail "$doc names $path, which is not in the tree"
		fi
	done
done

# --- 2. functions named in the documents -------------------------------------

PG_CONFIG=${PG_CONFIG:-pg_config}
server_headers=$("$PG_CONFIG" --includedir-server 2>/dev/null || true)

# defined NAME: whether NAME is defined in the tree (or is PostgreSQL's).
defined() {
	local name=$1
	grep -qwF "$name" <<<"$POSTGRES_NAMES" && return 0
	grep -rqE "^([A-Za-z_][^;=(]*[ *])?$name\(|^#define[[:space:]]+$name\(|^[A-Z_]+\($name\b" \
		--include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' src cuda test 2>/dev/null && return 0
	grep -rqiE "FUNCTION[[:space:]]+([a-z_@]+\.)?$name[[:space:]]*\(" sql 2>/dev/null && return 0
	grep -rqE "^$name\(\)|^function[[:space:]]+$name\b" scripts test 2>/dev/null && return 0
	if [ -n "$server_headers" ] && [ -d "$server_headers" ]; then
		grep -rqwE "$name" "$server_headers" 2>/dev/null && return 0
	fi
	return 1
}

for doc in README.md ARCHITECTURE.md; do
	# every `...` span, then each name() in it with empty parentheses
	names=$(grep -oE '`[^`]+`' "$doc" | grep -oE '[A-Za-z_][A-Za-z0-9_]*\(\)' |
		sed 's/()$//' | sort -u)
	for name in $names; do
		if defined "$name"; then
			pass
		else
			fail "$doc names \`$name()\`, which is defined nowhere in the tree"
		fi
	done
done

# A function named with its file, `file.c: name()` (also in a list after
# it: `file.c: a()`, `b()`), is defined in that file: a function that moved
# leaves no stale pointer behind.
for doc in README.md ARCHITECTURE.md; do
	pairs=$(grep -oE '`[A-Za-z0-9_]+\.(c|h|cu|cuh): [A-Za-z_][A-Za-z0-9_]*\(\)`' "$doc" |
		sed -E 's/^`([^:]+): ([A-Za-z0-9_]+)\(\)`$/\1 \2/' | sort -u)
	while read -r file name; do
		[ -n "$file" ] && [ "$file" != file.c ] || continue	# (the notation itself)
		grep -qwF "$name" <<<"$POSTGRES_NAMES" && { pass; continue; }
		paths=$(find src cuda -name "$file")
		if [ -z "$paths" ]; then
			fail "$doc names \`$file: $name()\`, and there is no $file"
		elif grep -qE "^([A-Za-z_][^;=(]*[ *])?$name\(|^#define[[:space:]]+$name\b|\b$name;|}[[:space:]]*$name;" $paths; then
			pass
		else
			fail "$doc names \`$file: $name()\`, which $file does not define"
		fi
	done <<<"$pairs"
done

# --- 3. settings --------------------------------------------------------------

# every setting src/common/settings.c defines has a row in README's table
for setting in $(grep -oE 'Define[A-Za-z]+Variable\("gpubtree\.[a-z_]+"' src/common/settings.c |
	grep -oE 'gpubtree\.[a-z_]+' | sort -u); do
	if grep -qE "^\| \`$setting\` \|" README.md; then
		pass
	else
		fail "README.md's settings table has no row for $setting"
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
