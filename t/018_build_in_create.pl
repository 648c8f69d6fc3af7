# t/018_build_in_create.pl: the mirror built inside CREATE INDEX
# (gpubtree.build_after_create = wait, the default) where that CREATE INDEX
# also installs the table's capture trigger (its first gpubtree index, as
# each CREATE INDEX of pg_restore does).  Generated over every statement
# shape the transaction can run before CREATE INDEX (nothing, writes to the
# table or to another one, a delete rolled back to a savepoint, a gpubtree
# index made and rolled back) and after it (nothing, a delete, an update,
# an insert), in a transaction block and in autocommit, under wait and
# background.  Each table was loaded and never vacuumed, so that every
# entry's visibility comes from the heap or the stamps.  In every case the
# answers inside the transaction and after its commit equal the ordinary
# plan's, the mirror holds the index (gpubtree_verify()) and decides by its
# stamps, also after writes in the same session once the transaction
# committed; where the transaction had written nothing before CREATE INDEX
# under wait, the mirror is current at the commit, before any query asks,
# and the first aggregate is answered by the service with no entry checked
# in the heap.  Autovacuum is off.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = gpubtree_node('build_in_create');
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION gpubtree; CREATE TABLE other (x int)');
# The service answering first (on the GPU its engine takes a while to
# start): the mirrors below are to be built inside CREATE INDEX.
ok(wait_service($node), 'the service runs');
$node->safe_psql('postgres',
	'CREATE TABLE warm (k int8); INSERT INTO warm SELECT generate_series(1, 1000);
	 CREATE INDEX warm_k ON warm USING gpubtree (k)');
is(node_vs_plan($node, 'postgres', 'SELECT count(*) FROM warm WHERE k BETWEEN 10 AND 500'),
	'same', 'the service answers');

# What the transaction runs before CREATE INDEX (T: the table), and
# whether it has written anything by then.
my @before = (
	[ 'nothing',          '',                                                          0 ],
	[ 'an insert',        'INSERT INTO T SELECT g, g % 100 FROM generate_series(5001, 5400) g', 1 ],
	[ 'a delete',         'DELETE FROM T WHERE k % 7 = 0',                             1 ],
	[ 'an update',        'UPDATE T SET v = v + 1 WHERE k % 11 = 0',                   1 ],
	[ 'a key update',     'UPDATE T SET k = k + 100000 WHERE k % 13 = 0',              1 ],
	[ 'another table written', 'INSERT INTO other VALUES (1)',                         1 ],
	[ 'a delete rolled back', 'SAVEPOINT s; DELETE FROM T WHERE k % 3 = 0; ROLLBACK TO s', 1 ],
	[ 'an index rolled back',
		'SAVEPOINT s; CREATE INDEX ON T USING gpubtree (v); DELETE FROM T WHERE k % 3 = 0; ROLLBACK TO s',
		1 ]);

# What it runs after.
my @after = (
	[ 'nothing',   '' ],
	[ 'a delete',  'DELETE FROM T WHERE k % 5 = 1' ],
	[ 'an update', 'UPDATE T SET v = v * 2 WHERE k % 6 = 2' ],
	[ 'an insert', 'INSERT INTO T SELECT g, 1 FROM generate_series(6001, 6300) g' ]);

my $forced = 'SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; '
  . 'SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off; '
  . 'SET LOCAL max_parallel_workers_per_gather = 0;';

# The queries compared, over T.
sub queries
{
	my ($t) = @_;
	return (
		"SELECT count(*) || ':' || coalesce(sum(v), 0) AS a FROM $t WHERE k BETWEEN 100 AND 3000",
		"SELECT count(*) || ':' || coalesce(sum(v), 0) || ':' || coalesce(max(k), 0) AS a FROM $t");
}

# psql lines that compare each query's answer through the node with the
# ordinary plan's, inside the transaction: one "same" or "differ: ..." each.
sub compare_inside
{
	my ($t) = @_;
	my $script = '';
	for my $q (queries($t))
	{
		$script .= "$forced\n$q \\gset node_\n"
		  . "SET LOCAL gpubtree.device = off;\n$q \\gset plan_\n"
		  . "SET LOCAL gpubtree.device = auto;\n"
		  . "SELECT CASE WHEN :'node_a' = :'plan_a' THEN 'same' "
		  . "ELSE 'differ: ' || :'node_a' || ' vs ' || :'plan_a' END;\n";
	}
	return $script;
}

# Polls (in the session that made the index) until idx has a current
# mirror: true, or false after about 30 s.
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION wait_current(idx regclass) RETURNS bool
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..600 LOOP
		IF EXISTS (SELECT FROM gpubtree_mirrors() WHERE index = idx AND current) THEN
			RETURN true;
		END IF;
		PERFORM pg_sleep(0.05);
	END LOOP;
	RETURN false;
END $$;
});

