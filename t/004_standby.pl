# t/004_standby.pl: gpubtree indexes on a streaming standby.  A primary's
# gpubtree indexes (one built before the base backup, one after) and the
# writes made after the backup reach the standby through WAL.  On the
# standby, where the service does not run (it starts when recovery ends),
# gpubtree_status() answers and every query through the gpubtree indexes
# (index, index-only and bitmap scans, and whatever plan the planner makes,
# aggregates included) equals a sequential scan's and a plain btree's
# answers there; amcheck verifies the replayed indexes.  The standby is then
# promoted: its service starts, takes writes, and answers as the others do.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{PGOPTIONS} =
  ($ENV{PGOPTIONS} // '') . ' -c gpubtree.min_gpu_batch=2 -c gpubtree.enable_lookup=off';

my $primary = gpubtree_node('primary', allows_streaming => 1);
$primary->start;

# s has the gpubtree indexes, sb the same rows under plain btree indexes.
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE EXTENSION amcheck;
CREATE TABLE s (id int8 PRIMARY KEY, k int8, k2 int4, v float8);
CREATE TABLE sb (LIKE s INCLUDING ALL);
INSERT INTO s SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE (g * 7919) % 30000 END, g % 11, g / 3.0
	FROM generate_series(1, 30000) g;
INSERT INTO sb SELECT * FROM s;
CREATE INDEX s_k ON s USING gpubtree (k) INCLUDE (v);
CREATE INDEX sb_k ON sb (k) INCLUDE (v);
VACUUM ANALYZE s, sb;
});

$primary->backup('base');
# (its postgresql.conf, gpubtree's settings included, comes with the backup)
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# write(NODE, FROM): the same changes to s and sb; a second gpubtree index
# the first time (after the backup: it reaches the standby as WAL).
sub write_both
{
	my ($node, $from) = @_;
	my $sql = '';
	$sql .= "CREATE INDEX s_k2k ON s USING gpubtree (k2, k); CREATE INDEX sb_k2k ON sb (k2, k);\n"
	  if $from == 30000;
	for my $t ('s', 'sb')
	{
		$sql .= "INSERT INTO $t SELECT g, (g * 31) % 40000, g % 11, g FROM generate_series($from + 1, $from + 20000) g;
		UPDATE $t SET k = k + 1, v = v + 1 WHERE id % 13 = 0;
		UPDATE $t SET k = NULL WHERE id % 101 = 0;
		DELETE FROM $t WHERE id % 17 = 0 AND id > $from - 10000;\n";
	}
	$node->safe_psql('postgres', $sql . 'ANALYZE s, sb;');
}
write_both($primary, 30000);
$primary->wait_for_catchup($standby);

my @queries = (
	'SELECT k, v FROM %s WHERE k BETWEEN 100 AND 20000 ORDER BY k, v',
	"SELECT k, v FROM %s WHERE k = ANY ('{7,100,101,2500,4999,39999,NULL}') ORDER BY k, v",
	'SELECT count(*), sum(k), min(k), max(k) FROM %s WHERE k >= 0',
	'SELECT count(*), sum(k) FROM %s WHERE k BETWEEN 5000 AND 25000',
	'SELECT count(*), sum(v::numeric) FROM %s WHERE k IS NULL',
	'SELECT k2, k FROM %s WHERE k2 < 4 AND k > 10 ORDER BY k2, k');

