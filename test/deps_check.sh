#!/usr/bin/env bash
# The dependency check (scripts/deps.sh) must find what is really missing.
# It runs as an unprivileged user under simulated absences (pg_config
# wrappers that point at empty or partial directories, a PATH without some
# commands) and must fail with one line naming the right packages, and pass
# with everything present.  The half-installed case (server headers missing
# while pg_config and pgxs.mk are there) is a fresh Debian 12's.  As root it also
# checks that the install path asks apt-get (a stand-in here) for the
# package and still fails when the file did not come.  Needs no cluster.
set -uo pipefail
cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-pg_config}
REAL_PG_CONFIG=$(command -v "$PG_CONFIG") || { echo "no $PG_CONFIG"; echo "0 passed, 1 failed"; exit 1; }
MAJOR=$("$REAL_PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
SERVER=postgresql-$MAJOR SERVER_DEV=postgresql-server-dev-$MAJOR CLIENT=postgresql-client-$MAJOR

T=$(mktemp -d /tmp/gpubtree-deps.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
# A copy, so that an unprivileged user can read it wherever the checkout is.
cp scripts/deps.sh "$T/deps.sh"
mkdir "$T/empty"

# user_sh CMD: run CMD in sh as an unprivileged user, from / (the checkout
# may be in a directory that user cannot enter, and pg_config resolves its
# own path from the current directory).
user_sh() {
	if [ "$(id -u)" = 0 ]; then
		su nobody -s /bin/sh -c "cd / && $1"
	else
		sh -c "$1"
	fi
}

# as_user ENV...: the check as that user with ENV set; prints its output,
# returns its status.
as_user() { user_sh "env ${*:-} bash $T/deps.sh" 2>&1; }

# wrapper NAME OPTION DIR: a pg_config that answers OPTION with DIR and
# everything else as the real one.
wrapper() {
	cat >"$T/$1" <<SH
#!/bin/sh
[ "\$1" = "$2" ] && { echo "$3"; exit 0; }
exec "$REAL_PG_CONFIG" "\$@"
SH
	chmod 755 "$T/$1"
}

# farm DIR CMD...: a directory of links to every command the user finds on
# PATH, but CMDs (made by the user: some PATH directories may be root's).
farm() {
	local dir=$T/$1; shift
	mkdir "$dir"
	[ "$(id -u)" = 0 ] && chown nobody "$dir"
	user_sh "IFS=:; for d in \$PATH; do [ -d \"\$d\" ] && cp -sn \"\$d\"/* '$dir'/ 2>/dev/null; done; cd '$dir' && rm -f $*"
}

passed=0
failed=0
# expect NAME STATUS OUTPUT NAMED [NOT_NAMED...]: the check failed with one
# line that names every package of NAMED (space-separated) in its
# apt-get install, and none of NOT_NAMED.
expect() {
	local name=$1 rc=$2 out=$3 named=$4 p ok=1 install
	shift 4
	install=" ${out##*apt-get install} "
	[ "$rc" != 0 ] || ok=0
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || ok=0
	case $out in "gpubtree: missing "*"; run as root: apt-get install "*) ;; *) ok=0 ;; esac
	for p in $named; do case $install in *" $p "*) ;; *) ok=0 ;; esac; done
	for p; do case $install in *" $p "*) ok=0 ;; esac; done
	if [ $ok = 1 ]; then
		echo "ok: $name: $out"
		passed=$((passed + 1))
	else
		echo "FAILED: $name: exit $rc, expected one line naming $named${*:+ and not $*}; got:"
		printf '%s\n' "$out" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

# 1. Everything present: passes, silently.
out=$(as_user PG_CONFIG="$REAL_PG_CONFIG"); rc=$?
if [ $rc = 0 ] && [ -z "$out" ]; then
	echo "ok: everything present"
	passed=$((passed + 1))
else
	echo "FAILED: everything present: exit $rc:"; printf '%s\n' "$out" | sed 's/^/    /'
	failed=$((failed + 1))
fi