# Writes in the same session after the commit (the trigger's cache of the
# table's indexes was filled inside the transaction).
my $later = 'DELETE FROM T WHERE k % 9 = 4; UPDATE T SET v = v + 3 WHERE k % 10 = 7; '
  . 'INSERT INTO T SELECT g, 2 FROM generate_series(7001, 7100) g';

my $n = 0;
for my $mode ('wait', 'background')
{
	for my $b (@before, [ 'autocommit', undef, 0 ])
	{
		my ($bname, $bsql, $wrote) = @$b;
		for my $a (@after)
		{
			my ($aname, $asql) = @$a;
			my $t = 'b' . $n++;
			my $what = "$mode, $bname before, $aname after";
			my $idx = "${t}_k";
			my ($q) = queries($t);

			$node->safe_psql('postgres',
				"CREATE TABLE $t (k int8, v int8) WITH (autovacuum_enabled = off);
				 INSERT INTO $t SELECT g, g % 100 FROM generate_series(1, 5000) g");
			my $create = "CREATE INDEX $idx ON $t USING gpubtree (k) INCLUDE (v);\n";
			# Right after the commit, before any query: its mirror, and the
			# first aggregate, which waits for no build.
			my $at_commit =
			  "SELECT 'ready:' || current || ':' || decided_by FROM gpubtree_mirrors() WHERE index = '$idx'::regclass;\n"
			  . "SET gpubtree.build_wait = 0;\nBEGIN;\n$forced\n"
			  . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $q;\nCOMMIT;\nRESET gpubtree.build_wait;\n"
			  . "SELECT 'current:' || wait_current('$idx');\n";
			(my $asql_t = $asql) =~ s/\bT\b/$t/g;
			(my $later_t = $later) =~ s/\bT\b/$t/g;
			$asql_t .= ";\n" if $asql_t ne '';
			my ($script, $ncompared);
			if (defined $bsql)
			{
				(my $bsql_t = $bsql) =~ s/\bT\b/$t/g;
				$bsql_t .= ";\n" if $bsql_t ne '';
				$script = "BEGIN;\nSET LOCAL gpubtree.build_after_create = $mode;\n"
				  . $bsql_t . $create . $asql_t . compare_inside($t) . "COMMIT;\n" . $at_commit;
				$ncompared = 2;
			}
			else
			{
				# CREATE INDEX in a transaction of its own, as pg_restore runs it.
				$script = "SET gpubtree.build_after_create = $mode;\n$create" . $at_commit . $asql_t;
				$ncompared = 0;
			}
			$script .= "$later_t;\n";
			my $out = $node->safe_psql('postgres', $script);
			my @inside = grep { /^(same|differ)/ } split /\n/, $out;
			is(scalar(@inside), $ncompared, "$what: compared inside the transaction");
			is($_, 'same', "$what: the answer inside the transaction is the ordinary plan's")
			  for @inside;
			like($out, qr/^current:true$/m, "$what: the mirror is built");

			# Built at the commit, before any query: under wait, where
			# nothing was written before CREATE INDEX.
			if ($mode eq 'wait' && !$wrote)
			{
				like($out, qr/^ready:true:stamps$/m, "$what: current at the commit, deciding by its stamps");
				like($out, qr/Answered by: GPU service/, "$what: the first aggregate answered by the service");
				like($out, qr/Entries Checked in Heap: 0\b/, "$what: no entry checked in the heap");
			}
			for my $q (queries($t))
			{
				is(node_vs_plan($node, 'postgres', $q), 'same', "$what: the answer after the commit");
			}
			is( $node->safe_psql('postgres',
					"SELECT decided_by FROM gpubtree_mirrors() WHERE index = '$idx'::regclass AND current"),
				'stamps', "$what: the mirror decides by its stamps");
			is($node->safe_psql('postgres', "SELECT count(*) FROM gpubtree_verify('$idx')"),
				0, "$what: the mirror holds the index");
			$node->safe_psql('postgres', "DROP TABLE $t");
		}
	}
}

$node->stop;
done_testing();
