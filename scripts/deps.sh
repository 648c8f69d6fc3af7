#!/usr/bin/env bash
# What building and testing gpubtree needs, checked on this machine; `make
# demo`, `make test-all` and .ci/run run it first.
#
#   bash scripts/deps.sh
#
# Each need is checked by the file or command the build or a test really
# uses, never by a package that a half-installed PostgreSQL already has:
# Debian's postgresql-client-15 ships pg_config and pgxs.mk, but postgres.h
# comes only with postgresql-server-dev-15.  As root, the missing Debian
# packages are installed; as any other user the script stops with one line
# naming them.  Prints nothing when all is there.
#
# Environment: PG_CONFIG (as for make; default pg_config), GBT_PG_MAJOR (the
# PostgreSQL version to install when there is no pg_config; default 15),
# GBT_APT_GET (the apt-get command; the tests replace it).
set -euo pipefail

PG_CONFIG=${PG_CONFIG:-pg_config}
APT_GET=${GBT_APT_GET:-apt-get}

# need PACKAGE WHAT: PACKAGE provides WHAT, which is not here.
need() {
	local p
	absent+=("$1:$2")
	for p in "${packages[@]}"; do [ "$p" = "$1" ] && return 0; done
	packages+=("$1")
}

# have_file PACKAGE PATH... / have_exe PACKAGE PATH... / have_cmd PACKAGE CMD...
have_file() { local p=$1 f; shift; for f; do [ -f "$f" ] || need "$p" "$(basename "$f")"; done; }
have_exe() { local p=$1 f; shift; for f; do [ -x "$f" ] || need "$p" "$(basename "$f")"; done; }
have_cmd() { local p=$1 c; shift; for c; do command -v "$c" >/dev/null 2>&1 || need "$p" "$c"; done; }

# check: fill packages (to install) and absent (PACKAGE:WHAT, for messages).
check() {
	packages=()
	absent=()
	local major=${GBT_PG_MAJOR:-15} version bindir inc pkglib share pgxs
	if version=$("$PG_CONFIG" --version 2>/dev/null); then
		# "PostgreSQL 15.20 (Debian ...)" -> 15
		version=${version#PostgreSQL }
		major=${version%%[!0-9]*}
		bindir=$("$PG_CONFIG" --bindir)
		inc=$("$PG_CONFIG" --includedir-server)
		pkglib=$("$PG_CONFIG" --pkglibdir)
		share=$("$PG_CONFIG" --sharedir)
		pgxs=$("$PG_CONFIG" --pgxs)
	else
		# No pg_config: Debian's layout for that version, so that everything
		# else missing is named in the same line.
		need "postgresql-server-dev-$major" "$PG_CONFIG"
		bindir=/usr/lib/postgresql/$major/bin
		inc=/usr/include/postgresql/$major/server
		pkglib=/usr/lib/postgresql/$major/lib
		share=/usr/share/postgresql/$major
		pgxs=$pkglib/pgxs/src/makefiles/pgxs.mk
	fi

	# The build: server headers and PGXS, a C compiler with the C library's
	# headers, make.
	have_file "postgresql-server-dev-$major" "$inc/postgres.h"
	have_file "postgresql-client-$major" "$pgxs"
	have_cmd gcc gcc
	if command -v gcc >/dev/null 2>&1; then
		printf '#include <stdio.h>\n#include <math.h>\n' | gcc -E -x c - -o /dev/null 2>/dev/null ||
			need libc6-dev "stdio.h"
	else
		have_file libc6-dev /usr/include/stdio.h
	fi
	have_cmd make make

	# The tests and the demo: a server and its tools (pgbench and amcheck are
	# part of Debian's postgresql-15), the regression drivers, psql, python3
	# for the differential test, git for the build test's copy of the tree.
	have_exe "postgresql-$major" "$bindir/postgres" "$bindir/initdb" "$bindir/pg_ctl" "$bindir/pgbench"
	have_file "postgresql-$major" "$pkglib/amcheck.so" "$share/extension/amcheck.control"
	have_exe "postgresql-client-$major" "$bindir/psql" \
		"$pkglib/pgxs/src/test/regress/pg_regress" \
		"$pkglib/pgxs/src/test/isolation/pg_isolation_regress" \
		"$pkglib/pgxs/src/test/isolation/isolationtester"
	have_cmd python3 python3
	have_cmd git git
	# The TAP tests (t/*.pl): prove, PostgreSQL's Perl test modules, and
	# IPC::Run, with which those modules run every program.
	have_cmd perl prove
	have_file "postgresql-client-$major" "$pkglib/pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm"
	perl -MIPC::Run -e 1 >/dev/null 2>&1 || need libipc-run-perl "IPC::Run"
	# As root, test/lib.sh creates the user that runs the test clusters.
	if [ "$(id -u)" = 0 ]; then
		have_cmd passwd useradd
	fi
	return 0
}

# what: the missing files and commands, "postgres.h, make".
what() { local a out=; for a in "${absent[@]}"; do out+="${out:+, }${a#*:}"; done; echo "$out"; }

check
[ ${#packages[@]} = 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "gpubtree: missing ${packages[*]} (not found: $(what)); run as root: apt-get install ${packages[*]}" >&2
	exit 1
fi

echo "gpubtree: installing ${packages[*]} (not found: $(what))"
log=$(mktemp /tmp/gpubtree-deps.XXXXXX.log)
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists yet; a failed update may still leave
# usable ones, so only the install decides.
$APT_GET update -qq >"$log" 2>&1 || echo "gpubtree: apt-get update failed (see $log); trying the install anyway" >&2
if ! $APT_GET install -y -qq --no-install-recommends "${packages[@]}" >>"$log" 2>&1; then
	tail -20 "$log" >&2
	echo "gpubtree: apt-get install ${packages[*]} failed (log: $log)" >&2
	exit 1
fi
rm -f "$log"

tried=("${packages[@]}")
check
if [ ${#packages[@]} != 0 ]; then
	echo "gpubtree: still missing after apt-get install ${tried[*]}: $(what)" >&2
	exit 1
fi
echo "gpubtree: installed ${tried[*]}"
