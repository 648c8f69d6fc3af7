# t/002_kill_load.pl: crashes under load.  pgbench clients insert, update
# and delete in transactions (some rolled back), VACUUM, and run bitmap
# scans answered by the service (ranges and = ANY, also inside their writing
# transactions) on a table with two gpubtree indexes and a plain btree copy
# of one of them.  Then
#   (a) one client backend is killed with SIGKILL: the postmaster restarts
#       every backend and the service (crash recovery);
#   (b) the server is stopped with `pg_ctl stop -m immediate` and restarted;
#   (c) the load simply ends (no crash).
# After each: the service runs again; bitmap scans served by the service,
# not by nbtree, give the same count and sums over several ranges, and the
# same full sorted row lists, as a sequential scan and as the btree index;
# gpubtree_verify() finds no problem in the mirror of either gpubtree index;
# amcheck (gpubtree_index_check with heapallindexed and parent) verifies
# them.  CLIENTS (6) and LOAD_S (6 seconds) size the load.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $clients = $ENV{CLIENTS} // 6;
my $load_s = $ENV{LOAD_S} // 6;

my $node = gpubtree_node('kill_load');
# (a) needs the postmaster's crash restart, which Cluster.pm turns off.
$node->append_conf('postgresql.conf', 'restart_after_crash = on');
$node->start;
my $dir = PostgreSQL::Test::Utils::tempdir;

# Forced bitmap scans; = ANY of two or more keys goes to the service.
my $bitmap = 'SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;
SET max_parallel_workers_per_gather = 0; SET gpubtree.min_gpu_batch = 2; SET gpubtree.enable_lookup = off;';
my $seq = 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE EXTENSION amcheck;
CREATE TABLE kl (id bigserial PRIMARY KEY, k int8, k2 int4, v float8) WITH (autovacuum_enabled = off);
INSERT INTO kl (k, k2, v) SELECT (g * 7919) % 100000, g % 13, g / 4.0 FROM generate_series(1, 100000) g;
CREATE INDEX kl_k ON kl USING gpubtree (k) INCLUDE (v);
CREATE INDEX kl_k2 ON kl USING gpubtree (k2, k);
CREATE INDEX kl_k_bt ON kl (k) INCLUDE (v);
VACUUM ANALYZE kl;
});

# The load.  Each writing transaction takes at most one row lock (no
# deadlocks), and does its scan last, after all its index inserts (so even
# the rolled-back ones have logged every entry: see the isolation test
# rollback.spec for the other case).
append_to_file("$dir/write.sql", q{\set k random(0, 99990)
\set id random(1, 130000)
\set r random(0, 4)
BEGIN;
INSERT INTO kl (k, k2, v) SELECT :k + g, (:k + g) % 13, g FROM generate_series(1, 8) g;
UPDATE kl SET k = k + 3, v = v + 1 WHERE id = :id;
SELECT count(*), sum(v) FROM (SELECT v FROM kl WHERE k BETWEEN :k AND :k + 20 OFFSET 0) s;
\if :r = 0
ROLLBACK;
\else
COMMIT;
\endif
});
append_to_file("$dir/delete.sql", q{\set id random(1, 130000)
DELETE FROM kl WHERE id = :id;
});
append_to_file("$dir/read.sql", q{\set lo random(0, 99000)
\set k2 random(0, 12)
SELECT count(*), sum(v) FROM (SELECT v FROM kl WHERE k BETWEEN :lo AND :lo + 1000 OFFSET 0) s;
SELECT count(*), sum(v) FROM kl WHERE k BETWEEN :lo AND :lo + 3000;
SELECT id FROM kl WHERE k = ANY (ARRAY[:lo, :lo + 7, :lo + 77, :lo + 777]);
SELECT count(*) FROM (SELECT 1 FROM kl WHERE k2 BETWEEN :k2 AND :k2 + 1 OFFSET 0) s;
});
append_to_file("$dir/vacuum.sql", "VACUUM kl;\n");

