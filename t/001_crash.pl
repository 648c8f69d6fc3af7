# t/001_crash.pl: crash recovery of gpubtree indexes.  Several sessions
# load a table with two gpubtree indexes (committed, rolled-back and
# in-flight transactions); the server is stopped with `pg_ctl stop -m
# immediate` in the middle and restarted (WAL recovery).  Then: every
# transaction whose COMMIT was acknowledged survived, whole (and no other
# did, not even in part), and the gpubtree indexes answer exactly as a
# sequential scan and a freshly built btree do, under index, index-only and
# bitmap scans (full sorted outputs compared); amcheck verifies them, and
# the service's rebuilt mirror holds the index's entries.  Writing goes on
# after recovery and is checked again.  Two crash cycles.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use POSIX ();
use Test::More;

# Scans go to the service from two keys on; the lookup node would take the
# forced plans this test compares.
$ENV{PGOPTIONS} =
  ($ENV{PGOPTIONS} // '') . ' -c gpubtree.min_gpu_batch=2 -c gpubtree.enable_lookup=off';

my $node = gpubtree_node('crash');
$node->start;
my $dir = PostgreSQL::Test::Utils::tempdir;

# tx: the transaction that inserted the row.  Only rows with k2 = 3 are ever
# deleted, and updates change k only, so a committed transaction's other 17
# rows must all be there.
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE EXTENSION amcheck;
CREATE TABLE c (tx int8, k int8, k2 int4, v float8) WITH (autovacuum_enabled = off);
CREATE INDEX c_k ON c USING gpubtree (k) INCLUDE (v);
CREATE INDEX c_k2k ON c USING gpubtree (k2 DESC NULLS FIRST, k);
CREATE TABLE committed (tx int8 PRIMARY KEY);
});

# load(TAG, N): a child process feeding psql N transactions, or as many as
# it takes until the server goes away; psql echoes each acknowledged
# commit's id into $dir/acked.TAG.  Each writer updates and deletes only its
# own rows (no deadlocks); every 5th transaction rolls back.  Returns the
# child's pid.
sub load
{
	my ($tag, $n) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	return $pid if $pid;

	# (the child: psql's exit at the crash ends it with SIGPIPE)
	open(my $psql, '|-',
		"psql -X -q -At -v ON_ERROR_STOP=1 -d '"
		  . $node->connstr('postgres')
		  . "' >'$dir/acked.$tag' 2>/dev/null")
	  or POSIX::_exit(1);
	for my $i (1 .. $n)
	{
		my $tx = $tag * 1000000 + $i;
		my $k = ($i * 7919 + $tag) % 5000;
		my $own = "tx / 1000000 = $tag";
		print $psql "BEGIN;
INSERT INTO c SELECT $tx, CASE WHEN g = 20 THEN NULL ELSE $k + g % 50 END, g % 7, g / 3.0 FROM generate_series(1, 20) g;
UPDATE c SET k = k + 1 WHERE k = @{[$k + 3]} AND $own;
UPDATE c SET k = NULL WHERE k = @{[$k + 5]} AND k2 = 6 AND $own;
DELETE FROM c WHERE k = @{[$k + 11]} AND k2 = 3 AND $own;
INSERT INTO committed VALUES ($tx);\n";
		print $psql ($i % 5 == 0 ? "ROLLBACK;\n" : "COMMIT;\n\\echo $tx\n");
	}
	close($psql);
	POSIX::_exit(0);
}

sub acked
{
	my @ids;
	for my $f (@_)
	{
		next unless -e $f;
		push @ids, grep { /^\d+$/ } split /\n/, slurp_file($f);
	}
	return @ids;
}

