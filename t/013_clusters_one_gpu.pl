# t/013_clusters_one_gpu.pl: several PostgreSQL clusters on one GPU (one per
# tenant is common).  Three clusters started at once all get the GPU; each
# service's automatic memory limit is 3/4 of what the GPU had free when it
# started, so memory another cluster's mirrors hold is not promised again:
# a fourth cluster started after the first built a mirror has a limit at
# most 3/4 of (the GPU's memory - that mirror's bytes on the GPU).  Every
# cluster answers its own query on the GPU, equal to the ordinary plan.
# Needs a GPU: without one the whole test is SKIPPED.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my @nodes = map { gpubtree_node("tenant$_") } 1 .. 3;
$_->start for @nodes;
foreach my $n (@nodes)
{
	$n->safe_psql('postgres', 'CREATE EXTENSION gpubtree');
	wait_service($n);
}

my $first = service_stat($nodes[0], 'gpu');
if ($first ne 't')
{
	my $why = service_stat($nodes[0], 'status');
	$_->stop('immediate') for @nodes;
	plan skip_all => "SKIPPED: no GPU for the service ($why)";
}

foreach my $i (0 .. $#nodes)
{
	my $n = $nodes[$i];
	is(service_stat($n, 'gpu'), 't',
		"cluster $i of three started at once runs on the GPU: "
		  . service_stat($n, 'status'));
	like(service_stat($n, 'memory_limit_source'),
		qr/free memory at start/, "cluster $i: the limit is a share of the free memory");
}

# The first cluster builds a mirror of 2^23 rows (about 80 MB on the GPU:
# keys and values narrowed to the widths they need).
my $rows = 1 << 23;
$nodes[0]->safe_psql(
	'postgres', qq{
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT i, i % 1000 FROM generate_series(1, $rows) i;
CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE g;
});
ok( $nodes[0]->poll_query_until(
		'postgres',
		"SELECT gpubtree_count('g_k', 0, 0) IS NOT NULL AND EXISTS "
		  . "(SELECT FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass AND current)"),
	'the first cluster built its mirror');
my $held = $nodes[0]->safe_psql('postgres',
	"SELECT sum(device_bytes) FROM gpubtree_mirrors()");
cmp_ok($held, '>', 64 * 1024 * 1024, "the mirror holds $held bytes on the GPU");

my $late = gpubtree_node('tenant4');
$late->start;
$late->safe_psql('postgres', 'CREATE EXTENSION gpubtree');
wait_service($late);
is(service_stat($late, 'gpu'), 't', 'a cluster started later runs on the GPU');
my $total = $late->safe_psql('postgres',
	"SELECT device_memory FROM gpubtree_device_info()");
my $limit = service_stat($late, 'memory_limit');
cmp_ok($limit, '<=', ($total - $held) / 4 * 3,
	"its limit ($limit) leaves out what the first cluster holds ($held of $total)");

# Each cluster answers its own range count on the GPU.
foreach my $n (@nodes[1 .. 2], $late)
{
	$n->safe_psql(
		'postgres', q{
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT i, i % 7 FROM generate_series(1, 200000) i;
CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE g;
});
}
foreach my $n ($nodes[0], @nodes[1 .. 2], $late)
{
	my $name = $n->name;
	my $q = 'SELECT count(*), sum(v) FROM g WHERE k BETWEEN 1000 AND 150000';
	is(node_vs_plan($n, 'postgres', $q), 'same', "$name: the answer is the ordinary plan's");
	like(
		$n->safe_psql('postgres',
			"SET gpubtree.build_wait = '60s'; SET enable_seqscan = off; "
			  . "SET enable_indexscan = off; SET enable_indexonlyscan = off; "
			  . "SET enable_bitmapscan = off; EXPLAIN (ANALYZE, COSTS OFF) $q"),
		qr/Answered by: GPU service/,
		"$name: the GPU service answered");
}

$_->stop for @nodes, $late;
done_testing();
