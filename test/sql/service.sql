-- Bitmap scans answered by the GPU service (its CPU engine where there is
-- no GPU), compared with btree on the same data.  The regression cluster
-- preloads gpubtree, so the service runs.
-- (Aggregates here test scans: the aggregates test covers the GpubtreeAggregate node,
-- the lookup test the GpubtreeLookup node.)
SET gpubtree.enable_aggregate = off;
SET gpubtree.enable_lookup = off;
SELECT running, mirror_bytes >= 0 AS sane FROM gpubtree_status();

CREATE TABLE sg (k int8, f float8, d date, v int4);
CREATE TABLE sb (k int8, f float8, d date, v int4);
INSERT INTO sg
SELECT (g * 7919) % 50000 - 25000,
	   CASE WHEN g % 97 = 0 THEN 'NaN' WHEN g % 89 = 0 THEN '-0' ELSE (g % 1000) / 7.0 END,
	   date '2020-01-01' + g % 2000, g
FROM generate_series(1, 60000) g;
INSERT INTO sg VALUES (NULL, NULL, NULL, -1), (9223372036854775807, 'Infinity', 'infinity', -2),
	(-9223372036854775808, '-Infinity', '-infinity', -3);
INSERT INTO sb SELECT * FROM sg;
SET gpubtree.build_after_create = wait;
CREATE INDEX sg_k ON sg USING gpubtree (k) INCLUDE (v);
CREATE INDEX sg_f ON sg USING gpubtree (f DESC NULLS FIRST);
CREATE INDEX sg_d_k ON sg USING gpubtree (d, k);
CREATE INDEX sb_k ON sb (k) INCLUDE (v);
RESET gpubtree.build_after_create;
CREATE INDEX sb_f ON sb (f DESC NULLS FIRST);
CREATE INDEX sb_d_k ON sb (d, k);
-- (sg_k, the table's first gpubtree index, installed the capture trigger:
-- its mirror is built by a job after its CREATE INDEX commits; waited for.)
DO $$
BEGIN
	FOR i IN 1..600 LOOP
		EXIT WHEN EXISTS (SELECT FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass AND current
						  AND database = (SELECT oid FROM pg_database WHERE datname = current_database()));
		PERFORM pg_sleep(0.05);
	END LOOP;
END $$;
VACUUM ANALYZE sg;
VACUUM ANALYZE sb;

SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
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

-- CREATE INDEX gave the service the new index's mirror
-- (gpubtree.build_after_create).
SELECT entries, current FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass;

-- A range goes to the service.
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM sg WHERE k BETWEEN -100 AND 100$$);
SELECT count(*), sum(v) FROM sg WHERE k BETWEEN -100 AND 100;
SELECT count(*), sum(v) FROM sb WHERE k BETWEEN -100 AND 100;
SELECT index::regclass, engine IN ('gpu', 'cpu') AS engine_ok, entries, hits > 0 AS used, current
FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
-- Its bytes: at least a key and a TID an entry, the device's share of them
-- only on the GPU.
SELECT bytes_per_entry = bytes::float8 / entries AS per_entry_ok,
	   bytes_per_entry >= 14 AS key_and_tid_at_least,
	   CASE engine WHEN 'gpu' THEN device_bytes BETWEEN 1 AND bytes
	   ELSE device_bytes = 0 END AS device_ok
FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database());

-- The mirror holds exactly the index's entries (no rows = no differences).
SELECT * FROM gpubtree_verify('sg_k');
SELECT * FROM gpubtree_verify('sb_k');

-- A single-key lookup and small = ANY arrays stay on nbtree.
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT count(*) FROM sg WHERE k = 5$$);
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT count(*) FROM sg WHERE k = ANY ('{1,2,3}')$$);

