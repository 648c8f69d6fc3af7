-- Range aggregates from plain SQL (the GpubtreeAggregate node) and the
-- gpubtree_count/sum/avg/min/max functions, against PostgreSQL's own
-- aggregates over the same rows (gpubtree.device = off gives the ordinary
-- plan).  The regression cluster preloads gpubtree, so the service runs.
-- Mirrors here are built by the first query that asks (the outputs say
-- when), not after CREATE INDEX: that is build_after_create.sql's subject.
SET gpubtree.build_after_create = off;
SET max_parallel_workers_per_gather = 0;

-- explain_filter(q): the lines of EXPLAIN q, the same on every PostgreSQL
-- version: without 18's "Index Searches" and "Disabled" lines and its two
-- decimals of actual rows, and InitPlans as 17 names them.
CREATE FUNCTION explain_filter(q text) RETURNS TABLE ("QUERY PLAN" text)
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	i int;
BEGIN
	FOR line IN EXECUTE q LOOP
		CONTINUE WHEN line ~ '^\s*(Index Searches: \d+|Disabled: true)$';
		line := regexp_replace(line, '(rows=\d+)\.00 ', '\1 ', 'g');
		line := regexp_replace(line, '^(\s*InitPlan \d+) \(returns \$\d+\)$', '\1');
		FOR i IN REVERSE 9..0 LOOP
			line := replace(line, '$' || i, format('(InitPlan %s).col1', i + 1));
		END LOOP;
		"QUERY PLAN" := line;
		RETURN NEXT;
	END LOOP;
END $$;

CREATE TABLE ag (k int8, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8);
INSERT INTO ag
SELECT (g * 7919) % 20000 - 10000,
	   CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 600 - 300)::int2 END,
	   CASE WHEN g % 13 = 0 THEN NULL ELSE g * 37 END,
	   CASE WHEN g % 17 = 0 THEN NULL ELSE g::int8 * 1000000007 END,
	   CASE WHEN g % 19 = 0 THEN NULL ELSE (g % 1000) / 7.0 END,
	   CASE WHEN g % 23 = 0 THEN NULL ELSE (g % 3000) / 3.0 - 400 END
FROM generate_series(1, 30000) g;
INSERT INTO ag VALUES (NULL, 1, 1, 1, 1, 1);
CREATE INDEX ag_k ON ag USING gpubtree (k) INCLUDE (i4, i8, f8);
CREATE INDEX ag_k2 ON ag USING gpubtree (k, i2) INCLUDE (f4);
VACUUM ANALYZE ag;

-- agree(query): the query's result through the GpubtreeAggregate node (the
-- other plans are disabled, so that small ranges and pages that are not
-- all-visible take it too), and whether the service answered it, against
-- the ordinary plan's result (floats within 1e-12 relative: the summation
-- order differs).
CREATE FUNCTION agree(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	gpu jsonb;
	cpu jsonb;
	plan jsonb;
	how text;
	k text;
	ok bool := true;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE format('EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF, COSTS OFF) %s', q) INTO plan;
	how := coalesce(jsonb_path_query_first(plan, 'strict $.**."Answered by"') #>> '{}', 'no GpubtreeAggregate node');
	EXECUTE format('SELECT to_jsonb(r) FROM (%s) r', q) INTO gpu;
	RESET enable_seqscan;
	RESET enable_indexscan;
	RESET enable_indexonlyscan;
	RESET enable_bitmapscan;
	SET LOCAL gpubtree.device = off;
	EXECUTE format('SELECT to_jsonb(r) FROM (%s) r', q) INTO cpu;
	RESET gpubtree.device;
	FOR k IN SELECT jsonb_object_keys(cpu) LOOP
		IF jsonb_typeof(cpu -> k) = 'number' AND jsonb_typeof(gpu -> k) = 'number' THEN
			ok := ok AND abs((gpu ->> k)::numeric - (cpu ->> k)::numeric)
				<= 1e-12 * abs((cpu ->> k)::numeric);
		ELSE
			ok := ok AND (gpu -> k) IS NOT DISTINCT FROM (cpu -> k);
		END IF;
	END LOOP;
	RETURN CASE WHEN ok THEN 'same' ELSE 'DIFFERENT ' || gpu::text || ' vs ' || cpu::text END
		|| CASE WHEN how LIKE 'GPU service%' THEN ', by the service' ELSE ', ' || how END;
END $$;

-- The node, its child (the ordinary plan) and what answered.
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i4), avg(f8) FROM ag WHERE k BETWEEN -5000 AND 5000;
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*), sum(i4), avg(f8) FROM ag WHERE k BETWEEN -5000 AND 5000$$);
-- A small range stays with the ordinary plan: a round trip costs more.
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i4), avg(f8) FROM ag WHERE k BETWEEN -50 AND 50;