# same(QUERY): the query's output through each gpubtree plan shape (which
# EXPLAIN must show on a gpubtree index) and through freshly built btree
# indexes equals a sequential scan's.
sub same
{
	my ($q) = @_;
	my $expected = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q");
	for my $shape (
		[ 'Index Scan', 'enable_bitmapscan = off; SET enable_indexonlyscan = off' ],
		[ 'Index Only Scan', 'enable_bitmapscan = off' ],
		[ 'Bitmap Index Scan', 'enable_indexscan = off; SET enable_indexonlyscan = off' ])
	{
		my ($scan, $set) = @$shape;
		my ($rc, $got, $err) =
		  $node->psql('postgres', "SET enable_seqscan = off; SET $set; $q");
		is_output($rc == 0 ? $got : "(query failed: $err)",
			$expected, "$scan on gpubtree: $q");
		like($node->safe_psql('postgres', "SET enable_seqscan = off; SET $set; EXPLAIN (COSTS OFF) $q"),
			qr/$scan.* c_k/, "EXPLAIN shows a $scan on a gpubtree index: $q");
	}
	my ($rc, $got, $err) = $node->psql('postgres',
		"BEGIN; DROP INDEX c_k, c_k2k; CREATE INDEX ON c (k) INCLUDE (v); CREATE INDEX ON c (k2 DESC NULLS FIRST, k);
		SET LOCAL enable_seqscan = off; $q; ROLLBACK;");
	is_output($rc == 0 ? $got : "(query failed: $err)", $expected, "fresh btree: $q");
}

sub verify
{
	my ($label) = @_;
	note($label);
	my %committed =
	  map { $_ => 1 } split /\n/, $node->safe_psql('postgres', 'SELECT tx FROM committed');
	my @acked = acked(glob("$dir/acked.*"));
	is(scalar(grep { !$committed{$_} } @acked),
		0, "$label: acknowledged commits missing (of " . scalar(@acked) . ")");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM committed WHERE tx % 5 = 0'),
		0, "$label: rolled-back transactions present");
	is( $node->safe_psql(
			'postgres', q{
		SELECT count(*) FROM (SELECT tx, count(*) AS n FROM c WHERE k2 <> 3 GROUP BY tx) r
		FULL JOIN committed USING (tx) WHERE r.n IS DISTINCT FROM 17}),
		0,
		"$label: transactions with partial rows, or rows without a commit");
	same('SELECT k, v FROM c WHERE k BETWEEN 100 AND 3900 ORDER BY k, v');
	same("SELECT k, v FROM c WHERE k = ANY ('{7,100,101,2500,4999,NULL}') ORDER BY k, v");
	same('SELECT count(*), sum(k), min(k), max(k) FROM c WHERE k >= 0');
	same('SELECT count(*), sum(v::numeric) FROM c WHERE k IS NULL');
	same('SELECT k2, k FROM c WHERE k2 < 4 AND k > 10 ORDER BY k2 DESC, k');
	same('SELECT k2, k FROM c WHERE k2 IS NULL OR k2 >= 0 ORDER BY k2, k');
	my ($rc) = $node->psql('postgres',
		"SELECT gpubtree_index_check('c_k', true, true); SELECT gpubtree_index_check('c_k2k', true, true)");
	is($rc, 0, "$label: amcheck verifies both gpubtree indexes");

	# The service's mirror, rebuilt after the restart by the bitmap scans above.
	is( $node->safe_psql(
			'postgres', q{
		SET enable_seqscan = off; SET enable_indexscan = off;
		SELECT count(*) FROM c WHERE k BETWEEN 0 AND 10 \g /dev/null
		SELECT count(*) || ' problems' || coalesce(', first: ' || min(problem), '') FROM gpubtree_verify('c_k')}
		),
		'0 problems',
		"$label: gpubtree_verify: the mirror of c_k holds the index's entries");
	note($node->safe_psql('postgres', 'SELECT count(*) FROM c')
		  . ' rows, ' . scalar(keys %committed) . ' committed transactions');
}

for my $cycle (1, 2)
{
	my @writers = map { load($cycle * 10 + $_, 200000) } 1 .. 4;

	# One big transaction still in flight at the crash: none of it may survive.
	my $inflight = IPC::Run::start(
		[
			'psql', '-X', '-d', $node->connstr('postgres'), '-c',
			"BEGIN; INSERT INTO c SELECT -$cycle, g % 5000, g % 7, g FROM generate_series(1, 20000) g; SELECT pg_sleep(600)"
		],
		'>', '/dev/null', '2>', '/dev/null');
	sleep 6;
	$node->stop('immediate');
	waitpid($_, 0) for @writers;
	$inflight->finish;
	$node->start;
	cmp_ok(scalar(acked(map { "$dir/acked.$cycle$_" } 1 .. 4)),
		'>', 20, "cycle $cycle: transactions committed before the crash");
	verify("cycle $cycle, after recovery");

	waitpid(load($cycle * 10 + 9, 300), 0);
	$node->safe_psql('postgres', 'VACUUM c');    # vacuum of the recovered indexes
	verify("cycle $cycle, after more writes and VACUUM");
}

$node->stop;
done_testing();
