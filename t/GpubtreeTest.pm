# t/GpubtreeTest.pm: what gpubtree's TAP tests (t/*.pl) share: a node set
# up as test/lib.sh's clusters are (gpubtree preloaded, its engine and build
# wait from the environment), waiting for the service, and a check that a
# query's output through gpubtree equals another plan's.
#
# Environment, as for test/lib.sh: GPUBTREE_ENGINE=auto|gpu|cpu
# (gpubtree.engine), GBT_BUILD_WAIT (gpubtree.build_wait, default 60s; empty
# keeps the shipped default, also in the sessions), GBT_PRELOAD=0 (no
# shared_preload_libraries).
# GPUBTREE_DEVICE=auto|off reaches the sessions through PGOPTIONS, which
# test/run_all.sh sets.

package GpubtreeTest;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Exporter 'import';

our @EXPORT =
  qw(gpubtree_node wait_service is_output service_stat node_vs_plan create_check_same
  same_answer_script);

# gpubtree_node(NAME, init params...): a new node, initialized (not
# started), with gpubtree's settings appended.  Cluster.pm's own settings
# for streaming nodes (1MB of shared buffers, 10 connections) are too small
# for the service's shared memory and for pgbench, so they are overridden.
sub gpubtree_node
{
	my ($name, %params) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%params);
	my $conf = "shared_buffers = 128MB\n"
	  . "max_connections = 40\n"
	  . "max_parallel_maintenance_workers = 2\n"
	  . "max_prepared_transactions = 10\n"
	  # Cluster.pm logs every statement: under pgbench that is most of the
	  # test's I/O.
	  . "log_statement = none\n";
	my $build_wait = $ENV{GBT_BUILD_WAIT} // '60s';
	$conf .= "gpubtree.build_wait = '$build_wait'\n" if $build_wait ne '';
	# `make installcheck` sets gpubtree.build_wait for its sessions (in
	# PGOPTIONS, for the SQL suites): a node that keeps the shipped default
	# takes it out of its tests' sessions too.
	$ENV{PGOPTIONS} =~ s/-c\s*gpubtree\.build_wait=\S+//g
	  if $build_wait eq '' && defined $ENV{PGOPTIONS};
	if (($ENV{GBT_PRELOAD} // '1') eq '1')
	{
		$conf .= "shared_preload_libraries = 'gpubtree'\n";
		$conf .= "gpubtree.engine = '$ENV{GPUBTREE_ENGINE}'\n"
		  if ($ENV{GPUBTREE_ENGINE} // '') ne '';
	}
	$node->append_conf('postgresql.conf', $conf);
	return $node;
}

# service_stat(NODE, EXPR): EXPR over gpubtree_status()'s row.
sub service_stat
{
	my ($node, $expr) = @_;
	return $node->safe_psql('postgres', "SELECT $expr FROM gpubtree_status()");
}

# wait_service(NODE): whether the node accepts connections and its service
# runs, within the test timeout.
sub wait_service
{
	my ($node) = @_;
	return $node->poll_query_until('postgres',
		"SELECT running FROM gpubtree_status()");
}

# node_vs_plan(NODE, DB, QUERY): QUERY's answer (one row, one value)
# through the gpubtree nodes, the other plans disabled and the mirror's
# build waited for, against the ordinary plan's (gpubtree.device = off):
# "same", or both answers.
sub node_vs_plan
{
	my ($node, $db, $q) = @_;
	my $through_node = $node->safe_psql($db,
		"SET gpubtree.build_wait = '60s'; SET enable_seqscan = off; SET enable_indexscan = off;
		SET enable_indexonlyscan = off; SET enable_bitmapscan = off; $q");
	my $ordinary = $node->safe_psql($db, "SET gpubtree.device = off; $q");
	return $through_node eq $ordinary ? 'same' : "differ: $through_node vs $ordinary";
}

# is_output(GOT, EXPECTED, NAME): one check of two query outputs; on a
# difference, the row counts and the first differing lines, not the whole
# outputs.
sub is_output
{
	my ($got, $expected, $name) = @_;
	return pass($name) if defined $got && $got eq $expected;

	my @g = split /\n/, ($got // '(no output)');
	my @e = split /\n/, $expected;
	my $i = 0;
	$i++ while $i < @g && $i < @e && $g[$i] eq $e[$i];
	fail($name);
	diag(sprintf("%d lines, expected %d; first difference at line %d:\n"
		  . "  got:      %s\n  expected: %s",
		  scalar @g, scalar @e, $i + 1, $g[$i] // '(none)', $e[$i] // '(none)'));
	return 0;
}

# create_check_same(NODE): check_same(what, through_node, ordinary) in
# NODE's postgres database, for pgbench scripts: it raises "wrong answer"
# when an answer through the node differs from the ordinary plan's (pgbench
# then ends that client, which the tests count as a failure).
sub create_check_same
{
	my ($node) = @_;
	$node->safe_psql(
		'postgres', q{
CREATE FUNCTION check_same(what text, through_node text, ordinary text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	IF through_node IS DISTINCT FROM ordinary THEN
		RAISE EXCEPTION 'wrong answer: % through the node %, ordinary plan %',
			what, through_node, ordinary;
	END IF;
END $$;
});
	return;
}

# same_answer_script(NAME, SETS, QUERY, COLUMNS, PAUSE_MS): a pgbench
# script: SETS (\set lines), then in one REPEATABLE READ transaction (after
# a random pause of up to PAUSE_MS, if given) QUERY through the node and
# with gpubtree.device = off, each answer's COLUMNS (one value each)
# compared by check_same() (create_check_same()).
sub same_answer_script
{
	my ($name, $sets, $q, $cols, $pause_ms) = @_;
	my $through = join '/', map { ":a_$_" } @$cols;
	my $ordinary = join '/', map { ":b_$_" } @$cols;
	my $pause = defined $pause_ms
	  ? "\\set pause random(0, $pause_ms)\n" : '';
	my $wait = defined $pause_ms ? "SELECT 1;\n\\sleep :pause ms\n" : '';
	return "$sets$pause"
	  . "BEGIN ISOLATION LEVEL REPEATABLE READ;\n$wait"
	  . "$q \\gset a_\nSET LOCAL gpubtree.device = off;\n$q \\gset b_\n"
	  . "SELECT check_same('$name', '$through', '$ordinary');\nCOMMIT;\n";
}

1;
