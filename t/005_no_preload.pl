# t/005_no_preload.pl: without shared_preload_libraries there is no
# service: the access method still works, bitmap scans are answered by
# nbtree, and EXPLAIN and gpubtree_status() say why.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use GpubtreeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{GBT_PRELOAD} = '0';
my $node = gpubtree_node('no_preload');
$node->start;

# One session, as the library is loaded by its first use in the session
# (then its EXPLAIN hook is there too).
my $out = $node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpubtree;
CREATE TABLE g AS SELECT g % 5000 AS k, g AS v FROM generate_series(1, 50000) g;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX ON g USING gpubtree (k);
CREATE INDEX ON b (k);
VACUUM ANALYZE g;
VACUUM ANALYZE b;
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SELECT (SELECT sum(v) FROM g WHERE k BETWEEN 10 AND 3000) = (SELECT sum(v) FROM b WHERE k BETWEEN 10 AND 3000);
EXPLAIN (COSTS OFF) SELECT sum(v) FROM g WHERE k BETWEEN 10 AND 3000;
SELECT running, status FROM gpubtree_status();
});
like($out, qr/^t$/m, "no preload: the bitmap scan's answer is btree's");
like(
	$out,
	qr/nbtree \(no GPU service: gpubtree is not in shared_preload_libraries\)/,
	'no preload: EXPLAIN says why nbtree answers');
like($out, qr/^f\|no GPU service/m,
	'no preload: gpubtree_status() says the service is not running, and why');
note($out);

$node->stop;
done_testing();
