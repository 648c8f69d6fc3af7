# Sourced on the GPU machine (no PostgreSQL, no package registry there):
# unpacks the PostgreSQL 15 bundle carried in .gpu/ (copy it there from
# ../shared/gpu/pg15-bundle.tar.gz; the folder is git-ignored, so name `.gpu`
# in the device tool's carry) and puts it on PATH.  Its binaries expect to
# live under /tmp/pgbundle/pg15.
#
#   . test/gpu/setup_pg_bundle.sh && make install PG_CONFIG=$PG_CONFIG
#
# test/gpu/run.sh sources it for every benchmark that needs PostgreSQL.
if [ ! -x /tmp/pgbundle/pg15/bin/postgres ]; then
	mkdir -p /tmp/pgbundle && tar xzf .gpu/pg15-bundle.tar.gz -C /tmp/pgbundle || return 1
fi
export PATH=/tmp/pgbundle/pg15/bin:$PATH
export PG_CONFIG=/tmp/pgbundle/pg15/bin/pg_config
# The TAP tests (t/*.pl) need Perl's IPC::Run and PostgreSQL's
# PostgreSQL::Test modules, which the bundle lacks (and that machine may):
# where .gpu/perl holds them (IPC::Run's IPC/ folder and PGXS's
# src/test/perl/PostgreSQL/ folder, copied from a Debian machine with
# libipc-run-perl), Perl finds them there.
if [ -d .gpu/perl ]; then
	export PERL5LIB=$PWD/.gpu/perl${PERL5LIB:+:$PERL5LIB}
fi