-- Every aggregate and type, and ranges of every shape.
SELECT q, agree(q) FROM unnest(ARRAY[
	'SELECT count(*) FROM ag WHERE k BETWEEN -500 AND 500',
	'SELECT count(*), count(i4), count(i8), count(f8) FROM ag WHERE k > 9000',
	'SELECT sum(i4), sum(i8), sum(f8), sum(k) FROM ag WHERE k < -9000',
	'SELECT avg(i4), avg(i8), avg(f8), avg(k) FROM ag WHERE k >= 0',
	'SELECT min(i4), max(i4), min(i8), max(i8), min(f8), max(f8), min(k), max(k) FROM ag WHERE k <= 100',
	'SELECT count(*), sum(i2), avg(i2), min(i2), max(i2), avg(f4), min(f4), max(f4) FROM ag WHERE k BETWEEN 10 AND 4000',
	'SELECT count(*), sum(i4) FROM ag',
	'SELECT count(*), sum(i4) FROM ag WHERE k IS NOT NULL',
	'SELECT count(*), sum(i4), min(f8) FROM ag WHERE k BETWEEN 5 AND 4',
	'SELECT count(*), sum(i4), avg(i8), max(f8) FROM ag WHERE k = 42',
	'SELECT count(*), sum(i8) FROM ag WHERE k = ANY (''{1, 2, 3, 3, 5000, -7, 99999}'')',
	'SELECT count(*), sum(i8) FROM ag WHERE k = ANY (''{1, 2, 3, 3, 5000, -7, 99999}'') AND k > 2',
	'SELECT count(*), sum(i4) FROM ag WHERE k > 10::int4 AND k <= 2000::int2',
	'SELECT count(*), sum(i4) FROM ag WHERE 100 < k',
	'SELECT sum(i4) / count(*) AS ratio, count(*) + 1 AS more FROM ag WHERE k > 0',
	'SELECT count(*) FILTER (WHERE i4 > 5) FROM ag WHERE k > 0',
	'SELECT count(DISTINCT i4) FROM ag WHERE k > 0',
	'SELECT count(*) FROM ag WHERE k > 0 AND i4 > 5',
	'SELECT count(*) FROM ag WHERE k IS NULL'
]) q;

-- sum(float4) is summed in float4 by PostgreSQL, in scan order: never ours.
EXPLAIN (COSTS OFF) SELECT sum(f4) FROM ag WHERE k > 0;
-- A NOT NULL key needs no condition for the whole table.
CREATE TABLE agn (k int4 NOT NULL, v int4);
INSERT INTO agn SELECT g, g FROM generate_series(1, 1000) g;
CREATE INDEX agn_k ON agn USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE agn;
SELECT agree('SELECT count(*), sum(v) FROM agn');

-- The whole table on a key that may be NULL: the mirror has no entries for
-- NULL keys, so the node adds those rows from an index scan for k IS NULL,
-- which reads the heap with the query's snapshot; their values may be NULL
-- or not.  With few NULL keys the node wins on cost (default settings).
CREATE TABLE agz (k int4, v int8, f float8, s int2);
INSERT INTO agz
SELECT CASE WHEN g % 50 = 0 THEN NULL ELSE g END,
	   CASE WHEN g % 7 = 0 THEN NULL ELSE g END,
	   CASE WHEN g % 11 = 0 THEN NULL ELSE g / 4.0 END,
	   CASE WHEN g % 13 = 0 THEN NULL ELSE (g % 100 - 50)::int2 END
