# t/014_devices.pl: mirrors placed on several devices, on the CPU engine
# with gpubtree.simulated_devices = 2 (each device has half of
# gpubtree.mirror_memory_limit), so that CI tests placement without GPUs.
#
# Tables a (4 units of 100,000 rows), b, c and d (1 unit each), with the
# limit set from a's measured mirror to 6 units a device:
#   a goes to device 0 (both empty: the lowest number), b to device 1 (more
#   room), c to device 1 too (5 units left there, 2 on device 0).
# Lowered to 3 units a device, device 0 (4 units) is over its share and
# device 1 (2) is not: a is dropped, though it was used last and b is the
# least recently used mirror of all: eviction is per device.  d then goes
# to device 0, where there is room.  (The placement compares a new
# mirror's estimate, larger than its bytes, with the bytes of those placed:
# the sizes leave room for that.)
# Every answer equals the ordinary plan's.  A mirror larger than a share
# is split across both devices (below).  Then gpubtree.devices = '1'
# puts every mirror on device 1, and a list naming no device leaves the
# service without an engine, saying why.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $unit = 100000;
my $node = gpubtree_node('devices');
# (the CPU engine also where the suite runs on a GPU's: gpubtree.engine =
# gpu builds no mirror on simulated devices)
$node->append_conf('postgresql.conf',
	"gpubtree.simulated_devices = 2\ngpubtree.mirror_memory_limit = '4GB'\n"
	  . "gpubtree.engine = cpu\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION gpubtree');
ok(wait_service($node), 'the service runs');
like(service_stat($node, 'status'), qr/simulated_devices = 2/,
	'the status names the simulated devices');

# make_table(NAME, UNITS): a table of UNITS * $unit rows, its gpubtree
# index made and its mirror built after CREATE INDEX (waited for).
sub make_table
{
	my ($name, $units) = @_;
	my $rows = $units * $unit;
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE $name (k int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO $name SELECT g, g % 1000 FROM generate_series(1, $rows) g;
VACUUM ANALYZE $name;
SET gpubtree.build_after_create = wait;
CREATE INDEX ${name}_k ON $name USING gpubtree (k) INCLUDE (v);
});
	# (the table's first gpubtree index: built by a job after the commit)
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM gpubtree_mirrors() WHERE index = '${name}_k'::regclass AND current AND bytes IS NOT NULL")
	  or die "the mirror of ${name}_k was not built";
	return;
}

# device_of(NAME): the device of the index's current mirror; '' if none.
sub device_of
{
	return $node->safe_psql('postgres',
		"SELECT device FROM gpubtree_mirrors() WHERE index = '$_[0]_k'::regclass AND current AND bytes IS NOT NULL"
	);
}

# show(WHEN): the mirrors, for the test's log.
sub show
{
	note("mirrors $_[0]:\n" . $node->safe_psql('postgres',
		"SELECT index::regclass, device, bytes, entries FROM gpubtree_mirrors() ORDER BY 1"));
	return;
}

# agree(NAME): a range sum through the mirror against the ordinary plan's.
sub agree
{
	return node_vs_plan($node, 'postgres',
		"SELECT count(*) || ':' || coalesce(sum(v), 0) FROM $_[0] WHERE k BETWEEN 1000 AND 123456");
}

# set_share(UNITS): each device's share, in units of a's mirror / 4,
# waited for until the service took it.
my $unit_bytes;
sub set_share
{
	my ($units) = @_;
	my $limit_mb = int($unit_bytes * $units * 2 / (1024 * 1024) + 0.5);
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET gpubtree.mirror_memory_limit = '${limit_mb}MB'; SELECT pg_reload_conf()");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT memory_limit = ${limit_mb}::int8 * 1024 * 1024 FROM gpubtree_status()"),
		"the service took the new limit ($limit_mb MB, $units units a device)");
	return $limit_mb;
}

make_table('a', 4);
is(device_of('a'), '0', 'the first mirror goes to device 0 (both empty)');
$unit_bytes = $node->safe_psql('postgres',
	"SELECT bytes FROM gpubtree_mirrors() WHERE index = 'a_k'::regclass") / 4;
set_share(6);

