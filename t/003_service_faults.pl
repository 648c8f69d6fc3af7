# t/003_service_faults.pl: the service under faults: killed, slow, out of
# memory, and clients cancelled or terminated mid-request.  Every answer
# must equal btree's, nothing may hang, and fallbacks must be counted.  Runs
# the service on whatever engine the machine has (the CPU engine without a
# GPU); then restarts it with gpubtree.engine = gpu (without a GPU: no
# mirrors) and = cpu.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = gpubtree_node('faults');
$node->start;

# The concurrency test's tables: g with a gpubtree index, b the same rows
# under a btree one (and its check functions, not used here).
$node->safe_psql('postgres',
	slurp_file("$FindBin::RealBin/../test/concurrency/setup.sql"));

# q_run(TABLE, [SETTING]): a range and a large = ANY, through bitmap scans;
# psql's status, output and errors.
sub q_run
{
	my ($table, $setting) = @_;
	$setting = $setting ? "$setting;" : '';
	return $node->psql(
		'postgres', "SET enable_seqscan = off; SET enable_indexscan = off;
		SET enable_indexonlyscan = off; SET max_parallel_workers_per_gather = 0;
		SET gpubtree.enable_lookup = off; $setting
		SELECT count(*) || ':' || sum(v) FROM $table WHERE k BETWEEN 1000 AND 90000;
		SELECT count(*) || ':' || sum(v) FROM $table WHERE k = ANY (ARRAY(SELECT generate_series(0, 199999, 7)::int8));");
}

# answers(TABLE, [SETTING]): the two answers, or the error.
sub answers
{
	my ($rc, $out, $err) = q_run(@_);
	return $rc == 0 ? $out : "(failed: $err)";
}
sub status_of { return service_stat($node, $_[0]); }

sub reload
{
	$node->safe_psql('postgres', "ALTER SYSTEM SET $_[0]; SELECT pg_reload_conf()");
	usleep(500_000);
}

my $expected = answers('b');
my $r0 = status_of('requests');
is(answers('g'), $expected, 'served by the service');
cmp_ok(status_of('requests'), '>', $r0, 'the service answered');

# 1. The service is stopped: scans fall back, counted, and it comes back.
kill 'TERM', status_of('pid');
usleep(300_000);
is(answers('g'), $expected, 'answer while the service is down');
is(status_of('running'), 'f', 'service down: not running');
ok(wait_service($node), 'service restarted');
$r0 = status_of('requests');
is(answers('g'), $expected, 'answer after restart');
cmp_ok(status_of('requests'), '>', $r0, 'served again after restart');

# 2. Cancelled mid-request: a long batch window holds every request; short
#    statement timeouts cancel them at random points.  No hang, no leak.
reload('gpubtree.batch_window = 100000');
my $cancelled = 0;
for my $t (5, 20, 40, 60, 80, 95, 120, 150)
{
	my ($rc) = q_run('g', "SET statement_timeout = '${t}ms'");
	$cancelled++ if $rc != 0;
}
cmp_ok($cancelled, '>', 0, 'some statements were cancelled mid-request');
is(answers('g'), $expected, 'answer after cancellations');

# 2b. Statement timeouts that hit while waiting for the service say so, on
#     every path that waits for it, from several sessions at once: bitmap
#     scans (a range, a large = ANY, in parallel workers), the aggregate
#     node, and mirror builds.  Each session runs 25 statements with
#     timeouts shorter than the batch window.
$node->safe_psql('postgres',
	'CREATE TABLE gb AS SELECT * FROM g WHERE k < 50000; CREATE INDEX gb_k ON gb USING gpubtree (k); ANALYZE gb');

# timeouts_of(SETUP, BEFORE, STATEMENT): a session running SETUP, then 25
# times BEFORE and STATEMENT under a random short timeout; returns its
# IPC::Run handle and a reference to its errors.
sub timeouts_of
{
	my ($setup, $before, $statement) = @_;
	my $script = "SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;
SET max_parallel_workers_per_gather = 0; SET gpubtree.enable_aggregate = off; SET gpubtree.enable_lookup = off;
$setup\n";
	$script .= "$before SET statement_timeout = '" . (int(rand(90)) + 5) . "ms'; $statement RESET statement_timeout;\n"
	  for 1 .. 25;
	my $err = '';
	my $h = IPC::Run::start([ 'psql', '-X', '-q', '-At', '-d', $node->connstr('postgres') ],
		'<', \$script, '>', '/dev/null', '2>', \$err);
	return ($h, \$err);
}
my @sessions = (
	[ timeouts_of('', '', 'SELECT count(*) FROM g WHERE k BETWEEN 1000 AND 90000;') ],
	[ timeouts_of('', '', 'SELECT count(*) FROM g WHERE k = ANY (ARRAY(SELECT generate_series(0, 199999, 7)::int8));') ],
	[
		timeouts_of(
			'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
		SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = off;', '',
			'SELECT count(*) FROM g WHERE k BETWEEN 1000 AND 90000;')
	],
	[ timeouts_of('SET gpubtree.enable_aggregate = on;', '', 'SELECT count(*) FROM g WHERE k BETWEEN 1000 AND 90000;') ],
	[ timeouts_of('', 'REINDEX INDEX gb_k;', 'SELECT count(*) FROM gb WHERE k BETWEEN 1000 AND 40000;') ]);
my @errors;
for my $s (@sessions)
{
	$s->[0]->finish;
	push @errors, grep { /ERROR/ } split /\n/, ${ $s->[1] };
}
my $timeout_msg = 'canceling statement due to statement timeout';
my @other = grep { !/$timeout_msg/ } @errors;
cmp_ok(scalar(@errors) - scalar(@other), '>=', 50, 'statement timeouts hit while waiting');
is(scalar(@other), 0, 'each one reported as a statement timeout') or diag(join "\n", @other);
is(answers('g'), $expected, 'answer after the timeouts');
$node->safe_psql('postgres', 'DROP TABLE gb');

# 2c. A cancel while a commit waits for room in the change log (also what a
#     statement timeout that fires as the statement ends becomes, its timer
#     cleared before the commit): the wait stops with a WARNING, the commit
#     goes on, and the mirror of what it changed is made unusable, as when
#     the wait times out.  The service is stopped (SIGSTOP) so that the log
#     fills: committed transactions of 32000 rows each (under an eighth of
#     the mirror, so logged) fill it to its last 144 entries, and a
#     transaction of 1000 rows finds no room at its commit.
reload('gpubtree.batch_window = 0');
$node->safe_psql(
	'postgres', q{CREATE TABLE gc (k int8, v int8);
	INSERT INTO gc SELECT g, g FROM generate_series(1, 300000) g;
	CREATE INDEX gc_k ON gc USING gpubtree (k); VACUUM ANALYZE gc});
for (1 .. 120)
{
	last
	  if $node->safe_psql('postgres',
		"SELECT count(*) FROM gpubtree_mirrors() WHERE index = 'gc_k'::regclass AND current") eq '1';
	$node->safe_psql('postgres', "SELECT gpubtree_count('gc_k', 0, 1)");
	usleep(500_000);
}
my $logsize = $node->safe_psql('postgres', 'SHOW gpubtree.change_log_size');
my $service = status_of('pid');
kill 'STOP', $service;
for my $i (0 .. 7)
{
	$node->safe_psql('postgres',
		"INSERT INTO gc SELECT 1000000 + $i * 32000 + g, 1 FROM generate_series(1, 32000) g");
}
$node->safe_psql('postgres',
	"INSERT INTO gc SELECT 2000000 + g, 1 FROM generate_series(1, @{[$logsize - 256000 - 144]}) g");
my $commit_out = '';
my $committer = IPC::Run::start(
	[
		'psql', '-X', '-At', '-d', $node->connstr('postgres'),
		'-c', 'BEGIN', '-c', 'INSERT INTO gc SELECT 3000000 + g, 1 FROM generate_series(1, 1000) g',
		'-c', 'COMMIT'
	],
	'>', \$commit_out, '2>&1');
my $commit_cancelled = 'f';
for (1 .. 40)
{
	usleep(100_000);
	if ($node->safe_psql('postgres',
			"SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE query = 'COMMIT' AND state = 'active' AND wait_event = 'Extension'") eq '1')
	{
		$commit_cancelled = 't';
		last;
	}
}
$committer->finish;
kill 'CONT', $service;
is($commit_cancelled, 't', 'cancel at commit: the commit was waiting for room');
my $warnings = () = $commit_out =~ /WARNING:  canceling the wait for room in the gpubtree change log/g;
my $errs = () = $commit_out =~ /ERROR/g;
is("$warnings:$errs", '1:0', 'cancel at commit: a WARNING, no error') or diag($commit_out);
is($node->safe_psql('postgres', 'SELECT count(*) FROM gc WHERE k > 3000000'), 1000, 'cancel at commit: committed');
is( $node->safe_psql('postgres', "SELECT gpubtree_count('gc_k', 0, 4000000)"),
	$node->safe_psql('postgres', "SET gpubtree.device = off; SELECT gpubtree_count('gc_k', 0, 4000000)"),
	"cancel at commit: the answer is btree's");
$node->safe_psql('postgres', 'DROP TABLE gc');
reload('gpubtree.batch_window = 100000');    # section 4's slow service

# 3. A backend terminated while it waits for the service.
my $victim = IPC::Run::start(
	[
		'psql', '-X', '-d', $node->connstr('postgres'), '-c', 'SET enable_seqscan = off',
		'-c', 'SET enable_indexscan = off', '-c', 'SELECT count(*) FROM g WHERE k BETWEEN 5 AND 50000'
	],
	'>', '/dev/null', '2>', '/dev/null');
usleep(50_000);
$node->safe_psql('postgres',
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%BETWEEN 5 AND 50000%' AND pid <> pg_backend_pid()");
$victim->finish;
is(answers('g'), $expected, 'answer after a client was terminated');
is(status_of('running'), 't', 'the service survived');

# 4. The service too slow for the client's deadline: nbtree answers.
my $f0 = status_of('fallbacks');
is(answers('g', 'SET gpubtree.service_timeout = 10'), $expected, 'answer past gpubtree.service_timeout');
cmp_ok(status_of('fallbacks'), '>', $f0, 'timeouts counted as fallbacks');
reload('gpubtree.batch_window = 0');

# 4b. A long build holds up the service's round: a query's request waits
#     for it at most GBT_BUILD_BLOCK_MS (1 s), then takes nbtree or the plan
#     below.  The build of gb_k is held 60 s in the service
#     (gpubtree.debug_service_check_delay) while g is queried.
$node->safe_psql('postgres', q{
	SET gpubtree.build_after_create = off;
	CREATE TABLE gb (k int8) WITH (autovacuum_enabled = off);
	INSERT INTO gb SELECT g FROM generate_series(1, 10000) g;
	CREATE INDEX gb_k ON gb USING gpubtree (k);
});
my $agg_q = 'SELECT count(*), sum(k) FROM g WHERE k BETWEEN 5 AND 150000';
my $agg_expected = $node->safe_psql('postgres', "SET gpubtree.device = off; $agg_q");
my $log_at = -s $node->logfile;
reload('gpubtree.debug_service_check_delay = 60000');
my ($built_out, $built_err) = ('', '');
my $builder = IPC::Run::start(
	[ 'psql', '-X', '-At', '-d', $node->connstr('postgres'), '-c', "SELECT gpubtree_count('gb_k', 1, 10000)" ],
	'>', \$built_out, '2>', \$built_err);
my $held = 0;
for (1 .. 300)
{
	$held = 1, last
	  if slurp_file($node->logfile, $log_at) =~ /registration check of the mirror of index \d+ held back/;
	usleep(100_000);
}
ok($held, '4b. the service holds a build');
usleep(1_200_000);    # past GBT_BUILD_BLOCK_MS
$f0 = status_of('fallbacks');
like(
	$node->safe_psql('postgres',
		"SET max_parallel_workers_per_gather = 0; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $agg_q"),
	qr/Answered by: the plan below \(the service was building a mirror\)/,
	'4b. an aggregate does not wait for the build: the plan below answers, and says why');
is($node->safe_psql('postgres', $agg_q), $agg_expected, "4b. the aggregate's answer is the ordinary plan's");
is(answers('g'), $expected, '4b. bitmap scans during the build: nbtree answers');
cmp_ok(status_of('fallbacks'), '>', $f0, '4b. counted as fallbacks');
reload('gpubtree.debug_service_check_delay = 0');
$builder->finish;
is($built_out, "10000\n", '4b. the held build finishes') or diag($built_err);
$r0 = status_of('requests');
like(
	$node->safe_psql('postgres',
		"SET max_parallel_workers_per_gather = 0; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $agg_q"),
	qr/Answered by: GPU service/, '4b. after the build the service answers again');
cmp_ok(status_of('requests'), '>', $r0, '4b. served again');
$node->safe_psql('postgres', 'DROP TABLE gb');

# 4c. The engine's part of a build (the tree and its chunk sums) runs beside
#     the service: with it held 8 s (gpubtree.debug_engine_build_delay), an
#     aggregate on another index is answered by the service meanwhile, and
#     writes to the table being built reach its mirror, and the room the
#     build holds counts as used: a limit lowered below the published
#     mirrors and the build together evicts a published one at once.  (The
#     build worker waits for the service within gpubtree.service_timeout:
#     raised here.)
$node->safe_psql('postgres', q{
	SET gpubtree.build_after_create = off;
	CREATE TABLE gc (k int8) WITH (autovacuum_enabled = off);
	INSERT INTO gc SELECT g FROM generate_series(1, 1000000) g;
	CREATE INDEX gc_k ON gc USING gpubtree (k);
});
reload('gpubtree.service_timeout = 60000');
reload('gpubtree.debug_engine_build_delay = 8000');
$log_at = -s $node->logfile;
$node->safe_psql('postgres',
	"SET gpubtree.build_wait = 0; SELECT gpubtree_count('gc_k', 1, 20000)");    # asks, does not wait
$held = 0;
for (1 .. 300)
{
	$held = 1, last
	  if slurp_file($node->logfile, $log_at) =~ /the engine's build of the mirror of index \d+ held/;
	usleep(100_000);
}
ok($held, "4c. the service holds a mirror's engine build");
my $gc_mirror = "SELECT count(*) FROM gpubtree_mirrors() WHERE index = 'gc_k'::regclass AND current";
like(
	$node->safe_psql('postgres',
		"SET max_parallel_workers_per_gather = 0; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $agg_q"),
	qr/Answered by: GPU service/, "4c. during the engine's build the service answers another index's aggregate");
is($node->safe_psql('postgres', $agg_q), $agg_expected, "4c. the aggregate's answer is the ordinary plan's");
$node->safe_psql('postgres',
	'SET gpubtree.build_wait = 0; INSERT INTO gc SELECT g FROM generate_series(10001, 10100) g;
	DELETE FROM gc WHERE k BETWEEN 1 AND 50');

# The published mirrors fit under the limit (rounded up to a whole MB, and
# 2 MB more), the build's 10^6 entries do not fit beside them.
my $g_mirror = "SELECT count(*) FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass AND current";
is($node->safe_psql('postgres', $g_mirror), '1', "4c. g_k's mirror is published");
my $published_mb = $node->safe_psql('postgres',
	'SELECT ceil(sum(bytes) / 1048576.0)::int8 FROM gpubtree_mirrors() WHERE current');
reload("gpubtree.mirror_memory_limit = '" . ($published_mb + 2) . "MB'");
my $evicted = 0;
for (1 .. 30)
{
	$evicted = 1, last if $node->safe_psql('postgres', $g_mirror) eq '0';
	usleep(100_000);
}
ok($evicted, "4c. the room a build holds counts as used: g_k's mirror evicted under a limit lowered during the build");
reload('gpubtree.mirror_memory_limit = -1');
is($node->safe_psql('postgres', $gc_mirror), '0', '4c. all that while the build was held');
ok($node->poll_query_until('postgres', "SELECT ($gc_mirror) = 1"), '4c. the held build is published');
reload('gpubtree.debug_engine_build_delay = 0');
reload('gpubtree.service_timeout = 5000');
my $gc_q = 'SELECT count(*), sum(k) FROM gc WHERE k BETWEEN 1 AND 20000';
is( $node->safe_psql('postgres', $gc_q),
	$node->safe_psql('postgres', "SET gpubtree.device = off; $gc_q"),
	"4c. writes during the engine's build reach the mirror: the answer is the ordinary plan's");
like(
	$node->safe_psql('postgres',
		"SET max_parallel_workers_per_gather = 0; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $gc_q"),
	qr/Answered by: GPU service|Service: 1 scans, \d+ keys probed, \d+ entries returned, 0 answered by nbtree/,
	'4c. ... through the new mirror');
is($node->safe_psql('postgres', "SELECT count(*) FROM gpubtree_verify('gc_k')"),
	'0', "4c. gpubtree_verify('gc_k') clean");
$node->safe_psql('postgres', 'DROP TABLE gc');

# 5. No room under gpubtree.mirror_memory_limit (lowered: the service evicts
# the mirror, and cannot build it again): nbtree answers.
reload('gpubtree.mirror_memory_limit = 1');
$f0 = status_of('fallbacks');
is(answers('g'), $expected, 'answer when the mirror does not fit');
cmp_ok(status_of('fallbacks'), '>', $f0, 'out-of-memory counted as fallback');
reload('gpubtree.mirror_memory_limit = -1');
is(answers('g'), $expected, 'answer once it fits again');

# 6. gpubtree.engine, read when the service starts.  gpu without a usable
#    GPU: the service says why (status, and the log once), builds no mirror,
#    and nbtree answers as with gpubtree.device = off; with a GPU, the GPU.
#    cpu: the CPU engine and its mirrors, even with a GPU.
sub restart_with_engine
{
	$node->safe_psql('postgres', "ALTER SYSTEM SET gpubtree.engine = $_[0]");
	$node->restart;
	wait_service($node);
}
sub mirrors
{
	my $cond = $_[0] // 'true';
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM gpubtree_mirrors() WHERE index = 'g_k'::regclass AND $cond");
}
my $had_gpu = status_of('gpu');
restart_with_engine('gpu');
is(status_of('engine_setting'), 'gpu', 'engine = gpu: the setting is shown');
if ($had_gpu eq 'f')
{
	is(status_of('engine'), 'none', 'engine = gpu, no GPU: the service has no engine');
	is(status_of("status LIKE '%gpubtree.engine = gpu and no usable GPU%'"),
		't', 'engine = gpu, no GPU: its status says why');
	my $logged = () = slurp_file($node->logfile) =~
	  /gpubtree service: gpubtree\.engine = gpu and no usable GPU/g;
	is($logged, 1, 'engine = gpu, no GPU: logged once');
	my $e0 = status_of('exports');
	is(answers('g'), answers('g', 'SET gpubtree.device = off'),
		"engine = gpu, no GPU: the range's answer is gpubtree.device = off's");
	is(answers('g'), $expected, "engine = gpu, no GPU: and btree's");
	is(status_of("exports - $e0 || ':' || mirror_builds"), '0:0', 'engine = gpu, no GPU: no export, no build');
	is(mirrors(), 0, 'engine = gpu, no GPU: no mirror');
	like(
		$node->safe_psql('postgres',
			'SET enable_seqscan = off; EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM g WHERE k BETWEEN 1000 AND 90000'),
		qr/no mirror: gpubtree\.engine = gpu and the GPU service has no usable GPU/,
		'engine = gpu, no GPU: EXPLAIN says why');
}
else
{
	is(status_of('engine'), 'gpu', 'engine = gpu with a GPU: the GPU');
}
restart_with_engine('cpu');
is(status_of("engine_setting || ':' || engine || ':' || gpu::text"), 'cpu:cpu:false', 'engine = cpu: the CPU engine');
is(answers('g'), $expected, 'engine = cpu: answer');
is(mirrors("current AND engine = 'cpu'"), 1, 'engine = cpu: a mirror on the CPU engine');

$node->stop;
done_testing();
