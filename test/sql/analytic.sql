--
-- Analytic shapes of GpubtreeAggregate (issue 36): GROUP BY a bucket of the
-- key, filters past the key's ranges and FILTER clauses, GROUP BY a column's
-- values, a (tenant, ts) index.  Each query runs through the node (the other
-- plans disabled) and through the ordinary plan (gpubtree.device = off);
-- same() says whether the rows are the same, as sets, and what answered.
-- (test/sql/group_buckets.sql and filters.sql generate every function, type
-- and operator; this file holds the shapes together.)
--
SET client_min_messages = warning;
CREATE FUNCTION same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	a text;
	b text;
	plan jsonb;
	how text;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE format('EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF, COSTS OFF) %s', q) INTO plan;
	how := coalesce(jsonb_path_query_first(plan, 'strict $.**."Answered by"') #>> '{}',
					'no GpubtreeAggregate node');
	EXECUTE format('SELECT string_agg(r::text, %L ORDER BY r::text) FROM (%s) r', ';', q) INTO a;
	RESET enable_seqscan;
	RESET enable_indexscan;
	RESET enable_indexonlyscan;
	RESET enable_bitmapscan;
	SET LOCAL gpubtree.device = off;
	EXECUTE format('SELECT string_agg(r::text, %L ORDER BY r::text) FROM (%s) r', ';', q) INTO b;
	RESET gpubtree.device;
	RETURN CASE WHEN a IS NOT DISTINCT FROM b THEN 'same' ELSE 'DIFFERENT ' || coalesce(a, '<none>') || ' vs ' || coalesce(b, '<none>') END
		|| CASE WHEN how LIKE 'GPU service%' THEN ', by the service' ELSE ', ' || how END;
END $$;