make_table('b', 1);
is(device_of('b'), '1', 'the second mirror goes to the device with more room');
make_table('c', 1);
is(device_of('c'), '1', 'the third goes where there is more room left, not to the lowest device');
is(device_of('b'), '1', 'b stays on device 1 (room for both)');
is(device_of('a'), '0', 'a stays on device 0');
is(agree($_), 'same', "$_: answers equal the ordinary plan's") for qw(b c a);
show('before the limit is lowered');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) = 3 AND bool_and(part_devices IS NULL AND part_entries IS NULL) FROM gpubtree_mirrors() WHERE entries IS NOT NULL"
	),
	't',
	'a mirror on one device lists no parts');

# a is used last, b is the least recently used mirror of all.  With 3
# units a device, device 0 (a: 4) is over its share and device 1 (b and c:
# 2) is not: only a is dropped.
my $limit_mb = set_share(3);
ok($node->poll_query_until('postgres',
		"SELECT NOT EXISTS (SELECT FROM gpubtree_mirrors() WHERE index = 'a_k'::regclass AND bytes IS NOT NULL)"),
	'a is dropped: its device is over its share');
show('after the limit is lowered');
is(device_of('b'), '1', 'b, the least recently used, stays: its device is within its share');
is(device_of('c'), '1', 'c stays');

make_table('d', 1);
is(device_of('d'), '0', 'the fourth goes to device 0, where there is room now');
is(agree($_), 'same', "$_: answers equal the ordinary plan's after the eviction") for qw(b c d);
ok( $node->safe_psql(
		'postgres',
		"SELECT bool_and(s <= ${limit_mb}::int8 * 1024 * 1024 / 2) FROM "
		  . "(SELECT sum(bytes) s FROM gpubtree_mirrors() WHERE bytes IS NOT NULL GROUP BY device) x"),
	'each device holds no more than its share');
set_share(6);