# same(NODE, LABEL): each query on s through each gpubtree plan shape
# (which EXPLAIN must show on a gpubtree index) and as the planner likes it
# equals a sequential scan's on s and the btree's on sb.
sub same
{
	my ($node, $label) = @_;
	for my $query (@queries)
	{
		my $q = sprintf($query, 's');
		my $expected = $node->safe_psql('postgres',
			"SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q");
		is_output($node->safe_psql('postgres', 'SET enable_seqscan = off; ' . sprintf($query, 'sb')),
			$expected, "$label: btree = seqscan: $q");
		is_output($node->safe_psql('postgres', $q), $expected, "$label: planner's plan: $q");
		for my $shape (
			[ 'Index Scan', 'enable_bitmapscan = off; SET enable_indexonlyscan = off' ],
			[ 'Index Only Scan', 'enable_bitmapscan = off' ],
			[ 'Bitmap Index Scan', 'enable_indexscan = off; SET enable_indexonlyscan = off' ])
		{
			my ($scan, $set) = @$shape;
			my $setting = "SET enable_seqscan = off; SET gpubtree.enable_aggregate = off; SET $set;";
			is_output($node->safe_psql('postgres', "$setting $q"), $expected, "$label: $scan: $q");
			like($node->safe_psql('postgres', "$setting EXPLAIN (COSTS OFF) $q"),
				qr/$scan (on|using) s_k/, "$label: EXPLAIN shows a $scan on a gpubtree index: $q");
		}
	}
}

# On the standby: the indexes replayed, the service not running.
is( $standby->safe_psql(
		'postgres', q{SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_class c
		JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'gpubtree'}),
	's_k,s_k2k',
	'standby: both gpubtree indexes replicated');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'standby: in recovery');
my ($rc, $out, $err) = $standby->psql('postgres', 'SELECT * FROM gpubtree_status()');
is($rc, 0, 'standby: SELECT * FROM gpubtree_status() runs') or diag($err);
is($standby->safe_psql('postgres', 'SELECT running FROM gpubtree_status()'),
	'f', 'standby: the service waits for the end of recovery');
like($standby->safe_psql('postgres', 'SELECT status FROM gpubtree_status()'),
	qr/^not started: this server is a standby;/,
	'standby: gpubtree_status() says why the service is not started');
same($standby, 'standby');
for my $idx ('s_k', 's_k2k')
{
	($rc, $out, $err) =
	  $standby->psql('postgres', "SELECT gpubtree_index_check('$idx', true, false)");
	is($rc, 0, "standby: amcheck verifies $idx") or diag($err);
}

# More writes on the primary, replayed on a standby that has answered
# queries.
write_both($primary, 50000);
$primary->wait_for_catchup($standby);
same($standby, 'standby, after more WAL');

# Promotion: the primary goes, the standby's service starts and takes
# writes.
$primary->stop;
# A clean shutdown stops the service quietly: no FATAL line for it.
unlike(slurp_file($primary->logfile), qr/FATAL:.*terminating background worker "gpubtree service"/,
	'primary: a clean shutdown logs no FATAL for the service');
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f', 'promoted');
ok(wait_service($standby), 'promoted: the service runs');
# Without a GPU the status is information ("no NVIDIA driver on this
# machine"), not CUDA's "driver version is insufficient".
unlike($standby->safe_psql('postgres', 'SELECT status FROM gpubtree_status()'),
	qr/insufficient/, 'promoted: the status reads as information');
write_both($standby, 70000);
same($standby, 'promoted');

# The service, not nbtree, answers the promoted node's bitmap scans.
my $plan = $standby->safe_psql(
	'postgres', q{SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;
	SET max_parallel_workers_per_gather = 0; SET gpubtree.build_wait = '60s';
	SELECT count(*) FROM s WHERE k BETWEEN 0 AND 10 \g /dev/null
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT count(*) FROM (SELECT k FROM s WHERE k BETWEEN 100 AND 20000 OFFSET 0) x});
my ($scans, $nbtree) = $plan =~ /Service: (\d+) scans, .*, (\d+) answered by nbtree/;
ok(defined $scans && $scans > 0 && $nbtree == 0, 'promoted: the service answered a bitmap scan')
  or diag($plan);
is( $standby->safe_psql(
		'postgres', q{SELECT count(*) || ' problems' || coalesce(', first: ' || min(problem), '')
		FROM gpubtree_verify('s_k')}),
	'0 problems',
	"promoted: gpubtree_verify: the mirror of s_k holds the index's entries");

$standby->stop;
done_testing();