-- What answered a statement (EXPLAIN ANALYZE's "Answered by").
CREATE FUNCTION answered_by(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE format('EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF, COSTS OFF) %s', q) INTO plan;
	RETURN coalesce(jsonb_path_query_first(plan, 'strict $.**."Answered by"') #>> '{}',
					'no GpubtreeAggregate node');
END $$;

-- timestamptz keys over a year, across daylight-saving changes
CREATE TABLE an_tz (ts timestamptz, v int8, f float8);
INSERT INTO an_tz SELECT timestamptz '2024-01-01 00:00+00' + i * interval '17 minutes', i % 100, i * 0.5
FROM generate_series(1, 40000) i;
INSERT INTO an_tz VALUES (NULL, 1, 1);
CREATE INDEX ON an_tz USING gpubtree (ts) INCLUDE (v, f);
VACUUM ANALYZE an_tz;
SET TimeZone = 'America/New_York';
SELECT q, same(q) FROM unnest(ARRAY[
	$q$SELECT date_trunc('day', ts) d, count(*), sum(v), avg(v), max(f) FROM an_tz GROUP BY 1$q$,
	$q$SELECT date_trunc('hour', ts) d, count(*), sum(v) FROM an_tz GROUP BY 1$q$,
	$q$SELECT date_trunc('month', ts) d, count(*), min(ts), max(ts) FROM an_tz GROUP BY 1$q$,
	$q$SELECT date_trunc('week', ts) d, count(*) FROM an_tz WHERE ts BETWEEN '2024-03-01' AND '2024-04-15' GROUP BY 1$q$,
	$q$SELECT date_trunc('day', ts, 'Europe/Berlin') d, count(*) FROM an_tz GROUP BY 1$q$,
	$q$SELECT date_bin('15 minutes', ts, '2024-01-01') d, count(*) FROM an_tz WHERE ts < '2024-02-01' GROUP BY 1$q$,
	$q$SELECT ts::date d, count(*) FROM an_tz GROUP BY 1$q$,
	$q$SELECT date_trunc('day', ts) d, count(*) FILTER (WHERE v > 50), min(f) FILTER (WHERE v < 10) FROM an_tz WHERE ts >= '2024-06-01' GROUP BY 1$q$
]) q;
SET TimeZone = 'Australia/Lord_Howe';
SELECT q, same(q) FROM unnest(ARRAY[
	$q$SELECT date_trunc('hour', ts) d, count(*), sum(v) FROM an_tz GROUP BY 1$q$,
	$q$SELECT date_trunc('day', ts) d, count(*) FROM an_tz GROUP BY 1 HAVING count(*) > 84$q$
]) q;
RESET TimeZone;

-- integer keys, NULL keys and values, floats with NaN
CREATE TABLE an_i (k int4, v int8, c int4, f float8);
INSERT INTO an_i SELECT CASE WHEN i % 500 = 0 THEN NULL ELSE i - 5000 END,
	CASE WHEN i % 13 = 0 THEN NULL ELSE i % 1000 END, i % 10,
	CASE WHEN i % 17 = 0 THEN NULL ELSE i / 7.0 END
FROM generate_series(1, 30000) i;
CREATE INDEX ON an_i USING gpubtree (k) INCLUDE (v, c, f);
VACUUM ANALYZE an_i;
SELECT q, same(q) FROM unnest(ARRAY[
	'SELECT k / 1000 b, count(*), sum(v), avg(v), max(f) FROM an_i GROUP BY 1',
	'SELECT k / -700 b, count(*), sum(v) FROM an_i GROUP BY 1',
	'SELECT width_bucket(k, 0, 20000, 7) b, count(*), sum(v), max(f) FROM an_i GROUP BY 1',
	'SELECT width_bucket(k, 20000, 0, 7) b, count(*) FROM an_i GROUP BY 1',
	'SELECT width_bucket(k::numeric, 0.5, 20000.5, 9) b, count(*) FROM an_i GROUP BY 1',
	'SELECT floor(k / 333.0) b, count(*) FROM an_i GROUP BY 1',
	'SELECT k, count(*), sum(v) FROM an_i WHERE k BETWEEN 100 AND 2000 GROUP BY 1',
	'SELECT k / 10 b, count(*) FROM an_i WHERE k = ANY (ARRAY[1, 5, 17, 18, 19, 2000, -4000]) GROUP BY 1',
	'SELECT k * 3 - 7 b, count(*) FROM an_i WHERE k < 300 GROUP BY 1',
	'SELECT sum(v), count(*) FROM an_i WHERE k BETWEEN 100 AND 20000 AND c = 3',
	'SELECT sum(v), count(*), min(f) FROM an_i WHERE k BETWEEN 100 AND 20000 AND (c = 3 OR v > 900)',
	'SELECT count(*) FROM an_i WHERE k < 20000 AND NOT (c IN (1, 2, NULL))',
	'SELECT count(*) FROM an_i WHERE k < 20000 AND c <> ALL (ARRAY[1, 2, NULL])',
	'SELECT count(*), sum(v) FROM an_i WHERE k < 20000 AND v IS NULL',
	'SELECT count(*) FROM an_i WHERE k < 20000 AND k <> 500',
	'SELECT count(*) FILTER (WHERE c = 3), sum(v) FILTER (WHERE f < 100), count(*) FROM an_i WHERE k BETWEEN 10 AND 20000',
	'SELECT count(*) FILTER (WHERE c = 3), count(*) FROM an_i',
	'SELECT k / 1000, count(*), sum(v) FILTER (WHERE c = 4), min(f) FILTER (WHERE v > 10) FROM an_i WHERE k > 5 AND c IN (4, 5, 6) GROUP BY 1',
	'SELECT c, count(*), sum(v), min(f) FROM an_i WHERE k BETWEEN 100 AND 20000 GROUP BY c',
	'SELECT c, count(*) FILTER (WHERE v > 500), max(v) FROM an_i GROUP BY c',
	'SELECT c, count(*) FROM an_i WHERE k > 0 GROUP BY c HAVING count(*) > 2400',
	'SELECT v, count(*) FROM an_i GROUP BY v',
	'SELECT k, count(*), sum(v) FROM an_i WHERE c = 3 GROUP BY k'
]) q;
-- GROUP BY an immutable expression of one column the index holds (of the
-- key only under conditions past its ranges): the column's groups, the
-- expression evaluated once a value, equal results merged; HAVING on the
-- node; -0 and 0 in one group fall back unless their bits agree
SELECT q, same(q) FROM unnest(ARRAY[
	'SELECT v % 10 b, count(*), sum(k), min(f) FROM an_i WHERE k BETWEEN 100 AND 20000 GROUP BY 1',
	'SELECT v / 100 b, count(*), avg(v) FROM an_i GROUP BY 1',
	'SELECT abs(c - 5) b, count(*), sum(v) FROM an_i WHERE k > 0 GROUP BY 1 HAVING sum(v) > 2000000',
	'SELECT CASE WHEN v > 500 THEN ''big'' ELSE ''small'' END b, count(*) FROM an_i WHERE k < 25000 GROUP BY 1',
	'SELECT coalesce(v, 0) % 3 b, count(*), max(k) FROM an_i WHERE k < 25000 GROUP BY 1',
	'SELECT (c + 1) * 2 b, count(*) FILTER (WHERE v > 500) FROM an_i GROUP BY 1',
	'SELECT k % 10 b, count(*) FROM an_i WHERE k < 20000 AND c = 3 GROUP BY 1',
	'SELECT 100 / (c - 20) b, count(*) FROM an_i GROUP BY 1',
	'SELECT 100 / c b, count(*) FROM an_i WHERE k BETWEEN 100 AND 20000 AND c > 0 GROUP BY 1',
	'SELECT (c - 5)::float8 * 0 b, count(*) FROM an_i WHERE k < 20000 GROUP BY 1',
	'SELECT (c - 5)::float8 * 0 b, count(*) FROM an_i WHERE k < 20000 AND c >= 5 GROUP BY 1'
]) q;
-- not offered: the ordinary plan, and gpubtree_why_not() says why
SELECT q, same(q) FROM unnest(ARRAY[
	'SELECT k % 10 b, count(*) FROM an_i GROUP BY 1',
	'SELECT count(*) FROM an_i WHERE k < 20000 AND k % 2 = 0',
	'SELECT f, count(*) FROM an_i GROUP BY f'
]) q;
SELECT plan_node, relation, reason FROM gpubtree_why_not('SELECT k % 10 b, count(*) FROM an_i GROUP BY 1')
WHERE plan_node = 'GpubtreeAggregate';
SELECT plan_node, relation, reason FROM gpubtree_why_not('SELECT count(*) FROM an_i WHERE k < 20000 AND k % 2 = 0')
WHERE plan_node = 'GpubtreeAggregate';
SELECT q, w.reason FROM unnest(ARRAY[
	'SELECT v + c b, count(*) FROM an_i GROUP BY 1',
	'SELECT v + (random() * 2)::int b, count(*) FROM an_i GROUP BY 1',
	'SELECT v + (SELECT max(c) FROM an_i) b, count(*) FROM an_i GROUP BY 1'
]) q, gpubtree_why_not(q) w
WHERE w.plan_node = 'GpubtreeAggregate' AND w.reason LIKE 'GROUP BY%';
-- errors of the bucket function: PostgreSQL's, when a row has the key
SELECT same('SELECT k / 0 b, count(*) FROM an_i GROUP BY 1');
SELECT same('SELECT k / 0 b, count(*) FROM an_i WHERE k > 100000 GROUP BY 1');
-- and of a GROUP BY expression: PostgreSQL's when a visible row has the
-- value (division by zero at c = 0), none when no row the WHERE keeps has
-- it (v = 500 only on rows with NULL keys)
SELECT same('SELECT 100 / c b, count(*) FROM an_i WHERE k BETWEEN 100 AND 20000 GROUP BY 1');
SELECT same('SELECT 100 / c b, count(*) FROM an_i WHERE k BETWEEN 100 AND 20000 AND v > 0 AND c <> 0 GROUP BY 1');
SELECT same('SELECT 1000 / (v - 500) b, count(*) FROM an_i WHERE k < 25000 GROUP BY 1');
-- own uncommitted changes
BEGIN;
INSERT INTO an_i SELECT i, 1, 3, 1 FROM generate_series(100000, 100100) i;
DELETE FROM an_i WHERE k BETWEEN 0 AND 50;
UPDATE an_i SET v = v + 1000, c = 3 WHERE k BETWEEN 1000 AND 1100;
-- the rows of c = 0 between 200 and 300 deleted: 100 / c errs on none
DELETE FROM an_i WHERE k BETWEEN 200 AND 300 AND c = 0;
SELECT q, same(q) FROM unnest(ARRAY[
	'SELECT k / 1000 b, count(*), sum(v) FROM an_i GROUP BY 1',
	'SELECT sum(v), count(*) FROM an_i WHERE k BETWEEN 100 AND 20000 AND c = 3',
	'SELECT c, count(*), sum(v) FROM an_i WHERE k > 0 GROUP BY c',
	'SELECT c % 4 b, count(*), sum(v) FROM an_i WHERE k > 0 GROUP BY 1',
	'SELECT 100 / c b, count(*), sum(v) FROM an_i WHERE k BETWEEN 200 AND 300 GROUP BY 1'
]) q;
ROLLBACK;
-- parameters of a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE an_p(int, int, int) AS SELECT width_bucket(k, $1, $2, 5) b, count(*), sum(v) FILTER (WHERE c = $3) FROM an_i WHERE k >= $1 GROUP BY 1;
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT answered_by('EXECUTE an_p(0, 10000, 4)');
CREATE TEMP TABLE an_gpu AS EXECUTE an_p(0, 10000, 4);
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
SET gpubtree.device = off;
CREATE TEMP TABLE an_cpu AS EXECUTE an_p(0, 10000, 4);
RESET gpubtree.device;
SELECT (SELECT count(*) FROM an_gpu) AS groups,
	(SELECT count(*) FROM (TABLE an_gpu EXCEPT TABLE an_cpu) d) +
	(SELECT count(*) FROM (TABLE an_cpu EXCEPT TABLE an_gpu) d) AS differences;
-- a parameter in a GROUP BY expression: modulo 7, then modulo 0 (the
-- plan below's error)
PREPARE an_m(int) AS SELECT v % $1 b, count(*), sum(k) FROM an_i WHERE k > 0 GROUP BY 1;
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT answered_by('EXECUTE an_m(7)');
CREATE TEMP TABLE an_mg AS EXECUTE an_m(7);
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
SET gpubtree.device = off;
CREATE TEMP TABLE an_mc AS EXECUTE an_m(7);
RESET gpubtree.device;
SELECT (SELECT count(*) FROM an_mg) AS groups,
	(SELECT count(*) FROM (TABLE an_mg EXCEPT TABLE an_mc) d) +
	(SELECT count(*) FROM (TABLE an_mc EXCEPT TABLE an_mg) d) AS differences;
EXECUTE an_m(0);
RESET plan_cache_mode;
-- under a parallel plan below, where no subtransaction can be started:
-- the node evaluates the expression itself, and raises its error
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT v % 10 b, count(*), sum(k) FROM an_i WHERE k BETWEEN 100 AND 20000 GROUP BY 1;
SELECT same('SELECT v % 10 b, count(*), sum(k) FROM an_i WHERE k BETWEEN 100 AND 20000 GROUP BY 1');
SELECT 100 / c b, count(*) FROM an_i WHERE k BETWEEN 100 AND 20000 GROUP BY 1;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- a (tenant, ts) index: a tenant's window, per-tenant totals
CREATE TABLE an_t (tenant int4, ts timestamptz, amount int8);
INSERT INTO an_t SELECT CASE WHEN i % 997 = 0 THEN NULL ELSE i % 50 END,
	timestamptz '2025-01-01 00:00+00' + i * interval '7 minutes', i % 1000
FROM generate_series(1, 60000) i;
CREATE INDEX ON an_t USING gpubtree (tenant, ts) INCLUDE (amount);
VACUUM ANALYZE an_t;
SELECT q, same(q) FROM unnest(ARRAY[
	$q$SELECT sum(amount) FROM an_t WHERE tenant = 5 AND ts >= '2025-02-01 00:00+00' AND ts < '2025-03-01 00:00+00'$q$,
	$q$SELECT tenant, sum(amount), count(*) FROM an_t WHERE ts >= '2025-02-01 00:00+00' AND ts < '2025-03-01 00:00+00' GROUP BY tenant$q$,
	$q$SELECT tenant, count(*) FILTER (WHERE amount > 500), max(ts) FROM an_t GROUP BY tenant$q$
]) q;
DROP TABLE an_tz, an_i, an_t;
DROP FUNCTION same(text), answered_by(text);