# 2. Half-installed: pg_config and pgxs.mk there, no server headers.
wrapper noheaders --includedir-server "$T/empty"
if [ -f "$("$T/noheaders" --pgxs)" ]; then
	out=$(as_user PG_CONFIG="$T/noheaders"); rc=$?
	expect "server headers missing, pgxs.mk present" $rc "$out" "$SERVER_DEV" "$SERVER" "$CLIENT" make gcc python3
else
	echo "FAILED: the half-installed case needs pgxs.mk at $("$T/noheaders" --pgxs)"
	failed=$((failed + 1))
fi

# 3. The server binary missing (everything else of bindir there).
mkdir "$T/bin"
for f in "$("$REAL_PG_CONFIG" --bindir)"/*; do [ "${f##*/}" = postgres ] || ln -s "$f" "$T/bin/"; done
wrapper nopostgres --bindir "$T/bin"
out=$(as_user PG_CONFIG="$T/nopostgres"); rc=$?
expect "server binary missing" $rc "$out" "$SERVER" "$SERVER_DEV" "$CLIENT"

# 4. The regression driver missing.
mkdir -p "$T/lib/pgxs/src/test"
for f in "$("$REAL_PG_CONFIG" --pkglibdir)"/*; do [ "${f##*/}" = pgxs ] || ln -s "$f" "$T/lib/"; done
ln -s "$("$REAL_PG_CONFIG" --pkglibdir)/pgxs/src/test/isolation" "$T/lib/pgxs/src/test/"
wrapper noregress --pkglibdir "$T/lib"
out=$(as_user PG_CONFIG="$T/noregress"); rc=$?
expect "pg_regress missing" $rc "$out" "$CLIENT" "$SERVER" "$SERVER_DEV"

# 5. Commands missing from PATH: make and python3.
farm nomake make python3
out=$(as_user PATH="$T/nomake" PG_CONFIG="$REAL_PG_CONFIG"); rc=$?
expect "make and python3 not on PATH" $rc "$out" "make python3" gcc git "$SERVER_DEV" "$SERVER"

# 6. No pg_config at all: the server headers' package brings it.
farm nopgconfig pg_config
out=$(as_user PATH="$T/nopgconfig" PG_CONFIG=pg_config); rc=$?
expect "pg_config not on PATH" $rc "$out" "$SERVER_DEV" make python3

# 7. Perl's IPC::Run missing, which the TAP tests need (a perl on PATH that
#    cannot load it).
farm noipcrun perl
cat >"$T/noipcrun/perl" <<SH
#!/bin/sh
case "\$*" in *IPC::Run*) exit 2 ;; esac
exec $(command -v perl) "\$@"
SH
chmod 755 "$T/noipcrun/perl"
out=$(as_user PATH="$T/noipcrun" PG_CONFIG="$REAL_PG_CONFIG"); rc=$?
expect "IPC::Run missing" $rc "$out" libipc-run-perl "$SERVER" "$SERVER_DEV" "$CLIENT" make

# 8. As root, a missing package is installed (apt-get is a stand-in that
#    installs nothing): the check asks for it, then fails because the file
#    is still missing.
if [ "$(id -u)" = 0 ]; then
	printf '#!/bin/sh\necho "$*" >>%s/apt.log\n' "$T" >"$T/apt-get"
	chmod 755 "$T/apt-get"
	out=$(PG_CONFIG="$T/noheaders" GBT_APT_GET="$T/apt-get" bash "$T/deps.sh" 2>&1); rc=$?
	if [ $rc != 0 ] && grep -q "^install .* $SERVER_DEV\$" "$T/apt.log" &&
		! grep -q "^install .* $SERVER\b" "$T/apt.log" &&
		grep -q "still missing after apt-get install $SERVER_DEV: postgres.h" <<<"$out"; then
		echo "ok: as root: apt-get install $SERVER_DEV, then still missing"
		passed=$((passed + 1))
	else
		echo "FAILED: as root (exit $rc): apt-get was asked:"; sed 's/^/    /' "$T/apt.log" 2>/dev/null
		printf '%s\n' "$out" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
else
	echo "as root: SKIPPED (not root)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
