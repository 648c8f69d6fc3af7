# t/015_many_sessions.pl: 64 reading sessions through the aggregate node
# while 8 writers commit, then the same load under faults.
#
# Each reader transaction (REPEATABLE READ, so one snapshot, taken up to
# 100 ms before, while writers commit) runs a random range aggregate through the GpubtreeAggregate node (count/sum/min/max; a
# filter on an INCLUDE column and a FILTER aggregate; GROUP BY a small
# INCLUDE column; = ANY of a few hundred keys), then the same query with
# SET LOCAL gpubtree.device = off, and check_same() raises "wrong answer"
# when the two differ.  Writers commit (or roll back) 1-row updates,
# inserts and deletes meanwhile, and one session runs VACUUM every second.
#   1. The load alone: no failed transaction, the service answered a fair
#      share of the node's queries, several sessions' aggregates were
#      answered in one round, gpubtree_verify() clean.
#   2. The load while the service is stopped (SIGTERM: it exits and the
#      postmaster starts it again) or hung past gpubtree.service_timeout
#      (SIGSTOP, then SIGCONT), and random readers are cancelled
#      mid-query (pg_cancel_backend): every completed transaction compared
#      equal, failures only 57014 (canceling statement due to user
#      request), pgbench ends in time, the service answers again after.
#   3. The load while the service is killed with SIGKILL: the postmaster
#      restarts every backend (crash recovery), so readers fail with lost
#      connections, but none with a wrong answer, pgbench ends in time, and
#      the service comes back, answers and its mirror verifies clean.
# Runs on whatever engine the service has (the CPU engine without a GPU).
# CLIENTS (64), WRITERS (8) and LOAD_S (20 seconds) size the load.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $clients = $ENV{CLIENTS} // 64;
my $writers = $ENV{WRITERS} // 8;
my $load_s = $ENV{LOAD_S} // 20;

my $node = gpubtree_node('many_sessions');
# (log_min_messages: the service's DEBUG1 summary of its batched rounds; the
# pgbench sessions log warnings only)
$node->append_conf('postgresql.conf',
	"max_connections = " . ($clients + $writers + 20) . "\nrestart_after_crash = on\nlog_min_messages = debug1\n");
$node->start;
my $dir = PostgreSQL::Test::Utils::tempdir;
my $bindir = $node->config_data('--bindir');

sub status_of { return service_stat($node, $_[0]); }

sub reload_batch_window
{
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET gpubtree.batch_window = $_[0]; SELECT pg_reload_conf()");
}

# m: unique keys 0..199999 at first; v and c (c = k % 7) in the index.
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE TABLE m (k int8, v int8, c int4);
INSERT INTO m SELECT (g * 7919) % 200000, g, ((g * 7919) % 200000) % 7 FROM generate_series(1, 200000) g;
CREATE INDEX m_k ON m USING gpubtree (k) INCLUDE (v, c);
VACUUM ANALYZE m;
});
create_check_same($node);
wait_service($node);
plan skip_all => 'SKIPPED: the service has no engine (' . status_of('status') . ')'
  if status_of('engine') eq 'none';

# The readers' queries: NAME => [pgbench \set lines, the query's columns
# (each one value), the query].
my %shapes = (
	range => [
		"\\set lo random(0, 195000)\n\\set w random(2000, 20000)\n",
		[qw(n s mn mx)],
		'SELECT count(*) AS n, coalesce(sum(v), 0) AS s, coalesce(min(v), -1) AS mn,
	coalesce(max(v), -1) AS mx FROM m WHERE k BETWEEN :lo AND :lo + :w'
	],
	filter => [
		"\\set lo random(0, 195000)\n\\set w random(2000, 20000)\n\\set vlo random(0, 600000)\n\\set c random(0, 6)\n",
		[qw(n s n3 mk)],
		'SELECT count(*) AS n, coalesce(sum(v), 0) AS s, count(*) FILTER (WHERE c = 3) AS n3,
	coalesce(max(k), -1) AS mk FROM m WHERE k BETWEEN :lo AND :lo + :w AND (v > :vlo OR c = :c)'
	],
	group => [
		"\\set lo random(0, 195000)\n\\set w random(2000, 20000)\n",
		[qw(g)],
		"SELECT coalesce(string_agg(c || '/' || n || '/' || s || '/' || mn, ',' ORDER BY c), '-') AS g
	FROM (SELECT c, count(*) AS n, sum(v) AS s, min(k) AS mn FROM m
		WHERE k BETWEEN :lo AND :lo + :w GROUP BY c) q"
	],
	# no min or max: the service adds a range's ends in the delta by block
	# sums less the entries outside the range
	sums => [
		"\\set lo random(0, 195000)\n\\set w random(2000, 20000)\n",
		[qw(n s nv a)],
		'SELECT count(*) AS n, coalesce(sum(v), 0) AS s, count(v) AS nv,
	coalesce(round(avg(v), 6), -1) AS a FROM m WHERE k BETWEEN :lo AND :lo + :w'
	],
	any => [
		"\\set seed random(0, 199999)\n\\set nkeys random(200, 600)\n",
		[qw(n s sc)],
		'SELECT count(*) AS n, coalesce(sum(v), 0) AS s, coalesce(sum(c), 0) AS sc FROM m
	WHERE k = ANY (ARRAY(SELECT (:seed + g * 7919) % 200000 FROM generate_series(1, :nkeys) g)::int8[])'
	]);
