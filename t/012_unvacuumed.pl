# t/012_unvacuumed.pl: the first aggregate over a table that was never
# vacuumed, after a crash restart, after pg_dump / pg_restore (whose
# CREATE INDEX builds the mirrors before pg_restore ends), after a
# standby's promotion (the rows replayed from WAL) and after a logical
# subscriber's initial sync, is
# answered by the service from the mirror's stamps (EXPLAIN ANALYZE:
# "Answered by: GPU service", no entry checked in the heap; the mirror
# decided by its stamps, not the visibility map), and equals the ordinary
# plan's.  The export decides the loaded rows from their heap tuples
# (export_heap.c).  Rows of a transaction in flight at the crash (aborted
# by the restart, their hint bits never set) stay out; so do the entries of
# rows deleted, updated away and rolled back before the crash (a table
# written to, then restarted).  A build while a snapshot older than the
# load still runs stamps the loaded rows with their inserter.  Autovacuum
# is off,
# so that no VACUUM makes the pages all-visible meanwhile.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = gpubtree_node('unvacuumed', allows_streaming => 'logical');
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
my $dir = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE TABLE u (k int8, v int8);
INSERT INTO u SELECT g, g % 1000 FROM generate_series(1, 200000) g;
CREATE INDEX u_k ON u USING gpubtree (k) INCLUDE (v);
CREATE TABLE w (k int8, d int8, v int8);
INSERT INTO w SELECT g % 50000, g % 7, g FROM generate_series(1, 120000) g;
CREATE INDEX w_kd ON w USING gpubtree (k DESC, d) INCLUDE (v);
CREATE TABLE x (k int8, v int8);
INSERT INTO x SELECT g, g % 1000 FROM generate_series(1, 100000) g;
CREATE INDEX x_k ON x USING gpubtree (k) INCLUDE (v);
});
# x written to before the crash, never vacuumed: a fifth of its index
# entries are of dead rows (deleted, updated away, an aborted insert's),
# which the export leaves out, so that the mirror still decides by stamps.
$node->safe_psql(
	'postgres', q{
DELETE FROM x WHERE k % 10 = 0;
UPDATE x SET v = v + 1 WHERE k % 10 = 1;
UPDATE x SET k = k + 1000000 WHERE k % 20 = 2;
BEGIN; INSERT INTO x SELECT g, 7 FROM generate_series(1, 5000) g; ROLLBACK;
});

my $query_u = 'SELECT count(*) || \':\' || sum(v) FROM u WHERE k BETWEEN 1000 AND 150000';
my $query_w = 'SELECT count(*) || \':\' || sum(v) FROM w WHERE k BETWEEN 100 AND 40000';

# first_answer(DB, QUERY, INDEX, WHAT): the first aggregate over the
# table, under the planner's own plan: answered by the service with no
# heap check, the mirror deciding by its stamps, the answer the ordinary
# plan's.
sub first_answer
{
	my ($db, $q, $index, $what, $on) = @_;
	$on //= $node;
	my $plan = $on->safe_psql($db,
		"SET max_parallel_workers_per_gather = 0; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $q");
	like($plan, qr/Answered by: GPU service/, "$what: the service answered");
	like($plan, qr/Entries Checked in Heap: 0\b/, "$what: no entry checked in the heap");
	is( $on->safe_psql(
			$db, "SELECT decided_by FROM gpubtree_mirrors() WHERE index = '$index'::regclass AND current"),
		'stamps',
		"$what: the mirror decides by its stamps");
	is(node_vs_plan($on, $db, $q), 'same', "$what: the answer is the ordinary plan's");
}

# A transaction in flight at the crash: its rows are in the heap and the
# index, never committed.
my $inflight = $node->background_psql('postgres');
$inflight->query_safe('BEGIN');
$inflight->query_safe('INSERT INTO u SELECT g, 1 FROM generate_series(200001, 201000) g');

$node->stop('immediate');
$inflight->quit;
$node->start;
ok(wait_service($node), 'the service runs after the crash restart');
first_answer('postgres', $query_u, 'u_k', 'after a crash restart');
first_answer('postgres', $query_w, 'w_kd', 'after a crash restart, (k DESC, d) INCLUDE (v)');
first_answer('postgres', 'SELECT count(*) || \':\' || sum(v) FROM x WHERE k BETWEEN 500 AND 1090000',
	'x_k', 'after a crash restart, a table deleted from and updated');
is($node->safe_psql('postgres', "SELECT count(*) FROM gpubtree_verify('x_k')"),
	0, 'after a crash restart: the mirror of the table written to holds the index');
is($node->safe_psql('postgres', 'SELECT count(*) FROM u WHERE k > 200000'),
	0, 'the in-flight rows are gone');
is(node_vs_plan($node, 'postgres', 'SELECT count(*) || \':\' || sum(v) FROM u WHERE k BETWEEN 199000 AND 300000'),
	'same', 'the in-flight rows are not counted');

# pg_dump, pg_restore into a new database: nothing vacuumed there.
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/dump", '-d', $node->connstr('postgres') ],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), "$dir/dump" ],
	'pg_restore');
# Built inside each CREATE INDEX (gpubtree.build_after_create = wait, the
# default): current when pg_restore ends, before any query asks.
is( $node->safe_psql(
		'restored', q{SELECT string_agg(index::regclass || ':' || current || ':' || decided_by, ' ' ORDER BY index::regclass::text)
		FROM gpubtree_mirrors() WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND index::regclass::text IN ('u_k', 'w_kd', 'x_k')}),
	'u_k:true:stamps w_kd:true:stamps x_k:true:stamps',
	'after pg_restore: every mirror current when it ends, deciding by its stamps');
