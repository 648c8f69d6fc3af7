-- The GpubtreeAggregate node's estimate of how many buckets a GROUP BY a
-- bucket of the key has (agg_group_estimate.c: the key column's statistics
-- and the bucket expression), against the real number of groups, and the
-- node chosen at default settings once its estimate is right.
-- estimate_num_groups() alone takes a function of the key to have as many
-- values as the key itself.
SET max_parallel_workers_per_gather = 0;

-- node_rows(q): the node's estimated rows in q's plan; NULL without the node.
CREATE FUNCTION node_rows(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON, COSTS ON) ' || q INTO plan;
	RETURN (jsonb_path_query_first(plan,
		'strict $.** ? (@."Custom Plan Provider" == "GpubtreeAggregate")."Plan Rows"') #>> '{}')::float8;
END $$;

-- estimate(tab, bucket, cond): whether SELECT bucket, count(*), sum(v) FROM
-- tab [WHERE cond] GROUP BY 1 is planned with the node, and whether its
-- estimate is within a factor of 2 of the real number of groups.
CREATE FUNCTION estimate(tab text, bucket text, cond text DEFAULT NULL)
RETURNS TABLE (chosen bool, within_2x bool) LANGUAGE plpgsql AS $$
DECLARE
	wh text := coalesce(' WHERE ' || cond, '');
	real_groups float8;
	node_est float8;
BEGIN
	EXECUTE format('SELECT count(DISTINCT %s) FROM %s%s', bucket, tab, wh) INTO real_groups;
	node_est := node_rows(format('SELECT %s, count(*), sum(v) FROM %s%s GROUP BY 1', bucket, tab, wh));
	chosen := node_est IS NOT NULL;
	within_2x := node_est BETWEEN real_groups / 2 AND real_groups * 2;
	RETURN NEXT;
END $$;

-- 200,000 distinct int8 keys over [0, 1000000), and 200,000 timestamps 157
-- seconds apart over a year.
CREATE TABLE ge_int (k int8, v int8);
INSERT INTO ge_int SELECT (g * 7919) % 1000000, g FROM generate_series(1, 200000) g;
CREATE INDEX ge_int_k ON ge_int USING gpubtree (k) INCLUDE (v);
CREATE TABLE ge_ts (ts timestamptz, v int8);
INSERT INTO ge_ts
SELECT timestamptz '2024-01-01 00:00:00+00' + g * interval '157 seconds', g
FROM generate_series(1, 200000) g;
CREATE INDEX ge_ts_ts ON ge_ts USING gpubtree (ts) INCLUDE (v);
VACUUM ANALYZE ge_int;
VACUUM ANALYZE ge_ts;

SELECT 'width_bucket 100' AS bucket, * FROM estimate('ge_int', 'width_bucket(k, 0, 1000000, 100)');
SELECT 'k / 1000' AS bucket, * FROM estimate('ge_int', 'k / 1000');
SELECT 'date_trunc day' AS bucket, * FROM estimate('ge_ts', $$date_trunc('day', ts)$$);
SELECT 'date_bin 1 hour' AS bucket, * FROM estimate('ge_ts',
	$$date_bin('1 hour', ts, timestamptz '2000-01-01 00:00:00+00')$$);
-- Chains of steps: a cast, a quotient and floor; a shift and a product.
SELECT 'floor(k::numeric / 3000)' AS bucket, * FROM estimate('ge_int', 'floor(k::numeric / 3000)');
SELECT '(k + 500) / 2500 * 3' AS bucket, * FROM estimate('ge_int', '(k + 500) / 2500 * 3');
SELECT 'date_trunc month' AS bucket, * FROM estimate('ge_ts', $$date_trunc('month', ts)$$);
SELECT 'ts::date' AS bucket, * FROM estimate('ge_ts', 'ts::date');
-- A key range asks for its share of the buckets.
SELECT 'width_bucket, 10 % of keys' AS bucket, * FROM estimate('ge_int',
	'width_bucket(k, 0, 1000000, 100)', 'k < 100000');
SELECT 'date_trunc day, 30 days' AS bucket, * FROM estimate('ge_ts', $$date_trunc('day', ts)$$,
	$$ts >= timestamptz '2024-03-01 00:00:00+00' AND ts < timestamptz '2024-03-31 00:00:00+00'$$);

-- Buckets never outnumber the keys: a second over keys 157 seconds apart,
-- and the key itself, have as many groups as keys (more than the node asks
-- the service for, so the node is not chosen: the other plans are disabled
-- here to read its estimate).
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SET enable_hashagg = off;
SET enable_sort = off;
SELECT 'date_trunc second' AS bucket, within_2x FROM estimate('ge_ts', $$date_trunc('second', ts)$$);
SELECT 'k' AS bucket, within_2x FROM estimate('ge_int', 'k');

-- No statistics: estimate_num_groups()'s answer, the same as for the key,
-- but for width_bucket's count + 2.
CREATE TABLE ge_nostats (k int8, v int8);
CREATE INDEX ge_nostats_k ON ge_nostats USING gpubtree (k) INCLUDE (v);
SELECT node_rows('SELECT k / 1000, count(*), sum(v) FROM ge_nostats GROUP BY 1') =
	node_rows('SELECT k, count(*), sum(v) FROM ge_nostats GROUP BY 1') AS as_the_key;
SELECT node_rows('SELECT width_bucket(k, 0, 1000, 10), count(*), sum(v) FROM ge_nostats GROUP BY 1')
	= 10 + 2 AS count_and_2;
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
RESET enable_hashagg;
RESET enable_sort;

-- A million rows: the ordinary plan (the node's child) is a seq scan and a
-- HashAggregate over as many groups as keys; the node answers instead.
CREATE TABLE ge_big (k int8, ts timestamptz, v int8);
INSERT INTO ge_big
SELECT (g::int8 * 7919) % 4000000,
	   timestamptz '2024-01-01 00:00:00+00' + g * interval '31 seconds', g
FROM generate_series(1, 1000000) g;
CREATE INDEX ge_big_k ON ge_big USING gpubtree (k) INCLUDE (v);
CREATE INDEX ge_big_ts ON ge_big USING gpubtree (ts) INCLUDE (v);
VACUUM ANALYZE ge_big;
EXPLAIN (COSTS OFF)
SELECT width_bucket(k, 0, 4000000, 100), count(*), sum(v) FROM ge_big GROUP BY 1;
EXPLAIN (COSTS OFF)
SELECT date_trunc('day', ts), count(*), sum(v) FROM ge_big GROUP BY 1;
SELECT 'width_bucket 100' AS bucket, * FROM estimate('ge_big', 'width_bucket(k, 0, 4000000, 100)');
SELECT 'date_trunc day' AS bucket, * FROM estimate('ge_big', $$date_trunc('day', ts)$$);
SELECT 'date_bin 1 hour' AS bucket, * FROM estimate('ge_big',
	$$date_bin('1 hour', ts, timestamptz '2000-01-01 00:00:00+00')$$);

DROP TABLE ge_int, ge_ts, ge_big, ge_nostats;
DROP FUNCTION estimate(text, text, text);
DROP FUNCTION node_rows(text);
