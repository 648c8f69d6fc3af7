# t/011_first_query.pl: with the shipped defaults, no query builds a mirror
# or waits for one: CREATE INDEX builds it before it returns (or, under
# background, has it built once it commits); the first query after a CREATE INDEX that did not (gpubtree.
# build_after_create = off) and after a bulk load is answered by nbtree
# while a background worker builds the mirror,
# and the queries after it use the mirror; a join on the key is planned as
# PostgreSQL would plan it until the mirror is current.  Many sessions
# asking at once start one build, and a query that looks as a build ends
# starts no second one.  A mirror that cannot fit under
# gpubtree.mirror_memory_limit is refused before any export, logged once,
# and never exported while nothing changes.  Every answer is compared with
# btree's.  (The service's CPU engine follows the same paths as the GPU.)
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

$ENV{GBT_BUILD_WAIT} = '';    # the shipped default: queries never wait for a build
my $node = gpubtree_node('first_query');
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT (i::int8 * 7919) % 300000, i FROM generate_series(1, 300000) i;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX b_k ON b (k) INCLUDE (v);
CREATE TABLE p AS SELECT i * 11 AS k FROM generate_series(1, 20000) i;
VACUUM ANALYZE g;
VACUUM ANALYZE b;
ANALYZE p;
});

my $bitmap = 'SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;
SET max_parallel_workers_per_gather = 0; SET gpubtree.enable_lookup = off;';
my $range = "SELECT count(*) || ':' || sum(v) FROM %s WHERE k BETWEEN 1000 AND 90000";
my $scans = 'SET gpubtree.enable_aggregate = off;';
# A join on the key: the GpubtreeJoin node keeps no plan of PostgreSQL's to
# fall back to, so it is planned only while the mirror is current.
my $join = "SELECT count(*) || ':' || sum(t.v) FROM p JOIN %s t ON t.k = p.k";

sub q_range { return $node->safe_psql('postgres', "$bitmap " . sprintf($range, $_[0])); }

# plan_of([SETTING]): the range aggregate's plan, as run (the aggregate
# node; with $scans, the bitmap scan's).
sub plan_of
{
	my $setting = $_[0] // '';
	return $node->safe_psql('postgres',
		"$bitmap $setting EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " . sprintf($range, 'g'));
}

# lines(TEXT, REGEX): how many lines of TEXT match.
sub lines { my ($text, $re) = @_; return scalar(grep { /$re/ } split /\n/, $text); }

sub status_of { return service_stat($node, $_[0]); }
sub join_plan { return lines($node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) ' . sprintf($join, 'g')), qr/GpubtreeJoin/); }
sub join_answer { return $node->safe_psql('postgres', sprintf($join, $_[0])); }

sub state
{
	return $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(state, ','), 'none') FROM gpubtree_mirrors() WHERE index = '$_[0]'::regclass");
}

sub reload
{
	$node->safe_psql('postgres', "ALTER SYSTEM SET $_[0]; SELECT pg_reload_conf()");
	usleep(500_000);
}

# wait_current(INDEX): until the index has a current mirror (at most 60 s).
sub wait_current
{
	for (1 .. 120)
	{
		return 1
		  if $node->safe_psql('postgres',
			"SELECT count(*) FROM gpubtree_mirrors() WHERE index = '$_[0]'::regclass AND current") eq '1';
		usleep(500_000);
	}
	return 0;
}

my $expected = q_range('b');
is(status_of("memory_limit > 0 AND memory_limit_source LIKE 'auto%'"), 't', 'the resolved memory limit is shown');

# 1. The first query after CREATE INDEX: nbtree answers while a build is
#    held back on purpose; many sessions asking at once start one build.
#    (The index is made with gpubtree.build_after_create = off, so that
#    the queries are the ones to ask: section 4 is the shipped default.)
reload("gpubtree.debug_build_delay = '5s'");
$node->safe_psql('postgres',
	'SET gpubtree.build_after_create = off; CREATE INDEX g_k ON g USING gpubtree (k) INCLUDE (v)');
my $e0 = status_of('exports');
is(lines(plan_of(), qr/Answered by: the plan below \(no current mirror: build starting in the background\)/),
	1, 'first aggregate answered by the plan below, saying why');