first_answer('restored', $query_u, 'u_k', 'after pg_restore');
first_answer('restored', $query_w, 'w_kd', 'after pg_restore, (k DESC, d) INCLUDE (v)');

# Deletes and updates after the export reach the mirror through the
# capture trigger.
$node->safe_psql('restored', 'DELETE FROM u WHERE k % 3 = 0; UPDATE u SET v = v + 1 WHERE k % 5 = 0');
is(node_vs_plan($node, 'restored', $query_u), 'same', 'after pg_restore: answers after deletes and updates');
is($node->safe_psql('restored', "SELECT count(*) FROM gpubtree_verify('u_k')"),
	0, 'after pg_restore: the mirror holds the index');

# A standby promoted: a table loaded and indexed on the primary after the
# base backup reaches it as WAL (no hint bits: the commit log decides).
$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('promoted');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
$node->safe_psql(
	'postgres', q{
CREATE TABLE p (k int8, v int8);
INSERT INTO p SELECT g, g % 777 FROM generate_series(1, 150000) g;
CREATE INDEX p_k ON p USING gpubtree (k) INCLUDE (v);
});
$node->wait_for_catchup($standby);
$standby->promote;
ok(wait_service($standby), 'the service runs after the promotion');
first_answer('postgres', 'SELECT count(*) || \':\' || sum(v) FROM p WHERE k BETWEEN 500 AND 120000',
	'p_k', 'after a promotion', $standby);

$standby->stop;

# A logical-replication subscriber's initial sync: the rows copied into a
# table whose gpubtree index was made before the subscription (an empty
# mirror), never vacuumed there.
$node->safe_psql(
	'postgres', q{
CREATE TABLE s (k int8 PRIMARY KEY, v int8);
INSERT INTO s SELECT g, g % 555 FROM generate_series(1, 150000) g;
CREATE PUBLICATION pub_s FOR TABLE s;
});
my $subscriber = gpubtree_node('subscriber');
$subscriber->append_conf('postgresql.conf', "autovacuum = off\n");
$subscriber->start;
$subscriber->safe_psql('postgres', 'CREATE EXTENSION gpubtree');
ok(wait_service($subscriber), 'the subscriber\'s service runs');
$subscriber->safe_psql(
	'postgres', q{
CREATE TABLE s (k int8 PRIMARY KEY, v int8);
CREATE INDEX s_k ON s USING gpubtree (k) INCLUDE (v);
});
$subscriber->safe_psql('postgres',
	"CREATE SUBSCRIPTION sub_s CONNECTION '" . $node->connstr . " dbname=postgres' PUBLICATION pub_s");
$subscriber->wait_for_subscription_sync($node, 'sub_s');
first_answer('postgres', 'SELECT count(*) || \':\' || sum(v) FROM s WHERE k BETWEEN 500 AND 120000',
	's_k', 'after a subscriber\'s initial sync', $subscriber);
# Changes replicated after it reach the mirror through the capture
# trigger, which fires in the apply worker too.
$node->safe_psql('postgres', 'DELETE FROM s WHERE k % 4 = 0; UPDATE s SET v = v + 1 WHERE k % 3 = 0');
$node->wait_for_catchup('sub_s');
is(node_vs_plan($subscriber, 'postgres', 'SELECT count(*) || \':\' || sum(v) FROM s WHERE k BETWEEN 500 AND 120000'),
	'same', 'after a subscriber\'s initial sync: answers after replicated deletes and updates');
is($subscriber->safe_psql('postgres', "SELECT count(*) FROM gpubtree_verify('s_k')"),
	0, 'after a subscriber\'s initial sync: the mirror holds the index');
$subscriber->safe_psql('postgres', 'DROP SUBSCRIPTION sub_s');

$subscriber->stop;

# A build while a snapshot older than the load still runs (a long query
# beside a load and its CREATE INDEX): the loaded rows' inserter committed
# after that snapshot, so not every snapshot sees them; the export stamps
# their entries with it instead of leaving them to the visibility map
# (export_heap.c: ROW_COMMITTED).  New snapshots are answered from the
# stamps; the old one, which sees none of the load, through the mirror too,
# equal to its ordinary plan.  Built inside CREATE INDEX, and by the job.
for my $mode ('wait', 'background')
{
	my $t = "old_$mode";
	my $what = "$mode, a snapshot older than the load running";
	my $q = "SELECT count(*) || ':' || coalesce(sum(v), 0) FROM $t WHERE k BETWEEN 700 AND 52000";
	$node->safe_psql('postgres', "CREATE TABLE $t (k int8, v int8)");
	my $old = $node->background_psql('postgres');
	$old->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	$old->query_safe("SELECT count(*) FROM $t");
	$node->safe_psql(
		'postgres', "INSERT INTO $t SELECT g, g % 1000 FROM generate_series(1, 60000) g;
		UPDATE $t SET v = v + 1 WHERE k % 200 = 3;
		SET gpubtree.build_after_create = $mode; CREATE INDEX ${t}_k ON $t USING gpubtree (k) INCLUDE (v)");
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM gpubtree_mirrors() WHERE index = '${t}_k'::regclass AND current");
	first_answer('postgres', $q, "${t}_k", $what);
	my $via_node = $old->query_safe(
		"SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; "
		  . "SET enable_bitmapscan = off; $q");
	my $plan = $old->query_safe("SET gpubtree.device = off; $q");
	is($via_node, $plan, "$what: the old snapshot's answer is its ordinary plan's");
	is($plan, '0:0', "$what: the old snapshot sees none of the load");
	like($old->query_safe("SET gpubtree.device = auto; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $q"),
		qr/Answered by: GPU service/, "$what: the old snapshot answered by the service");
	$old->query_safe('COMMIT');
	$old->quit;
}

$node->stop;
done_testing();