FROM generate_series(1, 40000) g;
CREATE INDEX agz_k ON agz USING gpubtree (k) INCLUDE (v, f, s);
VACUUM ANALYZE agz;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM agz;
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*), count(v), sum(v), min(f), max(f), avg(s) FROM agz$$);
SELECT q, agree(q) FROM unnest(ARRAY[
	'SELECT count(*), count(k), count(v), count(f), count(s) FROM agz',
	'SELECT sum(v), sum(f), sum(s), sum(k) FROM agz',
	'SELECT avg(v), avg(f), avg(s), avg(k) FROM agz',
	'SELECT min(v), max(v), min(f), max(f), min(s), max(s), min(k), max(k) FROM agz',
	'SELECT count(*), sum(v) FROM agz WHERE k IS NOT NULL',
	'SELECT count(*), sum(v) FROM agz WHERE k > 100'
]) q;
-- Rows with NULL keys holding every extreme, on a page that is not
-- all-visible; one with every value NULL.
INSERT INTO agz VALUES (NULL, -1000000, 1e6, -32768), (NULL, NULL, NULL, NULL);
SELECT agree('SELECT count(*), count(v), sum(v), min(v), max(f), avg(f), min(s), sum(s) FROM agz');
-- The transaction's own rows with NULL keys count, a rolled-back
-- savepoint's and deleted ones do not.
BEGIN;
INSERT INTO agz VALUES (NULL, 7000000, -7, 7);
SAVEPOINT s;
INSERT INTO agz VALUES (NULL, 8000000, 8, 8);
ROLLBACK TO SAVEPOINT s;
DELETE FROM agz WHERE k IS NULL AND v = 100;
SELECT agree('SELECT count(*), sum(v), max(v), min(f) FROM agz');
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT count(*), max(v) FROM agz$$);
COMMIT;
-- Many NULL keys: their index scan costs more than the ordinary plan, which
-- the planner takes; forced, the node still agrees.
UPDATE agz SET k = NULL WHERE k % 3 <> 0;
VACUUM ANALYZE agz;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM agz;
SELECT agree('SELECT count(*), count(v), sum(v), min(f), max(s) FROM agz');
-- Only NULL keys: the mirror has no entries at all.
UPDATE agz SET k = NULL;
SELECT agree('SELECT count(*), count(v), sum(v), min(f), max(s) FROM agz');
DROP TABLE agz;

-- Other key types: date, timestamp, float keys with NaN and infinities.
CREATE TABLE agd (d date, ts timestamp, tz timestamptz, x float8);
INSERT INTO agd SELECT date '2020-01-01' + g % 3000, timestamp '2020-01-01' + g * interval '37 minutes',
	timestamptz '2020-01-01 00:00+00' + g * interval '1 hour',
	CASE WHEN g % 101 = 0 THEN 'NaN' WHEN g % 103 = 0 THEN 'Infinity' ELSE g / 3.0 END
FROM generate_series(1, 20000) g;
CREATE INDEX agd_d ON agd USING gpubtree (d) INCLUDE (ts, x);
CREATE INDEX agd_x ON agd USING gpubtree (x) INCLUDE (tz);
VACUUM ANALYZE agd;
SELECT q, agree(q) FROM unnest(ARRAY[
	'SELECT count(*), min(ts), max(ts), min(d), max(d) FROM agd WHERE d BETWEEN ''2021-01-01'' AND ''2021-06-30''',
	'SELECT count(*), min(x), max(x) FROM agd WHERE d > ''2022-01-01''',
	'SELECT count(*), sum(x), avg(x) FROM agd WHERE d > ''2022-01-01''',
	'SELECT count(*), min(tz), max(tz), min(x), max(x) FROM agd WHERE x > 1000',
	'SELECT count(*), sum(x) FROM agd WHERE x BETWEEN 10 AND 20'
]) q;

-- After updates, deletes, VACUUM and reuse of the freed line pointers by
-- other keys, and with pages that are not all-visible.
UPDATE ag SET i4 = i4 + 1 WHERE k BETWEEN 0 AND 300;
DELETE FROM ag WHERE k BETWEEN 301 AND 900;
SELECT agree('SELECT count(*), sum(i4), sum(f8) FROM ag WHERE k BETWEEN -1000 AND 1000');
VACUUM ag;
INSERT INTO ag SELECT 50000 + g, 1, g, g, g, g FROM generate_series(1, 3000) g;
SELECT agree('SELECT count(*), sum(i4), sum(f8) FROM ag WHERE k BETWEEN -1000 AND 1000'),
	   agree('SELECT count(*), sum(i4), max(i8) FROM ag WHERE k > 40000');