my $out = plan_of($scans);
is(lines($out, qr/Service: 0 scans.*1 answered by nbtree/), 1, 'first scan answered by nbtree');
is(lines($out, qr/Mirror: no current mirror: build starting/), 1, 'EXPLAIN says the mirror is being built');
is(state('g_k'), 'build starting', 'the queries did not wait for the build');
is(join_plan(), 0, 'first join planned without the GpubtreeJoin node');
is(join_answer('g'), join_answer('b'), "first join's answer");
my @sessions = map {
	my $answer = '';
	my $query = "$bitmap " . sprintf($range, 'g') . ";\n";
	[
		IPC::Run::start(
			[ 'psql', '-X', '-q', '-At', '-d', $node->connstr('postgres') ],
			'<', \$query, '>', \$answer),
		\$answer
	]
} 1 .. 8;
$_->[0]->finish for @sessions;
is(scalar(grep { ${ $_->[1] } eq "$expected\n" } @sessions), 8, 'answers while the build runs');
reload('gpubtree.debug_build_delay = 0');
wait_current('g_k');
is(status_of('exports') - $e0, 1, 'one export for all the sessions that asked');
is(lines(plan_of(), qr/Answered by: GPU service/), 1, 'after the build, the service answers aggregates');
is(lines(plan_of($scans), qr/Service: 1 scans/), 1, 'after the build, the service answers scans');
is(q_range('g'), $expected, 'answer from the mirror');
is(join_plan(), 1, 'after the build, joins are planned with the GpubtreeJoin node');
is(join_answer('g'), join_answer('b'), "the join's answer from the mirror");

