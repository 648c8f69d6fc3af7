#!/usr/bin/env bash
# test/citus/build_citus.sh SOURCE: build and install Citus from the source
# tree SOURCE (a release's, e.g. v13.2.2, or a checkout) into the PostgreSQL
# that pg_config names.  Citus is not in Debian's registry: the caller
# fetches its source.  The tree itself is left as it is: the build runs on a
# copy, to which this applies one compatibility fix where it is needed:
# PostgreSQL 15.20 and later export have_createdb_privilege(), which Citus
# releases for 15 define once more as a static function
# (src/include/pg_version_compat.h); the copy's is renamed.  As root, the
# build's Debian packages are installed first when missing.
# CITUS_MINIMAL=1 (a machine with no package registry, such as the GPU
# machine with its PostgreSQL bundle): no packages, and Citus without libcurl,
# lz4 and zstd (statistics collection and compressed columnar storage).
set -euo pipefail
SRC=${1:?usage: test/citus/build_citus.sh CITUS_SOURCE_TREE}
PG_CONFIG=${PG_CONFIG:-pg_config}
[ -f "$SRC/configure" ] || { echo "$SRC: no Citus source tree (configure missing)" >&2; exit 1; }

DEPS="libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libselinux1-dev libpam0g-dev"
CONFIGURE_FLAGS=
missing=
if [ "${CITUS_MINIMAL:-}" = 1 ]; then
	CONFIGURE_FLAGS="--without-libcurl --without-lz4 --without-zstd"
else
	missing=$(for p in $DEPS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
fi
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "installing Citus's build packages: $(echo $missing)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	else
		echo "missing Debian packages (install them as root): $(echo $missing)" >&2
		exit 1
	fi
fi

BUILD=$(mktemp -d /tmp/citus-build.XXXXXX)
trap 'rm -rf "$BUILD"' EXIT
cp -a "$SRC/." "$BUILD/"
compat=$BUILD/src/include/pg_version_compat.h
server=$("$PG_CONFIG" --includedir-server)
if grep -q '^have_createdb_privilege(void)' "$compat" &&
	grep -q 'have_createdb_privilege' "$server/commands/dbcommands.h"; then
	echo "applying the have_createdb_privilege() fix to the build's copy"
	# the server's declaration first, then calls go to the renamed copy
	perl -0pi -e 's/static inline bool\nhave_createdb_privilege\(void\)/#include "commands\/dbcommands.h"\n#define have_createdb_privilege() citus_have_createdb_privilege()\nstatic inline bool\ncitus_have_createdb_privilege(void)/' "$compat"
fi
cd "$BUILD"
./configure PG_CONFIG="$PG_CONFIG" $CONFIGURE_FLAGS >configure.log 2>&1 || { tail -20 configure.log; exit 1; }
make -s -j"$(nproc)" >make.log 2>&1 || { grep -E 'error' make.log | head -20; exit 1; }
make -s install >install.log 2>&1 || { tail -20 install.log; exit 1; }
echo "Citus $(grep -oE "PACKAGE_VERSION='[^']*'" config.log | head -1 | cut -d"'" -f2) installed into $("$PG_CONFIG" --pkglibdir)"