my @shape_names = sort keys %shapes;

for my $name (@shape_names)
{
	my ($sets, $cols, $q) = @{ $shapes{$name} };
	append_to_file("$dir/$name.sql", same_answer_script($name, $sets, $q, $cols, 100));
}
append_to_file("$dir/update.sql", q{\set k random(0, 199999)
\set v random(1, 1000000)
UPDATE m SET v = :v WHERE ctid = (SELECT ctid FROM m WHERE k = :k LIMIT 1);
});
append_to_file("$dir/move.sql", q{\set k random(0, 199999)
\set k2 random(0, 199999)
UPDATE m SET k = :k2, c = :k2 % 7 WHERE ctid = (SELECT ctid FROM m WHERE k = :k LIMIT 1);
});
append_to_file("$dir/insert.sql", q{\set k random(0, 199999)
\set v random(1, 1000000)
INSERT INTO m VALUES (:k, :v, :k % 7);
});
append_to_file("$dir/delete.sql", q{\set k random(0, 199999)
DELETE FROM m WHERE ctid = (SELECT ctid FROM m WHERE k = :k LIMIT 1);
});
append_to_file("$dir/vacuum.sql", "\\sleep 1 s\nVACUUM m;\n");
append_to_file("$dir/rollback.sql", q{\set k random(0, 199999)
\set v random(1, 1000000)
BEGIN;
INSERT INTO m VALUES (:k, :v, :k % 7);
UPDATE m SET v = :v WHERE ctid = (SELECT ctid FROM m WHERE k = :k + 1 LIMIT 1);
ROLLBACK;
});

# The readers' settings: no parallel plans (64 sessions on few cores), and a
# few hundred keys of = ANY sent to the service.
my $reader_settings = '-c max_parallel_workers_per_gather=0 -c gpubtree.min_gpu_batch=64';

# warm(): a current mirror of m_k, built and waited for.
sub warm
{
	$node->safe_psql('postgres', "SELECT gpubtree_count('m_k', 0, 1)");
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM gpubtree_mirrors() WHERE index = 'm_k'::regclass AND current");
}

# Each shape through the node and answered by the service, with the pgbench
# variables' sample values: otherwise the comparisons would check nothing.
warm();
my %sample = (lo => 1000, w => 10000, vlo => 100000, c => 3, seed => 17, nkeys => 400);
for my $name (@shape_names)
{
	(my $q = $shapes{$name}[2]) =~ s/(?<!:):(\w+)/$sample{$1}/g;
	my $set = join ' ', map { "SET $_;" } $reader_settings =~ /-c (\S+)/g;
	my $plan = $node->safe_psql('postgres', "$set EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q");
	like($plan, qr/GpubtreeAggregate.*Answered by: GPU service/s, "$name: answered through the node by the service")
	  or diag($plan);
}