# Lanes: = ANY aggregates and rows over b (device 1) and d (device 0) from
# 8 sessions at once, so that rounds hold requests for both devices and run
# each device's share in a thread of its own (requests.c:
# answer_whole_aggs()).  Every answer compared with the ordinary plan's in
# the same transaction; the service's summary says rounds ran in lanes.
create_check_same($node);
$node->safe_psql(
	'postgres', q{
ALTER SYSTEM SET log_min_messages = debug1;
ALTER SYSTEM SET gpubtree.batch_window = 1000;
SELECT pg_reload_conf();
});
# (keys repeat in the long lists: each must be found once)
my $keys = 'ARRAY(SELECT (:seed + g * 7919) % ' . ($unit * 6 / 10) . ' FROM generate_series(1, :nkeys) g)::int8[]';
# (= ANY lists of GBT_SERVICE_SORT_MIN keys and more go unsorted: the lanes sort them)
my %lane_shapes = (
	agg => "SELECT count(*) || '/' || coalesce(sum(v), 0) AS a FROM TABLE WHERE k = ANY ($keys)",
	sorted_there => "SELECT count(*) || '/' || coalesce(sum(v), 0) AS a FROM TABLE WHERE k = ANY ($keys)",
	rows => "SELECT coalesce(string_agg(k || ':' || v, ',' ORDER BY k), '-') AS a FROM
	(SELECT k, v FROM TABLE WHERE k = ANY ($keys)) q");
my %lane_keys = (agg => '200, 600', rows => '200, 600', sorted_there => '65536, 70000');
my $dir = PostgreSQL::Test::Utils::tempdir;
my @scripts;
for my $table (qw(b d))
{
	for my $shape (sort keys %lane_shapes)
	{
		(my $q = $lane_shapes{$shape}) =~ s/TABLE/$table/;
		(my $sample = $q) =~ s/:seed/17/g;
		$sample =~ s{:nkeys}{(split /, /, $lane_keys{$shape})[1]}ge;
		like(
			$node->safe_psql('postgres',
				"SET gpubtree.min_gpu_batch = 64; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $sample"),
			qr/Answered by: GPU service/,
			"lanes: $shape of $table is answered by the service");
		append_to_file("$dir/${shape}_$table.sql",
			same_answer_script("$shape $table",
				"\\set seed random(0, 99999)\n\\set nkeys random($lane_keys{$shape})\n",
				$q, ['a']));
		push @scripts, "$dir/${shape}_$table.sql";
	}
}
my $log_at = -s $node->logfile;
{
	local $ENV{PGOPTIONS} = '-c gpubtree.min_gpu_batch=64 -c max_parallel_workers_per_gather=0';
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			$node->config_data('--bindir') . '/pgbench', '-n', '-T', 8, '-c', 8, '-j', 2,
			(map { ('-f', $_) } @scripts), '-d', $node->connstr('postgres')
		],
		'>', \$out, '2>', \$err);
	like($out, qr/number of failed transactions: 0 /, 'lanes: no transaction failed')
	  or diag($err);
	unlike($err, qr/wrong answer|aborted/, 'lanes: no wrong answer') or diag($err);
	for my $script (@scripts)
	{
		my ($done) = $out =~ m{\Q$script\E\n - weight: [^\n]*\n - (\d+) transactions};
		cmp_ok($done // 0, '>', 0, "lanes: $script compared");
		note("lanes: $script: " . ($done // 0) . ' transactions');
	}
}
# (the summary: every 10 s, and when requests stop)
ok( $node->poll_query_until('postgres',
		"SELECT pg_read_file('" . $node->logfile . "', $log_at, 1000000) ~ 'rounds in lanes'"),
	'lanes: rounds ran both devices\' aggregates at once');
note($_) for slurp_file($node->logfile, $log_at) =~ /(\d+ rounds in lanes [^;\n]*)/g;
$node->safe_psql('postgres',
	"ALTER SYSTEM RESET log_min_messages; ALTER SYSTEM RESET gpubtree.batch_window; SELECT pg_reload_conf()");

# Split: a mirror larger than each device's share (5 units a device, e's
# mirror about 5, its estimate about 9) is split by position across both devices (engine.h's
# split engine).  Every shape of question compared with the ordinary plan:
# aggregates over the whole, across the cut and by an INCLUDE column,
# = ANY keys on both sides, the rows around the cut (keys repeat three
# times, so a key's entries may lie in both parts); after deletes, inserts
# and updates on both sides, after VACUUM, and after a rebuild of the tree
# with the delta folded in, which keeps the parts.
set_share(5);
my $erows = 5 * $unit;
my $maxk = int($erows / 3);
$node->safe_psql(
	'postgres', qq{
CREATE TABLE e (k int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO e SELECT i / 3, i % 1000 FROM generate_series(1, $erows) i;
VACUUM ANALYZE e;
SET gpubtree.build_after_create = wait;
CREATE INDEX e_k ON e USING gpubtree (k) INCLUDE (v);
});
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM gpubtree_mirrors() WHERE index = 'e_k'::regclass AND current AND bytes IS NOT NULL"),
	'split: the mirror of e is built');
show('with e split');
my $note = $node->safe_psql('postgres',
	"SELECT note FROM gpubtree_mirrors() WHERE index = 'e_k'::regclass AND current");
like($note, qr/^split across devices (0, 1|1, 0) \(tree entries \d+, \d+\)/,
	'split: e is split across both devices');
my ($first_part) = $note =~ /tree entries (\d+),/;
is( $node->safe_psql(
		'postgres',
		"SELECT part_devices[1] = device AND cardinality(part_devices) = 2 AND part_devices[1] <> part_devices[2] AND part_entries[1] = $first_part AND part_entries[2] > 0 FROM gpubtree_mirrors() WHERE index = 'e_k'::regclass AND current"
	),
	't',
	'split: part_devices and part_entries name both parts, as note does');
my $cutk = int((($first_part // 0) + 1) / 3);
my %split_shapes = (
	whole => "SELECT count(*) || ':' || coalesce(sum(v), 0) || ':' || min(v) || ':' || max(v) FROM e WHERE k BETWEEN 0 AND $maxk",
	across => "SELECT count(*) || ':' || coalesce(sum(v), 0) FROM e WHERE k BETWEEN $cutk - 4000 AND $cutk + 3000",
	cut_rows => "SELECT string_agg(k || ':' || v, ',' ORDER BY k, v) FROM e WHERE k BETWEEN $cutk - 3 AND $cutk + 3",
	cut_key => "SELECT count(*) || ':' || coalesce(sum(v), 0) FROM e WHERE k = ANY (ARRAY[$cutk, $cutk + 1]::int8[])",
	any_keys => "SELECT count(*) || ':' || coalesce(sum(v), 0) FROM e WHERE k = ANY (ARRAY(SELECT (g * 7919) % ($maxk + 10) FROM generate_series(1, 3000) g)::int8[])",
	any_rows => "SELECT string_agg(k || ':' || v, ',' ORDER BY k, v) FROM e WHERE k = ANY (ARRAY(SELECT (g * 7919) % ($maxk + 10) FROM generate_series(1, 300) g)::int8[])",
	by_v => "SELECT string_agg(v || '=' || c || '/' || s, ',' ORDER BY v) FROM (SELECT v, count(*) c, sum(k) s FROM e WHERE k BETWEEN 10 AND $maxk - 10 GROUP BY v) q");

# split_agree(WHEN): every shape against the ordinary plan
sub split_agree
{
	my ($when) = @_;
	is(node_vs_plan($node, 'postgres', $split_shapes{$_}), 'same', "split, $when: $_ equals the ordinary plan's")
	  for sort keys %split_shapes;
	return;
}
like(
	$node->safe_psql('postgres',
		"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $split_shapes{across}"),
	qr/Answered by: GPU service/,
	'split: a range across the cut is answered by the service');
split_agree('as built');
# (room for the writes' delta and a rebuild's new tree: the parts stay)
set_share(10);
$node->safe_psql(
	'postgres', qq{
DELETE FROM e WHERE k % 97 = 0 OR k BETWEEN $cutk - 1 AND $cutk;
INSERT INTO e SELECT g, g % 1000 FROM generate_series(1, 500) g;
INSERT INTO e SELECT $cutk + g % 3 - 1, g FROM generate_series(1, 30) g;
INSERT INTO e SELECT $maxk - g, g FROM generate_series(1, 500) g;
UPDATE e SET v = v + 1 WHERE k BETWEEN 100 AND 200 OR k BETWEEN $maxk - 200 AND $maxk - 100;
});
split_agree('after writes on both sides');
$node->safe_psql('postgres', 'VACUUM e');
split_agree('after VACUUM');
my $rebuilds = $node->safe_psql('postgres',
	"SELECT rebuilds FROM gpubtree_mirrors() WHERE index = 'e_k'::regclass AND current");
# (transactions the change log carries whole; the service folds a delta of
# more than a sixteenth of the tree into a new tree once writes stop)
$node->safe_psql('postgres',
	join('', map { "INSERT INTO e SELECT (g * 13 + $_) % $maxk, g % 1000 FROM generate_series(1, 10000) g;\n" } 1 .. 8));
ok( $node->poll_query_until('postgres',
		"SELECT rebuilds > $rebuilds AND note ~ '^split across devices' FROM gpubtree_mirrors() WHERE index = 'e_k'::regclass AND current AND bytes IS NOT NULL"),
	'split: a rebuild keeps the mirror split');
split_agree('after a rebuild');
$node->safe_psql('postgres', 'DROP TABLE e');
set_share(6);

# Pinned: only device 1.
$node->append_conf('postgresql.conf', "gpubtree.devices = '1'\n");
$node->restart;
ok(wait_service($node), 'the service runs with gpubtree.devices = 1');
is(agree('b'), 'same', 'b answers after the restart');
is(agree('a'), 'same', 'a answers after the restart');
is(device_of('b'), '1', 'b is on device 1, the only one listed');
is(device_of('a'), '1', 'a is on device 1 too');

# A list naming no device: no engine, and the status says why.
$node->append_conf('postgresql.conf', "gpubtree.devices = '5'\n");
$node->restart;
ok(wait_service($node), 'the service runs with gpubtree.devices = 5');
like(service_stat($node, 'status'), qr/names none of the 2 simulated devices/,
	'a list naming no device: the status says so');
is(agree('b'), 'same', 'b answers without a mirror (nbtree)');
is(device_of('b'), '', 'and no mirror is built');

$node->stop;
done_testing();
