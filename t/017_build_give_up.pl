# t/017_build_give_up.pl: a build whose backend gives up on it loses no
# row that a writer commits meanwhile.  Writers log an entry only for a
# registered export or a published mirror (client.c: log_wanted()); the
# service checks that the export is still registered and publishes the
# mirror in one step under the change log's lock (requests.c:
# handle_build()).  Here the service holds a newly built mirror back on
# purpose (gpubtree.debug_service_publish_delay), the build worker gives up
# on its BUILD (cancelled, terminated, or out of gpubtree.service_timeout),
# a writer commits a row into the range, and only then the mirror is
# published: the answer through the mirror must equal the ordinary plan's,
# and gpubtree_verify() must find nothing.  With the check and the
# publication apart, the mirror lacks that row.  No wait here depends on
# timing: each is a poll for a state (the service's LOG line, the worker's
# wait in pg_stat_activity, a new session's view of a setting).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = gpubtree_node('build_give_up');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION gpubtree');
ok(wait_service($node), 'the service runs');

sub query { return $node->safe_psql('postgres', $_[0]); }

# set_and_wait(NAME, VALUE): reload with NAME = VALUE (in the setting's
# base unit), and wait until a new session sees it: then the postmaster has
# reloaded and signalled the service, and workers it starts later inherit it.
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

# The ways a build's backend gives up while the service holds its mirror
# back, each a code ref given the worker's pid; service_timeout: the
# setting the worker runs under (it gives up by itself).
my @ways = (
	{ name => 'cancelled', service_timeout => 600000,
	  give_up => sub { query("SELECT pg_cancel_backend($_[0])") } },
	{ name => 'terminated', service_timeout => 600000,
	  give_up => sub { query("SELECT pg_terminate_backend($_[0])") } },
	{ name => 'out of gpubtree.service_timeout', service_timeout => 1000,
	  give_up => sub { } },
);

my $n = 0;
foreach my $way (@ways)
{
	my $what = "build $way->{name} before its publication";
	my $t = 'r' . ++$n;

	set_and_wait('gpubtree.service_timeout', $way->{service_timeout});
	set_and_wait('gpubtree.debug_service_publish_delay', 3600000);
	my $log_offset = -s $node->logfile;

	# CREATE INDEX has the mirror built in the background as it commits.
	query("CREATE TABLE $t (k int8, v int8);
		INSERT INTO $t SELECT i, i FROM generate_series(1, 20000) i;
		VACUUM ANALYZE $t;
		CREATE INDEX ${t}_k ON $t USING gpubtree (k) INCLUDE (v)");
	my $oid = query("SELECT '${t}_k'::regclass::oid");
	my $pid = build_worker();
	$node->wait_for_log(qr/publication of the mirror of index $oid held back/, $log_offset);
	my $exports = service_stat($node, 'exports');

	# The worker gives up: gone, or waiting for the change log's lock to
	# unregister its export (held by the service while it publishes).
	$way->{give_up}->($pid);
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid AND wait_event_type IS DISTINCT FROM 'LWLock'"),
		"$what: the worker gave up");

	# A writer commits a row into the range: done, or waiting for the lock.
	# (k + 0: not through the index, whose service is held up.)
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

	set_and_wait('gpubtree.debug_service_publish_delay', 0);
	$writer->finish;
	is($err, '', "$what: the writer's INSERT");
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'gpubtree build'");

	is( query("SELECT count(*) FROM gpubtree_mirrors() WHERE index = '${t}_k'::regclass AND current"),
		'1', "$what: the mirror was published");
	is(node_vs_plan($node, 'postgres',
			"SELECT count(*) || ':' || sum(v) FROM $t WHERE k BETWEEN 1 AND 1000"),
		'same', "$what: the range through the mirror equals the ordinary plan's");
	is( query("SELECT count(*) || ' problems' || coalesce(', first: ' || min(problem), '')
			FROM gpubtree_verify('${t}_k')"),
		'0 problems', "$what: gpubtree_verify() finds the mirror whole");
	is(service_stat($node, 'exports'), $exports,
		"$what: answered by the mirror built in the race (no export since)");
}

done_testing();