SELECT * FROM gpubtree_verify('ag_k');
VACUUM ag;
SELECT agree('SELECT count(*), sum(i4), max(i8) FROM ag WHERE k > 40000');

-- Inside a transaction: its own rows count, a rolled-back savepoint's do not.
BEGIN;
INSERT INTO ag VALUES (60001, 1, 7, 7, 7, 7);
SAVEPOINT s;
INSERT INTO ag VALUES (60002, 1, 8, 8, 8, 8);
ROLLBACK TO SAVEPOINT s;
SELECT agree('SELECT count(*), sum(i4) FROM ag WHERE k > 60000');
SELECT count(*), sum(i4) FROM ag WHERE k > 60000;
COMMIT;

-- The direct functions.
SELECT gpubtree_count('ag_k', -500, 500) = (SELECT count(*) FROM ag WHERE k BETWEEN -500 AND 500) AS count_ok,
	   gpubtree_sum('ag_k', 'i8', -500, 500) = (SELECT sum(i8) FROM ag WHERE k BETWEEN -500 AND 500) AS sum_ok,
	   gpubtree_avg('ag_k', 'i4', -500, 500) = (SELECT avg(i4) FROM ag WHERE k BETWEEN -500 AND 500) AS avg_ok,
	   gpubtree_min('ag_k', 'f8', -500, 500) = (SELECT min(f8) FROM ag WHERE k BETWEEN -500 AND 500)::numeric AS min_ok,
	   gpubtree_max('ag_k', 'k', -500, 500) = (SELECT max(k) FROM ag WHERE k BETWEEN -500 AND 500) AS max_ok;
SELECT gpubtree_count('ag_k', 5, 4), gpubtree_sum('ag_k', 'i4', 5, 4), gpubtree_min('ag_k', 'i4', 5, 4);
SET gpubtree.device = off;
SELECT gpubtree_count('ag_k', -500, 500) = (SELECT count(*) FROM ag WHERE k BETWEEN -500 AND 500) AS count_ok_without_service;
RESET gpubtree.device;
-- errors
SELECT gpubtree_count('ag', 1, 2);
CREATE INDEX ag_btree ON ag (k);
SELECT gpubtree_count('ag_btree', 1, 2);
SELECT gpubtree_sum('ag_k', 'i2', 1, 2);
SELECT gpubtree_sum('ag_k', 'nope', 1, 2);
SELECT gpubtree_count('ag_k', 'a'::text, 'b'::text);
SELECT gpubtree_count('ag_k', 1, NULL::int);
SELECT gpubtree_sum('agd_d', 'ts', '2020-01-01'::date, '2021-01-01'::date);

-- Privileges: the same rules as for the query itself.
CREATE ROLE gbt_agg_reader;
GRANT SELECT (k, i4) ON ag TO gbt_agg_reader;
SET ROLE gbt_agg_reader;
SELECT count(*), sum(i4) FROM ag WHERE k BETWEEN -500 AND 500;
SELECT sum(i8) FROM ag WHERE k BETWEEN -500 AND 500;
SELECT gpubtree_sum('ag_k', 'i4', -500, 500) = (SELECT sum(i4) FROM ag WHERE k BETWEEN -500 AND 500) AS sum_ok;
SELECT gpubtree_sum('ag_k', 'i8', -500, 500);
RESET ROLE;
-- Row-level security: never the GpubtreeAggregate node, and the functions refuse.
GRANT SELECT ON ag TO gbt_agg_reader;
ALTER TABLE ag ENABLE ROW LEVEL SECURITY;
CREATE POLICY ag_pos ON ag FOR SELECT USING (i4 > 100000);
SET ROLE gbt_agg_reader;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag WHERE k BETWEEN -500 AND 500;
SELECT count(*) = (SELECT count(*) FROM ag WHERE k BETWEEN -500 AND 500 AND i4 > 100000) AS rls_applied
FROM ag WHERE k BETWEEN -500 AND 500;
SELECT gpubtree_count('ag_k', -500, 500);
RESET ROLE;
ALTER TABLE ag DISABLE ROW LEVEL SECURITY;
DROP POLICY ag_pos ON ag;
REVOKE ALL ON ag FROM gbt_agg_reader;
DROP ROLE gbt_agg_reader;

