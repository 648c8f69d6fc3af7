# t/017_build_give_up.pl: a build whose backend gives up on it loses no
# row that a writer commits meanwhile.  Writers log an entry only for a
# registered export or a published mirror (client.c: log_wanted()); the
# service checks that the export is still registered and publishes the
# mirror in one step under the change log's lock (requests.c:
# handle_build()).  A loop over the points where a build worker can give
# up, each held open on purpose by a debug setting:
#   - mid-export: registered, the index read, before the hand-over
#     (gpubtree.debug_export_delay);
#   - the service built the mirror, before its registration check
#     (gpubtree.debug_service_check_delay), also with the export of another
#     index registered meanwhile in the same slot (the next build worker
#     takes the PGPROC the one that gave up left, PostgreSQL handing them
#     out last in, first out): the check must not take it for the first
#     one's (it tells them apart by their log positions: the writer's
#     commit moved the log's head);
#   - checked, before the publication (gpubtree.debug_service_publish_delay,
#     which holds the change log's lock as the publication does);
# and over the ways to give up (cancelled, terminated, out of
# gpubtree.service_timeout).  At each, a writer commits a row into the
# range, then the point is let go: the answer through the mirror must
# equal the ordinary plan's, and gpubtree_verify() must find nothing.
# No wait here depends on timing: each is a poll for a state (the LOG line
# of a point, a worker's wait in pg_stat_activity, a new session's view of
# a setting, an answer of the service).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{GBT_BUILD_WAIT} = '';    # queries never wait for a build: the tests' polls ask
my $node = gpubtree_node('build_give_up');
# (no VACUUM but the test's own, in the service's way while it is held)
$node->append_conf('postgresql.conf', 'autovacuum = off');
# Each CREATE INDEX has a build worker build the mirror (not inside it).
$node->append_conf('postgresql.conf', 'gpubtree.build_after_create = background');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION gpubtree');
ok(wait_service($node), 'the service runs');

sub query { return $node->safe_psql('postgres', $_[0]); }

# set_and_wait(NAME, VALUE): reload with NAME = VALUE (in the setting's
# base unit), and wait until a new session sees it: then the postmaster has
# reloaded and signalled the service and the build workers, and workers it
# starts later inherit it.
sub set_and_wait
{
	my ($name, $value) = @_;
	query("ALTER SYSTEM SET $name = $value; SELECT pg_reload_conf()");
	return $node->poll_query_until('postgres',
		"SELECT setting = '$value' FROM pg_settings WHERE name = '$name'");
}

# The build worker's pid, once it is connected.
sub build_worker
{
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'gpubtree build'");
	return query("SELECT pid FROM pg_stat_activity WHERE backend_type = 'gpubtree build'");
}