# 2. The first query after a bulk load larger than the change log takes for
#    one transaction: the mirror is invalidated, nbtree answers, a new build
#    follows in the background.
$node->safe_psql(
	'postgres', 'INSERT INTO g SELECT (i::int8 * 7919) % 300000, -i FROM generate_series(1, 40000) i;
	INSERT INTO b SELECT (i::int8 * 7919) % 300000, -i FROM generate_series(1, 40000) i');
$expected = q_range('b');
reload("gpubtree.debug_build_delay = '5s'");
is(lines(plan_of($scans), qr/1 answered by nbtree/), 1, 'first query after the bulk load answered by nbtree');
is(q_range('g'), $expected, 'answer after the bulk load');
reload('gpubtree.debug_build_delay = 0');
wait_current('g_k');
is(lines(plan_of($scans), qr/Service: 1 scans/), 1, 'rebuilt in the background');
is(q_range('g'), $expected, 'answer from the rebuilt mirror');

# 3. A mirror that cannot fit: refused before any export, logged once,
#    never exported again while nothing changes; EXPLAIN and
#    gpubtree_mirrors() say so.  Raising the limit lifts the refusal.
reload('gpubtree.mirror_memory_limit = 1');
$node->safe_psql('postgres', 'DROP INDEX g_k; CREATE INDEX g_k2 ON g USING gpubtree (k) INCLUDE (v)');
$e0 = status_of('exports');
is(q_range('g'), $expected, 'answer when the mirror cannot fit') for 1 .. 3;
is(status_of('exports') - $e0, 0, 'never exported');
is(state('g_k2'), 'refused: too large', 'shown as refused');
is(lines(plan_of(), qr/Answered by: the plan below \(no mirror: .* over gpubtree\.mirror_memory_limit/),
	1, 'EXPLAIN of the aggregate says it was refused');
is(lines(plan_of($scans), qr/over gpubtree\.mirror_memory_limit/), 2, 'EXPLAIN of the scan says it was refused');
is(lines(slurp_file($node->logfile), qr/index "g_k2" gets no mirror/), 1, 'logged once');
reload('gpubtree.mirror_memory_limit = -1');
q_range('g');
wait_current('g_k2');
is(status_of('exports') - $e0, 1, 'built once the limit allows it');
is(q_range('g'), $expected, 'answer from the mirror after the refusal');

# 4. The shipped default (gpubtree.build_after_create = wait): the mirror
#    of a new index is built inside CREATE INDEX, current when it returns,
#    in one export; background: once CREATE INDEX commits, with no query
#    asking.
$e0 = status_of('exports');
$node->safe_psql('postgres', 'CREATE INDEX g_k3 ON g USING gpubtree (v) INCLUDE (k)');
is( $node->safe_psql('postgres', "SELECT current FROM gpubtree_mirrors() WHERE index = 'g_k3'::regclass"),
	't', 'current when CREATE INDEX returns');
is(status_of('exports') - $e0, 1, 'one export');
is(lines(plan_of(), qr/Answered by: GPU service/), 1, 'the first aggregate is answered by the service');
$e0 = status_of('exports');
$node->safe_psql('postgres',
	'SET gpubtree.build_after_create = background; CREATE INDEX g_k4 ON g USING gpubtree (v, k)');
is(wait_current('g_k4'), 1, 'background: current after CREATE INDEX with no query');
is(status_of('exports') - $e0, 1, 'background: one export');

# 5. A query that finds no mirror while the build is under way, and looks
#    at the build's job only after the build ended (the service published
#    the mirror, then the worker freed the job): it takes the mirror, and
#    starts no second build.  For each kind of query that asks for a
#    mirror: an aggregate, a bitmap scan, a lookup of many keys, a join
#    (asked for while it is planned).  Each step is held on purpose by a
#    debug setting and let go by a reload: the worker before its hand-over
#    (gpubtree.debug_export_delay), the query between the two looks
#    (gpubtree.debug_build_ask_delay).
$node->safe_psql('postgres', 'DROP INDEX g_k2');
my $explain = 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)';
my $keys = 'ARRAY(SELECT i * 7 FROM generate_series(1, 5000) i)';
my @askers = (
	[ 'an aggregate', "$bitmap $explain " . sprintf($range, 'g'), qr/Answered by: GPU service/ ],
	[ 'a bitmap scan', "$bitmap $scans $explain " . sprintf($range, 'g'), qr/Service: 1 scans/ ],
	[ 'a lookup', "SET gpubtree.enable_aggregate = off; $explain SELECT count(*), sum(v) FROM g WHERE k = ANY($keys)",
		qr/Answered by: GPU service/ ],
	[ 'a join', 'EXPLAIN (COSTS OFF) ' . sprintf($join, 'g'), qr/GpubtreeJoin/ ]);
for my $a (@askers)
{
	my ($kind, $sql, $took) = @$a;

	$node->safe_psql('postgres', 'DROP INDEX IF EXISTS g_k5');
	reload("gpubtree.debug_export_delay = '10min'");
	reload("gpubtree.debug_build_ask_delay = '10min'");
	$node->safe_psql('postgres',
		'SET gpubtree.build_after_create = background; CREATE INDEX g_k5 ON g USING gpubtree (k) INCLUDE (v)');
	ok( $node->poll_query_until('postgres',
			"SELECT state = 'building' FROM gpubtree_mirrors() WHERE index = 'g_k5'::regclass"),
		"$kind as the build ends: the build held before its hand-over");
	$e0 = status_of('exports');
	my $asked = '';
	my $ask = "$sql;\n";
	my $asker = IPC::Run::start([ 'psql', '-X', '-q', '-At', '-d', $node->connstr('postgres') ],
		'<', \$ask, '>', \$asked);
	$asker->pump while length $ask;
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'client backend' "
			  . "AND wait_event_type = 'Extension' AND query LIKE 'EXPLAIN%'"),
		"$kind as the build ends: it found no mirror, held before it looks at the job");
	reload('gpubtree.debug_export_delay = 0');
	is(wait_current('g_k5'), 1, "$kind as the build ends: the build ended, its mirror current");
	reload('gpubtree.debug_build_ask_delay = 0');
	$asker->finish;
	is(lines($asked, $took), 1, "$kind as the build ends: it took the mirror built meanwhile");
	is(status_of('exports') - $e0, 0, "$kind as the build ends: no second build");
}
is(q_range('g'), $expected, 'the answer after the builds');
is(join_answer('g'), join_answer('b'), "the join's answer after the builds");

$node->stop;
done_testing();