-- A large = ANY goes to the service; NULL elements and duplicates included.
CREATE TABLE keys AS SELECT (g * 31) % 60000 - 30000 AS k FROM generate_series(1, 5000) g;
CREATE VIEW arr AS SELECT array_agg(k) || '{NULL,7,7}'::int8[] AS a FROM keys;
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM sg WHERE k = ANY ((SELECT a FROM arr)::int8[])$$);
SELECT count(*), sum(v) FROM sg WHERE k = ANY ((SELECT a FROM arr)::int8[]);
SELECT count(*), sum(v) FROM sb WHERE k = ANY ((SELECT a FROM arr)::int8[]);
-- Its batch went to the engine, which keeps the buffers for the next one
-- apart from the mirror's bytes (on the GPU; the CPU engine keeps none).
-- A few ranges are searched on the host and need none.
SELECT CASE engine WHEN 'gpu' THEN scratch_bytes > 0 ELSE scratch_bytes = 0 END AS scratch_ok
FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
-- ... combined with a range on the same column.
SELECT count(*), sum(v) FROM sg WHERE k = ANY ((SELECT a FROM arr)::int8[]) AND k > 0;
SELECT count(*), sum(v) FROM sb WHERE k = ANY ((SELECT a FROM arr)::int8[]) AND k > 0;
SET gpubtree.min_gpu_batch = 100000;
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM sg WHERE k = ANY ((SELECT a FROM arr)::int8[])$$);
RESET gpubtree.min_gpu_batch;

-- Every bound shape and cross-type comparisons agree with btree.
CREATE FUNCTION s_agree(cond text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	a text;
	b text;
BEGIN
	EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(v), 0) FROM sg WHERE %s', cond) INTO a;
	EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(v), 0) FROM sb WHERE %s', cond) INTO b;
	RETURN CASE WHEN a = b THEN 'same ' || a ELSE 'DIFFERENT gpubtree ' || a || ' btree ' || b END;
END $$;
SELECT requests AS requests_before FROM gpubtree_status() \gset
SELECT c, s_agree(c) FROM unnest(ARRAY[
	'k > 24990', 'k >= 24990', 'k < -24990', 'k <= -24990', 'k > 100 AND k < 50',
	'k >= 9223372036854775807', 'k > 9223372036854775806', 'k < -9223372036854775807',
	'k > 10::int4 AND k <= 20::int2', 'k BETWEEN -5 AND 5 AND k >= 0',
	'f > 140', 'f >= ''NaN''', 'f > ''Infinity''', 'f < ''-Infinity''', 'f <= 0 AND f >= 0',
	'f BETWEEN 1::float4 AND 2::float4', 'f < 1.5::float4',
	'd BETWEEN ''2020-03-01'' AND ''2020-03-10''', 'd > ''2025-06-01''',
	'd BETWEEN ''2020-03-01'' AND ''2020-03-10'' AND k > 0']) c;
-- (and they were answered by the service, not by nbtree)
SELECT requests - :requests_before >= 15 AS served FROM gpubtree_status();
-- A timestamp bound on a date column is left to nbtree (time-zone rules).
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM sg WHERE d > timestamp '2025-06-01 12:00'$$);
SELECT s_agree('d > timestamp ''2025-06-01 12:00''');

-- A committed insert reaches the mirror through the change log: the mirror
-- stays current, holds the new entry in its delta, and the scan finds it.
SELECT entries AS entries_before FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass \gset
INSERT INTO sg VALUES (42, 1, '2020-01-01', 424242);
INSERT INTO sb VALUES (42, 1, '2020-01-01', 424242);
SELECT s_agree('k BETWEEN 40 AND 44');
SELECT current, entries - :entries_before AS added, delta FROM gpubtree_mirrors()
WHERE index = 'sg_k'::regclass;
SELECT * FROM gpubtree_verify('sg_k');
-- Our own uncommitted rows are found; rolled-back ones are not.
BEGIN;
INSERT INTO sg VALUES (43, 1, '2020-01-01', 434343);
SELECT count(*) FILTER (WHERE v = 434343) FROM sg WHERE k BETWEEN 40 AND 44;
ROLLBACK;
SELECT count(*) FILTER (WHERE v = 434343) FROM sg WHERE k BETWEEN 40 AND 44;
-- Deletes and VACUUM, then reuse of the freed line pointers by other keys:
-- VACUUM's sweep took the dead entries out of the mirror, which is still
-- current and never returns an old key's entry for a reused TID.
CREATE TEMP TABLE sg_dead AS SELECT ctid AS tid FROM sg WHERE k BETWEEN 0 AND 1000;
DELETE FROM sg WHERE k BETWEEN 0 AND 1000;
DELETE FROM sb WHERE k BETWEEN 0 AND 1000;
SELECT s_agree('k BETWEEN -50 AND 2000');
VACUUM sg;
VACUUM sb;
SELECT current FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass;
SELECT * FROM gpubtree_verify('sg_k');
INSERT INTO sg SELECT 77777, 0, '2020-01-01', g FROM generate_series(1, 2000) g;
INSERT INTO sb SELECT 77777, 0, '2020-01-01', g FROM generate_series(1, 2000) g;
SELECT count(*) > 100 AS tids_reused FROM sg_dead d
WHERE EXISTS (SELECT FROM sg WHERE ctid = d.tid AND k = 77777);
SELECT s_agree('k BETWEEN -50 AND 2000'), s_agree('k > 77776');
SELECT current FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass;
SELECT * FROM gpubtree_verify('sg_k');
-- A transaction too large for the change log invalidates the mirror
-- instead; the next scan rebuilds it.
INSERT INTO sg SELECT 88888, 0, '2020-01-01', g FROM generate_series(1, 40000) g;
INSERT INTO sb SELECT 88888, 0, '2020-01-01', g FROM generate_series(1, 40000) g;
SELECT coalesce(bool_or(current), false) AS current FROM gpubtree_mirrors()
WHERE index = 'sg_k'::regclass;
SELECT s_agree('k > 77776');
SELECT current FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass;
SELECT * FROM gpubtree_verify('sg_k');
-- After REINDEX and TRUNCATE the index has new storage: a new mirror.
REINDEX INDEX sg_k;
SELECT s_agree('k BETWEEN -50 AND 2000');
SELECT count(*) AS mirrors_of_sg_k FROM gpubtree_mirrors() WHERE index = 'sg_k'::regclass;