sub verify_clean
{
	my ($label) = @_;
	warm();
	is( $node->safe_psql(
			'postgres', "SELECT count(*) || ' problems' ||
		coalesce(', first: ' || min(problem || ' ' || tid), '') FROM gpubtree_verify('m_k')"),
		'0 problems',
		"$label: gpubtree_verify('m_k') clean");
}

# load(TAG): readers, writers and a session that vacuums m every second in
# the background (so that TIDs are reused under the readers); their IPC::Run
# handles, output in $dir/TAG.{readers,writers,vacuum}.log.
sub load
{
	my ($tag) = @_;
	my @common = ("$bindir/pgbench", '-n', '-T', $load_s, '-d', $node->connstr('postgres'));
	local $ENV{PGOPTIONS} = ($ENV{PGOPTIONS} // '') . " $reader_settings -c log_min_messages=warning";
	local $ENV{PGAPPNAME} = 'reader';
	my $r = IPC::Run::start([ @common, '-c', $clients, '-j', 4, map { ('-f', "$dir/$_.sql") } @shape_names ],
		'>', "$dir/$tag.readers.log", '2>&1');
	$ENV{PGAPPNAME} = 'writer';
	my $w = IPC::Run::start(
		[
			@common, '-c', $writers, '-j', 2,
			map { ('-f', "$dir/$_") } qw(update.sql@3 move.sql@1 insert.sql@2 delete.sql@2 rollback.sql@1)
		],
		'>', "$dir/$tag.writers.log", '2>&1');
	$ENV{PGAPPNAME} = 'vacuum';
	my $v = IPC::Run::start([ @common, '-c', 1, '-f', "$dir/vacuum.sql" ], '>', "$dir/$tag.vacuum.log", '2>&1');
	return ($r, $w, $v);
}

my $copies = 0;

# finish(LABEL, HANDLES...): whether every pgbench ended within 90 s of the
# load's end (each is killed otherwise).
sub finish
{
	my ($label, @handles) = @_;
	my $deadline = time + 90;
	my $ended = 1;
	for my $h (@handles)
	{
		usleep(100_000) while $h->pumpable && time < $deadline;
		if ($h->pumpable)
		{
			$ended = 0;
			$h->kill_kill;
		}
		else
		{
			$h->finish;
		}
	}
	ok($ended, "$label: every pgbench session ended");
	# (kept with the node's logs)
	PostgreSQL::Test::RecursiveCopy::copypath($dir,
		"$PostgreSQL::Test::Utils::log_path/015_pgbench_" . ++$copies);
}

# results(TAG): from the readers' log, the transactions of each shape (a
# hash) and the lines of the errors that ended clients.
sub results
{
	my ($tag) = @_;
	my $log = slurp_file("$dir/$tag.readers.log");
	my %done;
	while ($log =~ m{SQL script \d+: \S*/(\w+)\.sql\n - weight: [^\n]*\n - (\d+) transactions}g)
	{
		$done{$1} = $2;
	}
	my @aborted = grep { /aborted in command|wrong answer/ } split /\n/, $log;
	return (\%done, \@aborted, $log);
}

# node_query_ok(LABEL): one range aggregate through the node, answered by
# the service (its request counter moves), equal to the ordinary plan's.
sub node_query_ok
{
	my ($label) = @_;
	my $q = 'SELECT count(*) || \'/\' || sum(v) || \'/\' || max(c) FROM m WHERE k BETWEEN 5000 AND 150000';
	warm();
	my $r0 = status_of('requests');
	is(node_vs_plan($node, 'postgres', $q), 'same', "$label: the node's answer is the ordinary plan's");
	cmp_ok(status_of('requests'), '>', $r0, "$label: the service answered it");
}

warm();
node_query_ok('before the load');

# 1. The load alone, the service waiting up to 1 ms for more requests a
#    round.
reload_batch_window(1000);
my $log_at = -s $node->logfile;
my ($req0, $fb0) = split /\|/, status_of("requests || '|' || fallbacks");
my @h = load('calm');
finish('1. load', @h);
my ($req1, $fb1) = split /\|/, status_of("requests || '|' || fallbacks");
my ($done, $aborted, $log) = results('calm');
is(scalar(@$aborted), 0, '1. no reader failed') or diag(join "\n", @$aborted[ 0 .. ($#$aborted < 9 ? $#$aborted : 9) ]);
my $total = 0;
for my $name (@shape_names)
{
	cmp_ok($done->{$name} // 0, '>', 0, "1. $name: compared transactions");
	$total += $done->{$name} // 0;
}
note("1. $total reader transactions (" . join(', ', map { "$_ " . ($done->{$_} // 0) } @shape_names)
	  . '), service requests ' . ($req1 - $req0) . ', fallbacks ' . ($fb1 - $fb0));
my $wlog = slurp_file("$dir/calm.writers.log");
my ($writes) = $wlog =~ /number of transactions actually processed: (\d+)/;
cmp_ok($writes // 0, '>', 0, '1. writers committed meanwhile');
is(scalar(grep { /aborted in command/ } split /\n/, $wlog), 0, '1. no writer failed');
my ($vacuums) = slurp_file("$dir/calm.vacuum.log") =~ /number of transactions actually processed: (\d+)/;
cmp_ok($vacuums // 0, '>', 0, '1. VACUUM ran meanwhile');
# One node query through the service per reader transaction, if it always
# answers; one that answers fewer than half falls back too often.
cmp_ok($req1 - $req0, '>=', $total / 2, '1. the service answered a fair share of the node queries');
# "N aggregates in M batches (A a batch, at most B)" in the service's
# summary, every 10 s
my @batches = slurp_file($node->logfile, $log_at) =~ /aggregates in \d+ batches \([\d.]+ a batch, at most (\d+)\)/g;
cmp_ok((sort { $b <=> $a } @batches, 0)[0], '>', 1, '1. rounds answered several sessions\' aggregates together')
  or diag('batch summaries: ' . join(', ', @batches));
note('1. largest batch in each 10 s summary: ' . join(', ', @batches));

verify_clean('1. after the load');

# 2. The same load under faults: the service stopped (SIGTERM: the
#    postmaster starts it again after 5 s) and hung (SIGSTOP for 6 s, then
#    SIGCONT) in turn, a reader cancelled mid-query every 0.2-1 s (one that
#    waits for the service if any does).
reload_batch_window(2000);
# (one session sends the faults: a new connection a time is slow under load)
my $ctl = $node->background_psql('postgres');
($req0, $fb0) = split /\|/, status_of("requests || '|' || fallbacks");
@h = load('faults');
my $end = time + $load_s - 1;
my $next_fault = time + 3;
my ($stops, $hangs, $cancels, $cancels_waiting) = (0, 0, 0, 0);
my $frozen;    # the service's pid while it is stopped by SIGSTOP
while (time < $end)
{
	my ($running, $service) = split /\|/, $ctl->query_safe("SELECT running || '|' || pid FROM gpubtree_status()");
	if (defined $frozen && time >= $next_fault)
	{
		kill 'CONT', $frozen;
		undef $frozen;
		$next_fault = time + 2;
	}
	elsif (time >= $next_fault && $running eq 'true' && $stops > $hangs)
	{
		# hung past gpubtree.service_timeout (5 s): its waiting readers give up
		$hangs++ if kill 'STOP', $service;
		$frozen = $service;
		$next_fault = time + 6;
	}
	elsif (time >= $next_fault && $running eq 'true')
	{
		$stops++ if kill 'TERM', $service;
		$next_fault = time + 7;
	}
	# (a cancelled client ends: at most half of them)
	my $hit = $cancels >= $clients / 2 ? undef : $ctl->query_safe(
		"SELECT pg_cancel_backend(pid)::int || ':' || waiting::int
		FROM (SELECT pid, coalesce(wait_event_type = 'Extension', false) AS waiting
			FROM pg_stat_activity WHERE application_name = 'reader' AND state = 'active') s
		ORDER BY waiting DESC, random() LIMIT 1");
	if (defined $hit && $hit =~ /^1:(\d)/)
	{
		$cancels++;
		$cancels_waiting += $1;
	}
	usleep(200_000 + int(rand(800_000)));
}
kill 'CONT', $frozen if defined $frozen;
$ctl->quit;
finish('2. load under faults', @h);
($req1, $fb1) = split /\|/, status_of("requests || '|' || fallbacks");
($done, $aborted, $log) = results('faults');
my @wrong = grep { /wrong answer/ } @$aborted;
my @not_cancel = grep { !/canceling statement due to user request/ } @$aborted;
is(scalar(@wrong), 0, '2. no wrong answer') or diag(join "\n", @wrong);
is(scalar(@not_cancel), 0, '2. readers failed only by their cancel (57014)') or diag(join "\n", @not_cancel);
my $compared = 0;
$compared += $_ for values %$done;
cmp_ok($compared, '>', 0, '2. transactions compared under the faults');
cmp_ok($stops, '>', 0, '2. the service was stopped under load');
cmp_ok($hangs, '>', 0, '2. the service hung under load');
cmp_ok($cancels, '>', 0, '2. readers were cancelled mid-query');
note("2. service stopped $stops times, hung $hangs times; $cancels cancels ($cancels_waiting while waiting for the service), "
	  . scalar(@$aborted) . ' readers ended by them; service requests ' . ($req1 - $req0)
	  . ', fallbacks ' . ($fb1 - $fb0) . '; transactions: '
	  . join(', ', map { "$_ " . ($done->{$_} // 0) } @shape_names));
note("2. $_") for @$aborted;
$wlog = slurp_file("$dir/faults.writers.log");
is(scalar(grep { /aborted in command/ } split /\n/, $wlog), 0, '2. no writer failed');
reload_batch_window(0);
ok(wait_service($node), '2. the service runs again');
node_query_ok('2. after the faults');
verify_clean('2. after the faults');

# 3. SIGKILL to the service under load: a crash of a server process, so the
#    postmaster ends every session and reinitializes.
@h = load('kill');
sleep(int($load_s / 3));
my $victim = status_of('pid');
ok(kill('KILL', $victim), "3. the service (pid $victim) killed under load");
finish('3. load with the service killed', @h);
($done, $aborted, $log) = results('kill');
@wrong = grep { /wrong answer/ } @$aborted;
is(scalar(@wrong), 0, '3. no wrong answer') or diag(join "\n", @wrong);
note('3. transactions before the crash: ' . join(', ', map { "$_ " . ($done->{$_} // 0) } @shape_names));
ok(wait_service($node), '3. server and service up again');
isnt(status_of('pid'), $victim, '3. a new service process');
node_query_ok('3. after the crash');
verify_clean('3. after the crash');

$node->stop;
done_testing();