# load(SECONDS, TAG): pgbench in the background, its output in
# $dir/pgbench.TAG.log; returns its IPC::Run handle.
sub load
{
	my ($seconds, $tag) = @_;
	# (the victim of (a) is found by its application name)
	local $ENV{PGAPPNAME} = 'pgbench';
	local $ENV{PGOPTIONS} = ($ENV{PGOPTIONS} // '')
	  . ' -c enable_seqscan=off -c enable_indexscan=off -c enable_indexonlyscan=off'
	  . ' -c gpubtree.min_gpu_batch=2 -c gpubtree.enable_lookup=off -c max_parallel_workers_per_gather=0';
	return IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', 2, '-T', $seconds,
			'--max-tries=5', '-f', "$dir/write.sql\@10", '-f', "$dir/delete.sql\@3",
			'-f', "$dir/read.sql\@10", '-f', "$dir/vacuum.sql\@1",
			'-d', $node->connstr('postgres')
		],
		'>', "$dir/pgbench.$tag.log", '2>&1');
}

# q_gpubtree(IDX, QUERY) / q_btree(QUERY) / q_seq(QUERY): the query's output
# through a forced bitmap scan on the gpubtree index IDX (the other indexes
# on k and k2 dropped for the duration of the transaction), on the btree
# copy (gpubtree indexes dropped), or a sequential scan; errors as output.
sub output
{
	my ($rc, $out, $err) = $node->psql('postgres', $_[0]);
	return $rc == 0 ? $out : "$out\n(failed: $err)";
}

sub q_gpubtree
{
	my ($idx, $q) = @_;
	my $drop = $idx eq 'kl_k2' ? 'kl_k_bt, kl_k' : 'kl_k_bt, kl_k2';
	return output("BEGIN; DROP INDEX $drop; $bitmap $q; ROLLBACK;");
}
sub q_btree { return output("BEGIN; DROP INDEX kl_k, kl_k2; $bitmap $_[0]; ROLLBACK;"); }
sub q_seq { return output("$seq $_[0];"); }