# The range's answer through gpubtree (the mirror where one is current,
# else nbtree; no build waited for) against the ordinary plan's.
sub answers_now
{
	my ($t) = @_;
	my $q = "SELECT count(*) || ':' || sum(v) FROM $t WHERE k BETWEEN 1 AND 1000";
	my $through = query("SET enable_seqscan = off; SET enable_indexscan = off;
		SET enable_indexonlyscan = off; SET enable_bitmapscan = off; $q");
	my $ordinary = query("SET gpubtree.device = off; $q");
	return $through eq $ordinary ? 'same' : "differ: $through vs $ordinary";
}

# Until the index has a current mirror (queries ask for it: a failed build
# is asked for again after its back-off).
sub settle
{
	my ($t) = @_;
	return $node->poll_query_until('postgres',
		"WITH asked AS MATERIALIZED (SELECT gpubtree_count('${t}_k', 1, 10))
		SELECT coalesce(bool_or(current), false) FROM asked, gpubtree_mirrors()
		WHERE index = '${t}_k'::regclass");
}

# A helper index with a current mirror: a request through it is answered
# only once the service's round under way has ended.
query("CREATE TABLE h (k int8, v int8);
	INSERT INTO h SELECT i, i FROM generate_series(1, 1000) i;
	CREATE INDEX h_k ON h USING gpubtree (k) INCLUDE (v)");
settle('h');

my %way = (
	cancelled => sub { query("SELECT pg_cancel_backend($_[0])") },
	terminated => sub { query("SELECT pg_terminate_backend($_[0])") },
	'out of gpubtree.service_timeout' => sub { },
);
my %point = (
	'mid-export' => [ 'gpubtree.debug_export_delay', qr/export of index %u held before its hand-over/ ],
	'before the registration check' =>
	  [ 'gpubtree.debug_service_check_delay', qr/the registration check of the mirror of index %u held back/ ],
	'before the publication' =>
	  [ 'gpubtree.debug_service_publish_delay', qr/publication of the mirror of index %u held back/ ],
);
# (point, way, a new export registers in the slot meanwhile)
my @cases = (
	[ 'mid-export', 'cancelled', 0 ],
	[ 'before the registration check', 'cancelled', 0 ],
	[ 'before the registration check', 'cancelled', 1 ],
	[ 'before the publication', 'cancelled', 0 ],
	[ 'before the publication', 'terminated', 0 ],
	[ 'before the publication', 'out of gpubtree.service_timeout', 0 ],
);

# log_line(POINT, OID): the LOG line that says the build is held there.
sub log_line
{
	my ($re, $oid) = ($point{ $_[0] }->[1], $_[1]);
	(my $s = "$re") =~ s/%u/$oid/;
	return qr/$s/;
}

my $n = 0;
foreach my $case (@cases)
{
	my ($at, $how, $again) = @$case;
	my $setting = $point{$at}->[0];
	my $what = "build $how $at" . ($again ? ', a new export in its slot' : '');
	my $t = 'r' . ++$n;

	set_and_wait('gpubtree.service_timeout', $how =~ /timeout/ ? 1000 : 600000);
	set_and_wait($setting, 3600000);
	my $log_offset = -s $node->logfile;

	# CREATE INDEX has the mirror built in the background as it commits.
	query("CREATE TABLE $t (k int8, v int8);
		INSERT INTO $t SELECT i, i FROM generate_series(1, 20000) i;
		VACUUM ANALYZE $t;
		CREATE INDEX ${t}_k ON $t USING gpubtree (k) INCLUDE (v)");
	my $oid = query("SELECT '${t}_k'::regclass::oid");
	my $pid = build_worker();
	$log_offset = $node->wait_for_log(log_line($at, $oid), $log_offset);
	my $exports = service_stat($node, 'exports');

	# The worker gives up: gone, or waiting for the change log's lock to
	# unregister its export (held by the service while it publishes).
	$way{$how}->($pid);
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid AND wait_event_type IS DISTINCT FROM 'LWLock'"),
		"$what: the worker gave up");

	# A writer commits a row into the range: done, or waiting for the lock.
	# (k + 0: not through the index, whose service may be held up.)
	my ($out, $err) = ('', '');
	my $writer = IPC::Run::start(
		[ 'psql', '-X', '-q', '-At', '-d', $node->connstr('postgres') . ' application_name=give_up_writer',
		  '-c', "INSERT INTO $t VALUES (500, -1)" ],
		'>', \$out, '2>', \$err);
	ok( $node->poll_query_until('postgres',
			"SELECT EXISTS (SELECT FROM $t WHERE k + 0 = 500 AND v = -1) OR
				EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'give_up_writer'
						AND wait_event_type = 'LWLock')"),
		"$what: the writer committed or waits");

	if ($again)
	{
		# A build of another index starts (CREATE INDEX, no parallel
		# worker), registers, and is held mid-export; the first BUILD is
		# then let go, and answered before the second goes on.
		set_and_wait('gpubtree.debug_export_delay', 3600000);
		query("SET max_parallel_maintenance_workers = 0;
			CREATE TABLE q$n (k int8);
			INSERT INTO q$n SELECT generate_series(1, 100);
			CREATE INDEX q${n}_k ON q$n USING gpubtree (k)");
		$node->wait_for_log(log_line('mid-export', query("SELECT 'q${n}_k'::regclass::oid")),
			$log_offset);
		set_and_wait($setting, 0);
		query("SET gpubtree.service_timeout = '10min'; SELECT gpubtree_count('h_k', 1, 10)");
		is(answers_now($t), 'same', "$what: the range equals the ordinary plan's before the new export ends");
		set_and_wait('gpubtree.debug_export_delay', 0);
	}
	else
	{
		set_and_wait($setting, 0);
	}
	$writer->finish;
	is($err, '', "$what: the writer's INSERT");
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'gpubtree build'");

	if ($at eq 'before the publication')
	{
		# The build was checked before the worker gave up: its mirror is
		# published, and answers.
		is( query("SELECT count(*) FROM gpubtree_mirrors() WHERE index = '${t}_k'::regclass AND current"),
			'1', "$what: the mirror was published");
	}
	else
	{
		ok(settle($t), "$what: a later build made a current mirror");
	}
	is(node_vs_plan($node, 'postgres',
			"SELECT count(*) || ':' || sum(v) FROM $t WHERE k BETWEEN 1 AND 1000"),
		'same', "$what: the range through the mirror equals the ordinary plan's");
	is( query("SELECT count(*) || ' problems' || coalesce(', first: ' || min(problem), '')
			FROM gpubtree_verify('${t}_k')"),
		'0 problems', "$what: gpubtree_verify() finds the mirror whole");
	is(service_stat($node, 'exports'), $exports,
		"$what: answered by the mirror built in the race (no export since)")
	  if $at eq 'before the publication';
}

done_testing();
