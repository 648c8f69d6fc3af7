# t/007_upgrade.pl: ALTER EXTENSION gpubtree UPDATE: an installation of
# every earlier version (each script sql/gpubtree--V.sql, and each version an
# update script leads to), with live indexes and their mirrors, is updated
# along the scripts to the default version; then its extension objects are
# those of a fresh installation (every member, described, and what each
# function returns), its capture trigger is there, and its answers after
# deletes equal the ordinary plan's.  A new version is covered by its
# scripts alone.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = "$FindBin::RealBin/..";
my ($default) = slurp_file("$root/gpubtree.control") =~ /^default_version = '(.*)'/m;

my $node = gpubtree_node('upgrade');
$node->start;

# members(DB): the extension's objects, described, one a line.
sub members
{
	return $node->safe_psql(
		$_[0], q{SELECT pg_describe_object(classid, objid, objsubid) FROM pg_depend
		WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpubtree') ORDER BY 1});
}

# agree(DB): count and sum over a range, the node's against the ordinary plan's.
sub agree
{
	return node_vs_plan($node, $_[0],
		'SELECT count(*) || \':\' || coalesce(sum(v), 0) FROM u WHERE k BETWEEN 100 AND 40000');
}

sub version_of
{
	return $node->safe_psql($_[0], "SELECT extversion FROM pg_extension WHERE extname = 'gpubtree'");
}

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION gpubtree');
is(version_of('fresh'), $default, 'a fresh installation is the default version');

# Every earlier version: those with a script of their own, and those an
# update script leads to (installed along the scripts).
my %versions;
for my $script (glob("$root/sql/gpubtree--*.sql"))
{
	my ($name) = $script =~ /gpubtree--(.*)\.sql$/;
	$versions{$_} = 1 for split /--/, $name;
}
delete $versions{$default};

for my $from (sort keys %versions)
{
	(my $db = "from_$from") =~ s/\./_/g;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql(
		$db, qq{
CREATE EXTENSION gpubtree VERSION '$from';
CREATE TABLE u (k int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO u SELECT g, g % 1000 FROM generate_series(1, 50000) g;
CREATE INDEX u_k ON u USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE u;
});
	is(agree($db), 'same', "$from: answers before the update");
	ok($node->safe_psql($db, 'SELECT count(*) FROM gpubtree_mirrors()') >= 1,
		"$from: the library answers the version's gpubtree_mirrors()");
	$node->safe_psql($db, 'ALTER EXTENSION gpubtree UPDATE');
	is(version_of($db), $default, "$from: updated to the default version");
	is(members($db), members('fresh'), "$from: the objects of a fresh installation");
	is( $node->safe_psql(
			$db, q{SELECT string_agg(proname || ': ' || pg_get_function_result(oid), ';'
			ORDER BY proname, pg_get_function_identity_arguments(oid)) FROM pg_proc
			WHERE proname LIKE 'gpubtree\_%' AND pronamespace = 'public'::regnamespace}),
		$node->safe_psql(
			'fresh', q{SELECT string_agg(proname || ': ' || pg_get_function_result(oid), ';'
			ORDER BY proname, pg_get_function_identity_arguments(oid)) FROM pg_proc
			WHERE proname LIKE 'gpubtree\_%' AND pronamespace = 'public'::regnamespace}),
		"$from: the functions return what a fresh installation's do");
	is( $node->safe_psql(
			$db, q{SELECT bool_and((device IS NULL) = (engine = 'cpu')) FROM gpubtree_mirrors()
			WHERE index = 'u_k'::regclass AND bytes IS NOT NULL}),
		't',
		"$from: gpubtree_mirrors() names the mirror's device (none on the CPU engine)");
	$node->safe_psql($db, 'DELETE FROM u WHERE k % 3 = 0; UPDATE u SET v = v + 1 WHERE k % 5 = 0');
	is(agree($db), 'same', "$from: answers after the update and deletes");
	is( $node->safe_psql(
			$db, q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'u'::regclass
			AND tgfoid = 'gpubtree_capture()'::regprocedure AND tgenabled = 'A'}),
		1,
		"$from: the capture trigger");
	is($node->safe_psql($db, "SELECT count(*) FROM gpubtree_verify('u_k')"),
		0, "$from: the mirror holds the index");
}

$node->stop;
done_testing();