# same(IDX, QUERY, [any]): gpubtree index IDX (its bitmap scan served by the
# service, unless "any": then whatever plan the planner makes of it with
# that index) = seqscan = btree.
sub same
{
	my ($idx, $q, $any) = @_;
	my $s = q_seq($q);
	is_output(q_gpubtree($idx, $q), $s, "gpubtree $idx = seqscan: $q");
	is_output(q_btree($q), $s, "btree = seqscan: $q");
	return if $any;

	# Which scan EXPLAIN shows, and how many of its scans the service
	# answered, read from the plan's own lines (once a grep of the plan in a
	# shell pipeline whose other end could fail).
	my $plan = q_gpubtree($idx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q");
	my ($scans, $nbtree) =
	  $plan =~ /Service: (\d+) scans, .*, (\d+) answered by nbtree/;
	ok( $plan =~ /Bitmap Index Scan on $idx\b/
		  && defined $scans
		  && $scans > 0
		  && $nbtree == 0,
		"the service answered the bitmap scan of: $q")
	  or diag("the plan:\n$plan");
}

# warm: have the service build (and the session wait for, under the node's
# gpubtree.build_wait) current mirrors of both gpubtree indexes; the checks'
# transactions drop indexes, and so hold locks no build can wait for.
sub warm
{
	$node->safe_psql('postgres', "SELECT gpubtree_count('kl_k', 0, 1), gpubtree_count('kl_k2', 0, 1)");
}

sub verify
{
	my ($label) = @_;
	note($label);
	ok(wait_service($node), "$label: server and service up again");
	warm();

	# (OFFSET 0 keeps the aggregate above the scan: these check bitmap scans)
	same('kl_k', 'SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k BETWEEN 0 AND 99999 OFFSET 0) s');
	same('kl_k', 'SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k BETWEEN 1000 AND 1999 OFFSET 0) s');
	same('kl_k', 'SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k >= 95000 OFFSET 0) s');
	same('kl_k', 'SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k < 500 OFFSET 0) s');
	same('kl_k', 'SELECT count(*), sum(id) FROM (SELECT id FROM kl WHERE k = ANY (ARRAY[0, 7, 77, 777, 7777, 77777, 99999, 100005]) OFFSET 0) s');
	same('kl_k', 'SELECT ctid, id, k, k2, v FROM kl WHERE k BETWEEN 40000 AND 42000 ORDER BY ctid');
	same('kl_k', 'SELECT ctid, id, k, k2, v FROM kl WHERE k >= 99000 ORDER BY ctid');
	same('kl_k2', 'SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM kl WHERE k2 BETWEEN 3 AND 5 OFFSET 0) s');
	same('kl_k2', 'SELECT count(*), sum(id) FROM (SELECT id FROM kl WHERE k2 = ANY (ARRAY[0, 12, 13]) OFFSET 0) s');
	same('kl_k2', 'SELECT ctid, id, k, k2 FROM kl WHERE k2 BETWEEN 6 AND 7 AND k + 0 < 20000 ORDER BY ctid');
	# Range aggregates as written, whatever answers them.
	same('kl_k', 'SELECT count(*), sum(k), sum(v), min(k), max(v) FROM kl WHERE k BETWEEN 1000 AND 1999', 'any');
	same('kl_k', 'SELECT count(*), sum(k), sum(v), avg(v) FROM kl WHERE k >= 50000', 'any');
	same('kl_k2', 'SELECT count(*), sum(k), min(k), max(k) FROM kl WHERE k2 BETWEEN 3 AND 5', 'any');
	for my $idx ('kl_k', 'kl_k2')
	{
		warm();    # so that the service holds current mirrors
		is( $node->safe_psql(
				'postgres', "SELECT count(*) || ' problems' ||
			coalesce(', first: ' || min(problem || ' ' || tid), '') FROM gpubtree_verify('$idx')"),
			'0 problems',
			"$label: gpubtree_verify('$idx')");
		my ($rc, $out, $err) =
		  $node->psql('postgres', "SELECT gpubtree_index_check('$idx', true, true)");
		is($rc, 0, "$label: amcheck on $idx") or diag($err);
	}
	note($node->safe_psql('postgres', 'SELECT count(*) FROM kl') . ' rows');
}

verify('before the load');

# (a) SIGKILL of one client backend under load.
my $load = load(60, 'a');
sleep $load_s;
my $victim = $node->safe_psql(
	'postgres', q{SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench'
	AND backend_type = 'client backend' ORDER BY backend_start LIMIT 1});
isnt($victim, '', '(a) a pgbench backend to kill');
kill 'KILL', $victim if $victim ne '';
$load->finish;
like(
	slurp_file("$dir/pgbench.a.log"),
	qr/terminating connection because of crash of another server process|server closed the connection/,
	'(a) the clients saw the crash restart');
# (the postmaster may write its line a moment after the clients noticed)
ok($node->wait_for_log(qr/all server processes terminated; reinitializing/),
	'(a) the postmaster reinitialized after the killed backend');
verify('(a) after kill -9 of a client backend');

# (b) immediate shutdown under load, restart.
$load = load(60, 'b');
sleep $load_s;
$node->stop('immediate');
$load->finish;
ok($node->start(fail_ok => 1), '(b) restart after pg_ctl stop -m immediate');
verify('(b) after pg_ctl stop -m immediate');

# (c) more load after the crashes, to its end.
$load = load($load_s, 'c');
ok($load->finish, '(c) pgbench ran to its end without errors')
  or diag(slurp_file("$dir/pgbench.c.log"));
note(join "\n", grep { /^(number of (transactions actually processed|failed transactions)|tps =)/ }
	  split /\n/, slurp_file("$dir/pgbench.c.log"));
is(service_stat($node, 'requests > 0'), 't', '(c) the service answered requests');
verify('(c) after load without a crash');

$node->stop;
done_testing();