-- An update after VACUUM ANALYZE saw every page all-visible: a HOT update
-- (w is not indexed; fillfactor leaves room) clears every page's bit
-- without adding pages.  The mirror's stamps still decide every entry (a
-- HOT update keeps the entry and its values): no heap visit.
CREATE TABLE stale (k int8, w int8) WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO stale SELECT g, g FROM generate_series(1, 70000) g;
CREATE INDEX stale_k ON stale USING gpubtree (k);
VACUUM ANALYZE stale;
SELECT gpubtree_count('stale_k', 1, 70000) AS builds_the_mirror;
SELECT decided_by, stamped FROM gpubtree_mirrors() WHERE index = 'stale_k'::regclass AND current;
UPDATE stale SET w = w + 1;
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*), sum(k) FROM stale WHERE k BETWEEN 1 AND 70000$$);
SELECT count(*), sum(k) FROM stale WHERE k BETWEEN 1 AND 70000;
-- A small range still goes to the service; and, forced (agree() disables
-- the other plans), all 70000 entries to check, more than the first
-- request has room for.
SELECT agree('SELECT count(*), sum(k) FROM stale WHERE k BETWEEN 100 AND 199');
SELECT agree('SELECT count(*), sum(k), min(k), max(k) FROM stale WHERE k BETWEEN 1 AND 70000');
-- With the capture trigger disabled, deletes would go unrecorded: the
-- mirror decides by the visibility map alone, as an index-only scan does.
-- The planner still counts on the mirror and takes the node; at run time
-- the entries to check in the heap cost more than the plan below, which
-- then answers.  Enabling the trigger again makes the mirror unusable
-- (deletes may have been missed meanwhile): the next query exports afresh.
ALTER TABLE stale DISABLE TRIGGER ALL;
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*), sum(k) FROM stale WHERE k BETWEEN 1 AND 70000$$);
SELECT agree('SELECT count(*), sum(k), min(k), max(k) FROM stale WHERE k BETWEEN 1 AND 70000');
DELETE FROM stale WHERE k % 7 = 0;
SELECT agree('SELECT count(*), sum(k), min(k), max(k) FROM stale WHERE k BETWEEN 1 AND 70000');
SELECT count(*) AS current_mirrors_before, string_agg(decided_by, ',') AS decided_by
FROM gpubtree_mirrors() WHERE index = 'stale_k'::regclass AND current;
ALTER TABLE stale ENABLE TRIGGER ALL;
SELECT count(*) AS current_mirrors_after FROM gpubtree_mirrors() WHERE index = 'stale_k'::regclass AND current;
SELECT agree('SELECT count(*), sum(k), min(k), max(k) FROM stale WHERE k BETWEEN 1 AND 70000');
-- Exported again before VACUUM (most pages were not all-visible), the
-- mirror decided by the visibility map; VACUUM vouches for the blocks it
-- leaves all-visible, and from then on its stamps decide.
SELECT decided_by FROM gpubtree_mirrors() WHERE index = 'stale_k'::regclass AND current;
VACUUM stale;
SELECT agree('SELECT count(*), sum(k), min(k), max(k) FROM stale WHERE k BETWEEN 1 AND 70000');
SELECT decided_by FROM gpubtree_mirrors() WHERE index = 'stale_k'::regclass AND current;
UPDATE stale SET k = k + 100000 WHERE k % 11 = 0;
DELETE FROM stale WHERE k % 13 = 0;
SELECT agree('SELECT count(*), sum(k), min(k), max(k) FROM stale WHERE k BETWEEN 1 AND 200000');
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*), sum(k) FROM stale WHERE k BETWEEN 1 AND 200000$$);
-- gpubtree_verify checks each entry's stamps against the heap too.
SELECT count(*) AS problems FROM gpubtree_verify('stale_k');
DROP TABLE stale;

-- gpubtree.device = off: the ordinary plan answers (and EXPLAIN says so).
SET gpubtree.device = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag WHERE k BETWEEN -500 AND 500;
RESET gpubtree.device;

RESET ALL;
DROP FUNCTION explain_filter(text);
