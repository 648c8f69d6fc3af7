# t/009_db_commands.pl: background mirror builds never hold a database:
# while a build worker is connected to it, CREATE DATABASE ... TEMPLATE,
# ALTER DATABASE ... RENAME and SET TABLESPACE and DROP DATABASE succeed,
# as they do while autovacuum works there; the build is asked for again by
# a later query, and built.  A user who may not run the command calls no
# build off.  The builds are held connected with
# gpubtree.debug_build_delay.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = gpubtree_node('db_commands');
# CREATE INDEX starts the build worker these commands meet (not inside it).
$node->append_conf('postgresql.conf', "gpubtree.build_after_create = background\n");
$node->start;
my $ts = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql(
	'postgres', qq{
CREATE DATABASE src;
CREATE ROLE stranger LOGIN CREATEDB;
CREATE TABLESPACE ts LOCATION '$ts';
ALTER SYSTEM SET gpubtree.debug_build_delay = '60s';
SELECT pg_reload_conf();
});
$node->safe_psql(
	'src', q{
CREATE EXTENSION gpubtree;
CREATE TABLE t (k int8, v int8);
INSERT INTO t SELECT g, g FROM generate_series(1, 100000) g;
CREATE INDEX t_k ON t USING gpubtree (k) INCLUDE (v);
});

# workers(DB): the build workers connected to database DB.
sub workers
{
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'gpubtree build' AND datname = '$_[0]'");
}

# start_build(DB): a query asks for the mirror without waiting for it;
# whether the build's worker connected within 10 s.
sub start_build
{
	my ($db) = @_;
	$node->safe_psql($db,
		"SET gpubtree.build_wait = 0; SET gpubtree.build_on_scan = on; SELECT gpubtree_count('t_k', 1, 10)");
	for (1 .. 100)
	{
		return 'yes' if workers($db) >= 1;
		usleep(100_000);
	}
	return 'no';
}

# run(NAME, SQL, DB): SQL succeeds while a build is connected to database
# DB, and no build worker is left there.
sub run
{
	my ($name, $sql, $db) = @_;
	is(start_build($db), 'yes', "$name: a build is connected");
	my ($rc, $out, $err) = $node->psql('postgres', $sql);
	is($rc, 0, "$name: succeeds") or diag($err);
	is(workers($db), 0, "$name: no build worker left");
}

# Someone who may not run the commands calls no build off.
is(start_build('src'), 'yes', 'a build is connected');
my ($rc, $out, $err) =
  $node->psql('postgres', 'DROP DATABASE src', extra_params => [ '-U', 'stranger' ]);
like($err, qr/must be owner/, 'a stranger may not drop the database');
($rc, $out, $err) =
  $node->psql('postgres', 'CREATE DATABASE copy3 TEMPLATE src', extra_params => [ '-U', 'stranger' ]);
like($err, qr/permission denied/, 'nor copy it');
is(workers('src'), 1, "the stranger's commands left the build alone");

run('CREATE DATABASE ... TEMPLATE', 'CREATE DATABASE copy TEMPLATE src', 'src');
is($node->safe_psql('copy', 'SELECT count(*) FROM t'), 100000, 'the copy has the table');
run('CREATE DATABASE ... TEMPLATE (FILE_COPY)', 'CREATE DATABASE copy2 TEMPLATE src STRATEGY FILE_COPY', 'src');
run('ALTER DATABASE ... RENAME', 'ALTER DATABASE src RENAME TO src2', 'src');
run('ALTER DATABASE ... SET TABLESPACE', 'ALTER DATABASE src2 SET TABLESPACE ts', 'src2');
run('ALTER DATABASE ... RENAME back', 'ALTER DATABASE src2 RENAME TO src', 'src2');
run('DROP DATABASE', 'DROP DATABASE copy', 'copy');

# The builds called off are asked for again by a later query, and done.
$node->safe_psql('postgres', 'ALTER SYSTEM RESET gpubtree.debug_build_delay; SELECT pg_reload_conf()');
is( $node->safe_psql(
		'src', "SET gpubtree.build_wait = '60s'; SELECT gpubtree_count('t_k', 1, 10);
		SELECT state FROM gpubtree_mirrors() WHERE index = 't_k'::regclass"),
	"10\ncurrent",
	'built after all');

$node->stop;
done_testing();
