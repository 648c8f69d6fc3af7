-- Aggregates with k = ANY of an array known only when the plan runs: a
-- parameter of a generic plan (PREPARE, PL/pgSQL), an InitPlan's result.
-- The planner cannot know the array's length, so the GpubtreeAggregate node
-- decides at run time: the service for gpubtree.min_gpu_batch distinct keys
-- or more, the plan below otherwise, and EXPLAIN ANALYZE says which and why.
-- Every result is compared with gpubtree.device = off's (the ordinary plan).
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE ap (k int8, v int8, f float8);
INSERT INTO ap SELECT g, g % 1000, g / 7.0 FROM generate_series(1, 100000) g;
INSERT INTO ap SELECT g, -g, NULL FROM generate_series(1, 20000, 3) g;	-- repeated keys
CREATE INDEX ap_k ON ap USING gpubtree (k) INCLUDE (v, f);
VACUUM ANALYZE ap;

-- The probe keys: 5000 distinct, half of them present, each twice.
CREATE TABLE ap_probe AS
	SELECT (g * 40 + (g % 2) * 7)::int8 AS a FROM generate_series(1, 5000) g, generate_series(1, 2);
ANALYZE ap_probe;

-- answered(query): what the node's EXPLAIN ANALYZE says answered it.
CREATE FUNCTION answered(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line LIKE '%Answered by%' THEN
			RETURN trim(line);
		END IF;
	END LOOP;
	RETURN 'no GpubtreeAggregate node';
END $$;

-- same(query): the result equals gpubtree.device = off's.
CREATE FUNCTION same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	a text;
	b text;
BEGIN
	EXECUTE q INTO r;
	a := r::text;
	PERFORM set_config('gpubtree.device', 'off', true);
	EXECUTE q INTO r;
	b := r::text;
	PERFORM set_config('gpubtree.device', 'auto', true);
	RETURN CASE WHEN a IS NOT DISTINCT FROM b THEN 'same' ELSE 'DIFFERENT: ' || a || ' / ' || b END;
END $$;

-- A prepared statement in a generic plan: arrays of every length class.
SET plan_cache_mode = force_generic_plan;
PREPARE ap8(int8[]) AS SELECT count(*), sum(v), min(f), max(k) FROM ap WHERE k = ANY($1);
PREPARE ap4(int4[]) AS SELECT count(*), sum(v), avg(v) FROM ap WHERE k = ANY($1);
PREPARE apr(int8[], int8) AS SELECT count(*), sum(v) FROM ap WHERE k = ANY($1) AND k < $2;
CREATE TABLE ap_arrays (name text, a int8[]);
INSERT INTO ap_arrays VALUES
	('5000 keys, each twice', (SELECT array_agg(a) FROM ap_probe)),
	('3 keys', '{10, 20, 30}'),
	('empty', '{}'),
	('NULL', NULL),
	('NULL elements among 5000 keys', (SELECT array_agg(CASE WHEN a % 3 = 0 THEN NULL ELSE a END) FROM ap_probe)),
	('1200 keys, repeated keys of the table', (SELECT array_agg(g) FROM generate_series(1, 3600, 3) g)),
	-- An aggregate's own threshold, a sixteenth of gpubtree.min_gpu_batch
	-- (the rows' is the whole): just under it, and at it.
	('aggregate threshold less one', (SELECT array_agg(g * 7) FROM generate_series(1, current_setting('gpubtree.min_gpu_batch')::int / 16 - 1) g)),
	('aggregate threshold', (SELECT array_agg(g * 7) FROM generate_series(1, current_setting('gpubtree.min_gpu_batch')::int / 16) g)),
	-- Large enough for the radix sort of the keys; shuffled, repeated, negative.
	('90000 keys, shuffled, repeated, negative',
	 (SELECT array_agg(x ORDER BY md5(g::text)) FROM (SELECT g, (g * 7919) % 60000 - 20000 AS x FROM generate_series(1, 90000) g) s)),
	-- Sorted and freed of repeats by the service (long lists), NULLs dropped first.
	('90000 keys, shuffled, repeated, NULL elements',
	 (SELECT array_agg(CASE WHEN g % 10 = 0 THEN NULL ELSE x END ORDER BY md5(g::text))
	  FROM (SELECT g, (g * 7919) % 40000 AS x FROM generate_series(1, 90000) g) s));
SELECT name,
	   answered(format('EXECUTE ap8(%L)', a)) AS int8_array,
	   same(format('EXECUTE ap8(%L)', a)) AS int8_result,
	   answered(format('EXECUTE ap4(%L)', a::int4[])) AS int4_array,
	   same(format('EXECUTE ap4(%L)', a::int4[])) AS int4_result,
	   same(format('EXECUTE apr(%L, 100000)', a)) AS with_range
FROM ap_arrays ORDER BY name;
-- The generic plan really is generic: the parameter, not a constant.
SELECT count(*) AS generic_plans FROM pg_prepared_statements
WHERE name IN ('ap8', 'ap4', 'apr') AND generic_plans > 0;
DEALLOCATE ALL;
RESET plan_cache_mode;

-- InitPlans: the array as a scalar subquery and as ARRAY(subquery).
SELECT q, answered(q), same(q) FROM (VALUES
	('SELECT count(*), sum(v) FROM ap WHERE k = ANY ((SELECT array_agg(a) FROM ap_probe)::int8[])'),
	('SELECT count(*), sum(v) FROM ap WHERE k = ANY (ARRAY(SELECT a FROM ap_probe))'),
	('SELECT count(*), sum(v) FROM ap WHERE k = ANY (ARRAY(SELECT a FROM ap_probe LIMIT 5))'),
	('SELECT min(f), max(f) FROM ap WHERE k = ANY (ARRAY(SELECT a::int4 FROM ap_probe))')
) t(q);

-- A PL/pgSQL variable: its statements run in generic plans after five calls.
CREATE FUNCTION ap_sum(keys int8[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	SELECT count(*) || ':' || sum(v) INTO r FROM ap WHERE k = ANY (keys);
	RETURN r;
END $$;
SELECT i, ap_sum(a) = (SELECT count(*) || ':' || sum(v) FROM ap WHERE k = ANY (a)) AS agrees
FROM ap_arrays, generate_series(1, 7) i WHERE name = '5000 keys, each twice' ORDER BY i;
SET gpubtree.device = off;
SELECT ap_sum(a) AS without_service FROM ap_arrays WHERE name = '5000 keys, each twice';
RESET gpubtree.device;
SELECT ap_sum(a) AS with_service FROM ap_arrays WHERE name = '5000 keys, each twice';

DROP FUNCTION ap_sum, answered, same;
DROP TABLE ap, ap_probe, ap_arrays;
