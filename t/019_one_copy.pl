# t/019_one_copy.pl: one copy of each byte.  At every moment of an
# index's life (after CREATE INDEX, after an UPDATE of 1 % of the rows, a
# DELETE of 1 %, VACUUM, a bulk INSERT), with the chunk sums
# left as the writes made them dirty (gpubtree.debug_tidy_pause), every
# aggregate shape (plain count/sum/min/max at three widths, filtered on the
# INCLUDE column, grouped by buckets of the key) equals the ordinary plan's,
# and the mirror's bytes, host and device together, stay at most the
# index's bytes an entry.  On a GPU: plain aggregates make the dirty chunks
# of their ranges on the host and copy nothing to the device (its bytes
# stay the build's); a filtered one copies the columns there, and they are
# given back once unread for 10 s (engine.h: drop_idle_copies), then
# copied again by the next.  The GPU's checks are SKIPPED on the CPU
# engine; the rest runs everywhere.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = gpubtree_node('one_copy');
$node->append_conf('postgresql.conf',
	"autovacuum = off\ngpubtree.debug_tidy_pause = on\n");
$node->start;

# 2^18 rows: a whole-table range is past the GPU's host scan bound
# (GBT_HOST_SCAN_MAX, 65536 entries), so that a scan of it would go to the
# device.
my $rows = 1 << 18;
$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION gpubtree;
CREATE TABLE c (k int8, v int8);
INSERT INTO c SELECT g, (g * 7919) % 1000 FROM generate_series(1, $rows) g;
CREATE INDEX c_k ON c USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE c;
});
my $on_gpu = service_stat($node, 'gpu') eq 't';

# The shapes, each at three widths of the key (0.1 %, 10 %, all).
my @widths = ([ 1000, 1000 + int($rows / 1000) ], [ 5000, 5000 + $rows / 10 ],
	[ 0, 10 * $rows ]);
my %plain = (
	count => 'count(*)',
	sum => 'sum(v)',
	min => 'min(v)',
	max => 'max(v)',
	all => q{count(*) || ':' || sum(v) || ':' || min(v) || ':' || max(v)});
my %shape;
foreach my $w (@widths)
{
	my ($lo, $hi) = @$w;
	$shape{"$_ of k in [$lo, $hi]"} =
	  "SELECT $plain{$_} FROM c WHERE k BETWEEN $lo AND $hi"
	  foreach keys %plain;
}
my %filtered = (
	"sum of v > 500 over all" =>
	  "SELECT count(*) || ':' || sum(v) FROM c WHERE k BETWEEN 0 AND $rows AND v > 500",
	"buckets of the key" =>
	  "SELECT string_agg(b || '=' || n || '/' || s, ',' ORDER BY b) FROM "
	  . "(SELECT k / 10000 AS b, count(*) AS n, sum(v) AS s FROM c "
	  . "WHERE k BETWEEN 0 AND $rows GROUP BY 1) x");

sub mirror_row
{
	my ($expr) = @_;
	return $node->safe_psql('postgres',
		"SELECT $expr FROM gpubtree_mirrors() WHERE index = 'c_k'::regclass AND current");
}

sub check_shapes
{
	my ($moment, %shapes) = @_;
	foreach my $name (sort keys %shapes)
	{
		is(node_vs_plan($node, 'postgres', $shapes{$name}),
			'same', "$moment: $name equals the ordinary plan");
	}
	return;
}

# At most the index's bytes an entry, host and device together.
sub check_bytes
{
	my ($moment) = @_;
	my ($per_entry, $index) = split /\|/, mirror_row(
		"round(bytes_per_entry::numeric, 2), "
		  . "round(pg_relation_size('c_k')::numeric / entries, 2)");
	cmp_ok($per_entry, '<=', $index,
		"$moment: the mirror holds $per_entry bytes an entry, the index $index");
	return;
}

ok( $node->poll_query_until(
		'postgres',
		"SELECT EXISTS (SELECT FROM gpubtree_mirrors() WHERE index = 'c_k'::regclass AND current)"),
	'the mirror is built');
my $device_built = mirror_row('device_bytes');
check_shapes('after CREATE INDEX', %shape);
check_bytes('after CREATE INDEX');

# Each change leaves most chunks dirty (one row in a hundred); the plain
# aggregates meet them before any tidying.  None of these folds the delta
# into a new tree (it stays under a sixteenth of the entries), so the
# device's bytes without copies stay the build's.
my @changes = (
	[ 'after an UPDATE of 1 %', 'UPDATE c SET v = v + 1 WHERE k % 100 = 3' ],
	[ 'after a DELETE of 1 %', 'DELETE FROM c WHERE k % 100 = 5' ],
	[ 'after VACUUM', 'VACUUM c' ]);
foreach my $change (@changes)
{
	my ($moment, $sql) = @$change;
	$node->safe_psql('postgres', $sql);
	check_shapes($moment, %shape);
	check_bytes($moment);
  SKIP:
	{
		skip 'SKIPPED: no GPU for the service (the CPU engine keeps one copy)', 1
		  unless $on_gpu;
		is(mirror_row('rebuilds') . ':' . mirror_row('device_bytes'),
			"0:$device_built",
			"$moment: plain aggregates copied nothing to the device");
	}
}

# Filtered and grouped aggregates read every entry of their ranges: on a
# GPU the columns are copied there, then given back once unread.
check_shapes('filtered and grouped', %filtered);
SKIP:
{
	skip 'SKIPPED: no GPU for the service (the CPU engine keeps one copy)', 3
	  unless $on_gpu;
	cmp_ok(mirror_row('device_bytes'), '>', $device_built,
		'a filtered aggregate copied the columns to the device');
	ok( $node->poll_query_until(
			'postgres',
			"SELECT device_bytes = $device_built FROM gpubtree_mirrors() "
			  . "WHERE index = 'c_k'::regclass AND current"),
		'the device copies are given back once unread for 10 s');
	check_shapes('filtered and grouped again', %filtered);
	cmp_ok(mirror_row('device_bytes'), '>', $device_built,
		'and copied again by the next filtered aggregate');
}

# A bulk INSERT of half as many rows again: the mirror is built again, or
# the load goes to its delta (about 40 bytes an entry: key, TID, values
# and stamps) and is folded into a new tree once the mirror is quiet,
# within seconds; the bytes are checked after that.
$node->safe_psql('postgres',
	"INSERT INTO c SELECT g, g % 1000 FROM generate_series($rows + 1, $rows + $rows / 2) g"
);
check_shapes('after a bulk INSERT of 50 %', %shape);
ok( $node->poll_query_until(
		'postgres',
		"SELECT entries = (SELECT count(*) FROM c) AND delta < $rows / 100 "
		  . "FROM gpubtree_mirrors() WHERE index = 'c_k'::regclass AND current"),
	'the mirror holds the load outside its delta');
check_bytes('after the load is folded in');
check_shapes('after the load is folded in', %shape, %filtered);

# The filtered aggregates' copies, if any, given back: one copy again.
ok( $node->poll_query_until(
		'postgres',
		"SELECT bytes_per_entry <= pg_relation_size('c_k')::float8 / entries "
		  . "FROM gpubtree_mirrors() WHERE index = 'c_k'::regclass AND current"),
	'at the end, once unread: at most the index\'s bytes an entry');

$node->stop;
done_testing();