-- gpubtree.device = off keeps every scan on nbtree.
SET gpubtree.device = off;
SELECT * FROM explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM sg WHERE k BETWEEN -100 AND 100$$);
RESET gpubtree.device;

RESET ALL;
SET gpubtree.enable_aggregate = off;
SET gpubtree.enable_lookup = off;

-- The planner takes the service's bitmap path for a large constant = ANY,
-- where btree's costs would have it descend the tree once per element.
CREATE FUNCTION plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	plan text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line ~ '(Scan|Aggregate)' THEN
			plan := plan || trim(regexp_replace(line, '->|(  +)| on .*| using .*|Cond.*', '', 'g')) || '; ';
		END IF;
	END LOOP;
	RETURN plan;
END $$;
SELECT format('SELECT count(*) FROM sg WHERE k = ANY (%L::int8[])',
			  (SELECT array_agg(g * 3) FROM generate_series(1, 3000) g)) AS big_any \gset
SELECT plan_of(:'big_any') AS gpubtree_plan;
SELECT plan_of(replace(:'big_any', 'FROM sg', 'FROM sb')) AS btree_plan;
SET gpubtree.min_gpu_batch = 5000;
SELECT plan_of(:'big_any') AS below_min_gpu_batch;
RESET gpubtree.min_gpu_batch;
SET gpubtree.device = off;
SELECT plan_of(:'big_any') AS device_off;
RESET gpubtree.device;
SELECT (SELECT count(*) FROM sg WHERE k = ANY ((SELECT array_agg(g * 3) FROM generate_series(1, 3000) g)::int8[]))
	 = (SELECT count(*) FROM sb WHERE k = ANY ((SELECT array_agg(g * 3) FROM generate_series(1, 3000) g)::int8[])) AS same;
DROP FUNCTION plan_of(text);
DROP FUNCTION s_agree(text);
DROP FUNCTION explain_filter(text);
DROP VIEW arr;
DROP TABLE sg, sb, keys;

-- The change log takes entries only of indexes with a mirror (or an export
-- under way): inserts into an index nobody mirrors cost no log traffic.
-- (No build after CREATE INDEX here: a background build would register an
-- export and take the log's entries.)
CREATE TABLE lg (k int8) WITH (autovacuum_enabled = off);
SET gpubtree.build_after_create = off;
CREATE INDEX lg_k ON lg USING gpubtree (k);
RESET gpubtree.build_after_create;
SELECT logged_entries AS l0 FROM gpubtree_status() \gset
INSERT INTO lg SELECT g FROM generate_series(1, 100) g;
SELECT logged_entries - :l0 AS logged_without_mirror FROM gpubtree_status();
SELECT gpubtree_count('lg_k', 1, 1000) AS count_builds_mirror;
SELECT logged_entries AS l1 FROM gpubtree_status() \gset
INSERT INTO lg SELECT g FROM generate_series(101, 150) g;
SELECT logged_entries - :l1 AS logged_with_mirror FROM gpubtree_status();
SELECT gpubtree_count('lg_k', 1, 1000) AS count_after;
SELECT count(*) AS verify_problems FROM gpubtree_verify('lg_k');
DROP TABLE lg;
