# t/006_restore.pl: dump and restore with parallel jobs: pg_restore -j
# creates a table's gpubtree indexes in several sessions at once, each of
# which makes sure the table has its capture trigger.  Every restored table
# ends with exactly one (internal, firing ALWAYS), and deletes after the
# restore are counted right: the node's answers equal the ordinary plan's
# and gpubtree_verify() finds nothing wrong.  Several rounds (ROUNDS, 4),
# since the race is timing's.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $rounds = $ENV{ROUNDS} // 4;
my $node = gpubtree_node('restore');
$node->start;
my $dir = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE TABLE r (k int8, v int8, w int8, x int8);
INSERT INTO r SELECT g, g % 1000, -g, g * 7 FROM generate_series(1, 50000) g;
CREATE INDEX r_k ON r USING gpubtree (k) INCLUDE (v);
CREATE INDEX r_w ON r USING gpubtree (w);
CREATE INDEX r_x ON r USING gpubtree (x) INCLUDE (v);
CREATE INDEX r_kw ON r USING gpubtree (k, w);
CREATE TABLE rp (k int8, v int8, d int) PARTITION BY RANGE (d);
CREATE TABLE rp_1 PARTITION OF rp FOR VALUES FROM (0) TO (10);
CREATE TABLE rp_2 PARTITION OF rp FOR VALUES FROM (10) TO (20);
INSERT INTO rp SELECT g, g, g % 20 FROM generate_series(1, 20000) g;
CREATE INDEX rp_k ON rp USING gpubtree (k) INCLUDE (v);
CREATE INDEX rp_v ON rp USING gpubtree (v);
});
$node->command_ok([ 'pg_dump', '-Fd', '-f', "$dir/dump", '-d', $node->connstr('postgres') ],
	'pg_dump -Fd');

# triggers(DB): "table:count:enabled" of every table's capture triggers.
sub triggers
{
	return $node->safe_psql(
		$_[0], q{SELECT string_agg(c.relname || ':' || count || ':' || coalesce(en, '-'), ' ' ORDER BY c.relname)
		FROM pg_class c
		CROSS JOIN LATERAL (SELECT count(*), string_agg(t.tgenabled::text || t.tgisinternal::text, ',') AS en
							FROM pg_trigger t WHERE t.tgrelid = c.oid
							AND t.tgfoid = 'gpubtree_capture()'::regprocedure) x
		WHERE c.relkind = 'r' AND c.relname LIKE 'r%'});
}

# agree(DB): count and sum over a range, the node's against the ordinary plan's.
sub agree
{
	return node_vs_plan($node, $_[0],
		'SELECT count(*) || \':\' || coalesce(sum(v), 0) FROM r WHERE k BETWEEN 100 AND 40000');
}

for my $round (1 .. $rounds)
{
	my $db = "restored_$round";
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->command_ok(
		[ 'pg_restore', '-j', 4, '-d', $node->connstr($db), "$dir/dump" ],
		"round $round: pg_restore -j 4");
	is(triggers($db), 'r:1:Atrue rp_1:1:Atrue rp_2:1:Atrue', "round $round: one capture trigger per table");
	$node->safe_psql($db, 'VACUUM ANALYZE r');
	is(agree($db), 'same', "round $round: answers after the restore");
	$node->safe_psql($db, 'DELETE FROM r WHERE k % 3 = 0; UPDATE r SET v = v + 1 WHERE k % 5 = 0');
	is(agree($db), 'same', "round $round: answers after deletes");
	is($node->safe_psql($db, "SELECT count(*) FROM gpubtree_verify('r_k')"),
		0, "round $round: the mirror holds the index");

	# Dropping every gpubtree index of a table drops its trigger too.
	$node->safe_psql($db, 'DROP INDEX r_k, r_w, r_x, r_kw');
	is($node->safe_psql($db, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'r'::regclass"),
		0, "round $round: no trigger after the last index");
}

$node->stop;
done_testing();
