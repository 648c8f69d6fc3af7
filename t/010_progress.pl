# t/010_progress.pl: a gpubtree build reports its phases in
# pg_stat_progress_create_index, sampled from a second session while
# CREATE INDEX runs: the table scan (with its block count) and the sort or
# load.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = gpubtree_node('progress');
$node->start;

$node->safe_psql('postgres',
	'CREATE EXTENSION gpubtree; CREATE TABLE big AS SELECT (random() * 1e9)::int8 AS k FROM generate_series(1, 3000000)');

my $builder = IPC::Run::start(
	[
		'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		'-c', "SET maintenance_work_mem = '8MB'", '-c', 'CREATE INDEX big_k ON big USING gpubtree (k)'
	],
	'>', '/dev/null', '2>', \my $builder_err);
my %seen;
while ($builder->pumpable)
{
	my ($rc, $out) = $node->psql('postgres',
		"SELECT command, phase, blocks_total > 0 FROM pg_stat_progress_create_index WHERE relid = 'big'::regclass");
	$seen{$_} = 1 for grep { $_ ne '' } split /\n/, $out // '';
	$builder->pump_nb;
}
ok($builder->finish, 'CREATE INDEX') or diag($builder_err);
note("seen: $_") for sort keys %seen;
ok($seen{'CREATE INDEX|building index: scanning table|t'}, 'the table scan was reported');
ok((grep { /^CREATE INDEX\|building index: (sorting live tuples|loading tuples in tree)\|/ } keys %seen),
	'the sort or load was reported');

$node->stop;
done_testing();
