# t/008_bulk_changes.pl: bulk changes through a change log smaller than
# they are: a transaction that changes many rows, and many transactions in a
# row, stream through the log (the writer waits for the service to make
# room) and keep the mirror current, with answers equal to btree's, also
# past tens of thousands of transaction IDs; only a transaction that
# inserts more than an eighth of the mirror invalidates it, as a bulk load
# should; a smaller load's delta is folded into a new tree once the mirror
# is quiet, its engine built beside the service while the old tree answers.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(gettimeofday tv_interval);

my $node = gpubtree_node('bulk_changes');
# The smallest log (4096 entries): every change below is larger than it.
$node->append_conf('postgresql.conf', 'gpubtree.change_log_size = 4096');
$node->start;
my $dir = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE TABLE t (k int8, v int8);
INSERT INTO t SELECT g, g % 1000 FROM generate_series(1, 200000) g;
CREATE TABLE b AS SELECT * FROM t;
CREATE INDEX t_k ON t USING gpubtree (k) INCLUDE (v);
CREATE INDEX b_k ON b (k) INCLUDE (v);
VACUUM ANALYZE t;
VACUUM ANALYZE b;
});
wait_service($node);

sub status_of { return service_stat($node, $_[0]); }

# answers(TABLE): a bitmap scan's range and = ANY, and range aggregates.
sub answers
{
	my ($t) = @_;
	return $node->safe_psql(
		'postgres', "SET enable_seqscan = off; SET enable_indexscan = off;
		SET enable_indexonlyscan = off; SET max_parallel_workers_per_gather = 0;
		SET gpubtree.enable_lookup = off;
		SELECT count(*) || ':' || sum(v) FROM $t WHERE k BETWEEN 1000 AND 150000;
		SELECT count(*) || ':' || sum(v) FROM $t WHERE k = ANY (ARRAY(SELECT generate_series(0, 250000, 3)::int8));
		RESET ALL;
		SELECT count(*) || ':' || sum(v) || ':' || min(v) || ':' || max(v) FROM $t WHERE k BETWEEN 20000 AND 260000");
}

sub mirror
{
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM gpubtree_mirrors() WHERE index = 't_k'::regclass AND current");
}
sub verify_count { return $node->safe_psql('postgres', "SELECT count(*) FROM gpubtree_verify('t_k')"); }

# by_service: whether the service answers the range aggregate.
sub by_service
{
	return $node->safe_psql('postgres',
		'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT sum(v) FROM t WHERE k BETWEEN 20000 AND 260000')
	  =~ /Answered by: GPU service/ ? 1 : 0;
}

is(answers('t'), answers('b'), 'first answers');
is(mirror(), 1, 'a current mirror');
my $inv0 = status_of('invalidations');
my $builds0 = status_of('mirror_builds');

# 1. One transaction updates 20000 rows: five times the log, a tenth of
#    the mirror (INCLUDE v changes, so each update is a new index entry).
$node->safe_psql('postgres', 'UPDATE t SET v = v + 1 WHERE k % 10 = 3');
$node->safe_psql('postgres', 'UPDATE b SET v = v + 1 WHERE k % 10 = 3');
is(answers('t'), answers('b'), 'large update: answers');
is(status_of('invalidations'), $inv0, 'large update: no invalidation');
is(mirror(), 1, 'large update: the mirror stays current');
is(status_of('mirror_builds'), $builds0, 'large update: no rebuild');
is(verify_count(), 0, 'large update: the mirror holds the index');

# 2. Forty transactions of 1000 rows each, back to back: ten logs' worth.
$node->safe_psql(
	'postgres', q{
DO $$
BEGIN
	FOR i IN 0..39 LOOP
		UPDATE t SET v = v - 1 WHERE k % 200 = i;
		UPDATE b SET v = v - 1 WHERE k % 200 = i;
		COMMIT;
	END LOOP;
END $$;
});
is(answers('t'), answers('b'), 'many transactions: answers');
is(status_of('invalidations'), $inv0, 'many transactions: no invalidation');
is(status_of('mirror_builds'), $builds0, 'many transactions: no rebuild');

# 3. After VACUUM the aggregate is answered from the same mirror; with
#    client_min_messages = debug1, VACUUM says what it did to the mirror.
my ($vacuum_out, $vacuum_err) = ('', '');
$node->psql('postgres', 'SET client_min_messages = debug1; VACUUM t',
	stdout => \$vacuum_out, stderr => \$vacuum_err, on_error_die => 1);
like($vacuum_err, qr/gpubtree: index "t_k": [1-9][0-9]* dead row versions sent to its mirror, [0-9]+ of its entries still there removed, in [0-9.]+ ms after nbtree's pass/,
	'VACUUM: its sweep of the mirror said');
like($vacuum_err, qr/gpubtree: index "t_k": its mirror told of [0-9]+ all-visible heap blocks of [1-9][0-9]* in [0-9.]+ ms/,
	'VACUUM: the visibility it told the mirror said');
$node->safe_psql('postgres', 'VACUUM b');
is(answers('t'), answers('b'), 'after VACUUM: answers');
is(by_service(), 1, 'after VACUUM: answered by the service');
is(status_of('mirror_builds'), $builds0, 'after VACUUM: no rebuild');

# 4. 40000 small transactions from 4 sessions: more transaction IDs than the
#    service's table of outcomes first holds (65536 / 2 behind the horizon
#    makes it move), its stamps settled as the horizon moves on.
my $inv1 = status_of('invalidations');    # VACUUM's sweep moved the mirror to a new generation
append_to_file("$dir/churn.sql",
	"\\set id random(1, 200000)\nBEGIN;\nUPDATE t SET v = v + 1 WHERE k = :id;\nUPDATE b SET v = v + 1 WHERE k = :id;\nEND;\n");
$node->command_ok([ 'pgbench', '-n', '-c', 4, '-t', 10000, '-f', "$dir/churn.sql", '-d', $node->connstr('postgres') ],
	'churn: pgbench ran');
is(answers('t'), answers('b'), 'churn: answers');
is(by_service(), 1, 'churn: answered by the service');
is(status_of('invalidations'), $inv1, 'churn: no invalidation');
is(verify_count(), 0, 'churn: the mirror holds the index');

# 5. A bulk load larger than an eighth of the mirror invalidates it instead.
$node->safe_psql(
	'postgres', 'INSERT INTO t SELECT g, g % 7 FROM generate_series(200001, 240000) g;
	INSERT INTO b SELECT g, g % 7 FROM generate_series(200001, 240000) g');
cmp_ok(status_of('invalidations'), '>', $inv0, 'bulk load: invalidated');
is(answers('t'), answers('b'), 'bulk load: answers');

# 6. A load of a twelfth (past the sixteenth a quiet mirror folds in, short
#    of the eighth that writers have to reach): once no change has come
#    for a while, the service makes a new tree with the delta in it, off
#    the query path; the answers stay right.  (The table is large enough
#    that a twelfth is more than the fewest entries worth a new tree.)
$node->safe_psql(
	'postgres', 'CREATE TABLE q (k int8, v int8);
	INSERT INTO q SELECT g, g % 1000 FROM generate_series(1, 1200000) g;
	CREATE TABLE qb AS SELECT * FROM q;
	VACUUM ANALYZE q; VACUUM ANALYZE qb;
	CREATE INDEX q_k ON q USING gpubtree (k) INCLUDE (v);
	CREATE INDEX qb_k ON qb (k) INCLUDE (v)');
my $q_mirror = "FROM gpubtree_mirrors() WHERE index = 'q_k'::regclass AND current";
is($node->safe_psql('postgres', "SELECT rebuilds || ':' || delta $q_mirror"), '0:0', 'quiet: built, no delta');
$node->safe_psql(
	'postgres', 'INSERT INTO q SELECT g, g % 7 FROM generate_series(1200001, 1300000) g;
	INSERT INTO qb SELECT g, g % 7 FROM generate_series(1200001, 1300000) g');
ok($node->poll_query_until('postgres', "SELECT rebuilds = 1 AND delta = 0 $q_mirror"),
	'quiet: the load folded into a new tree');
my $q_sum = 'SELECT count(*) || \':\' || sum(v) FROM %s WHERE k BETWEEN 1000 AND 1250000';
is(node_vs_plan($node, 'postgres', sprintf($q_sum, 'q')),
	'same', 'quiet: the answer through the new tree');
is( $node->safe_psql('postgres', sprintf($q_sum, 'q')),
	$node->safe_psql('postgres', sprintf($q_sum, 'qb')), 'quiet: the answer is btree\'s');
is($node->safe_psql('postgres', "SELECT count(*) FROM gpubtree_verify('q_k')"),
	0, 'quiet: the new tree holds the index');

# 7. The new tree's engine is built on a thread of its own while the
#    service answers from the old tree and logs what changes meanwhile
#    (gpubtree.debug_rebuild_delay holds that build open): writes of every
#    kind during the build reach the new tree, the answers stay right
#    before and after the swap; a VACUUM during the build gives it up
#    without waiting for it, and a later one is made; the service stops
#    cleanly with a build running.
$node->append_conf('postgresql.conf', 'gpubtree.debug_rebuild_delay = 6000');
$node->reload;
my $next_load = 1300001;
my @kinds = (
	[ 'insert', 'INSERT INTO %s SELECT g, g % 11 FROM generate_series(1, 2000) g' ],
	[ 'update', 'UPDATE %s SET v = v + 1 WHERE k BETWEEN 5000 AND 7000' ],
	[ 'delete', 'DELETE FROM %s WHERE k BETWEEN 9000 AND 10000' ],
	[ 'insert and delete in one transaction',
		'BEGIN; INSERT INTO %1$s VALUES (42, 42); DELETE FROM %1$s WHERE k BETWEEN 11000 AND 11100; COMMIT' ]);

# A twelfth more rows in both tables; then wait until the new tree's
# entries are all copied and its engine is being built (rebuilds unchanged).
sub load_until_building
{
	my ($rebuilds) = @_;
	my $to = $next_load + 110000;
	$node->safe_psql('postgres',
		"INSERT INTO q SELECT g, g % 7 FROM generate_series($next_load, $to) g;
		INSERT INTO qb SELECT g, g % 7 FROM generate_series($next_load, $to) g");
	$next_load = $to + 1;
	return $node->poll_query_until('postgres',
		"SELECT rebuilds = $rebuilds AND rebuild_copied >= (SELECT count(*) FROM q) $q_mirror");
}
my $q_all = 'SELECT count(*) || \':\' || sum(v) || \':\' || min(k) || \':\' || max(k) FROM %s WHERE k BETWEEN 1 AND 99999999';
ok(load_until_building(1), 'build beside the service: its entries copied, its engine being built');
foreach my $kind (@kinds)
{
	my ($what, $sql) = @$kind;
	$node->safe_psql('postgres', sprintf($sql, 'q') . ';' . sprintf($sql, 'qb'));
	is(node_vs_plan($node, 'postgres', sprintf($q_sum, 'q')), 'same',
		"during the build, after $what: the answer equals the ordinary plan's");
	is( $node->safe_psql('postgres', sprintf($q_all, 'q')),
		$node->safe_psql('postgres', sprintf($q_all, 'qb')), "during the build, after $what: the answer is btree's");
}
is($node->safe_psql('postgres', "SELECT rebuilds $q_mirror"), 1, 'during the build: still the old tree');
ok($node->poll_query_until('postgres', "SELECT rebuilds = 2 AND rebuild_copied IS NULL $q_mirror"),
	'the build over: the new tree swapped in');
is(node_vs_plan($node, 'postgres', sprintf($q_sum, 'q')), 'same', 'after the swap: the answer equals the ordinary plan\'s');
is( $node->safe_psql('postgres', sprintf($q_all, 'q')),
	$node->safe_psql('postgres', sprintf($q_all, 'qb')), 'after the swap: the answer is btree\'s');
is($node->safe_psql('postgres', "SELECT count(*) FROM gpubtree_verify('q_k')"),
	0, 'after the swap: the new tree holds the index, the writes made during the build too');

# Given up: VACUUM's sweep during the build (the table has dead rows from
# the writes above) cancels it; the service answers at once, not after the
# build's delay, and makes a new tree later.
ok(load_until_building(2), 'a second build beside the service');
$node->safe_psql('postgres', 'DELETE FROM q WHERE k % 97 = 0; DELETE FROM qb WHERE k % 97 = 0');
my $t0 = [gettimeofday];
$node->safe_psql('postgres', 'VACUUM q; VACUUM qb');
is($node->safe_psql('postgres', "SELECT rebuilds = 2 AND (rebuild_copied IS NULL OR rebuild_copied < (SELECT count(*) FROM q)) $q_mirror"),
	't', 'VACUUM during the build: the build given up');
is(node_vs_plan($node, 'postgres', sprintf($q_sum, 'q')), 'same', 'VACUUM during the build: the answer equals the ordinary plan\'s');
cmp_ok(tv_interval($t0), '<', 3, 'VACUUM during the build: neither it nor the query waited for the build given up');
ok($node->poll_query_until('postgres', "SELECT rebuilds >= 3 AND delta = 0 AND rebuild_copied IS NULL $q_mirror"),
	'after the VACUUM: a new tree made later');
is( $node->safe_psql('postgres', sprintf($q_all, 'q')),
	$node->safe_psql('postgres', sprintf($q_all, 'qb')), 'after the VACUUM: the answer is btree\'s');
is($node->safe_psql('postgres', "SELECT count(*) FROM gpubtree_verify('q_k')"),
	0, 'after the VACUUM: the new tree holds the index');

# A stop (and a start) with a build running: clean, and right afterwards.
ok(load_until_building(3), 'a third build beside the service');
$node->stop('fast');
$node->start;
wait_service($node);
is( $node->safe_psql('postgres', sprintf($q_all, 'q')),
	$node->safe_psql('postgres', sprintf($q_all, 'qb')), 'stopped during a build: the answer after the restart is btree\'s');
ok(!$node->log_contains(qr/terminated by signal|server process .* was terminated/),
	'stopped during a build: no process crashed');

$node->stop;
done_testing();
