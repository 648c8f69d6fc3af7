-- = ANY arrays through the GPU service: repeated elements, NULLs, NaN (any
-- bit pattern), +/-Infinity, -0, out-of-range cross-type values, and ranges
-- on the same column.  For each key type and each generated array, the
-- service's bitmap scan must give btree's answer, probe each distinct key
-- once, and return each matching entry once (the "Service:" line of
-- EXPLAIN ANALYZE).
SET gpubtree.enable_aggregate = off;
SET gpubtree.enable_lookup = off;
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
SET jit = off;

-- The key types: keys from x = 0..1999, the type's special values (as an
-- expression, so that a NaN keeps its sign bit) and values no row has.
CREATE TABLE dd_type (t text, keytype text, keyexpr text, specials text, absent text);
INSERT INTO dd_type VALUES
	('int4', 'int4', 'x * 3 - 3000',
	 'ARRAY[NULL, 2147483647, -2147483648, 0]::int4[]',
	 'ARRAY[4, -2147483647, 2147483646]::int4[]'),
	('int8', 'int8', '(x - 1000) * 4611686018427387',
	 'ARRAY[NULL, 9223372036854775807, -9223372036854775808, 0]::int8[]',
	 'ARRAY[1, -9223372036854775807, 9223372036854775806]::int8[]'),
	('float4', 'float4', '((x - 1000) / 8.0)::float4',
	 'ARRAY[NULL, ''NaN'', ''Infinity''::float4 - ''Infinity''::float4, ''Infinity'', ''-Infinity'', ''-0'', ''3.4028235e38'']::float4[]',
	 'ARRAY[0.1, ''-3.4028235e38'', ''1e-45'']::float4[]'),
	('float8', 'float8', '(x - 1000) / 7.0',
	 'ARRAY[NULL, ''NaN'', ''Infinity''::float8 - ''Infinity''::float8, ''Infinity'', ''-Infinity'', ''-0'', ''1.7976931348623157e308'']::float8[]',
	 'ARRAY[0.1, ''-1.7976931348623157e308'', ''5e-324'']::float8[]'),
	('ts', 'timestamp', 'timestamp ''2000-01-01'' + x * interval ''37 minutes 1.5 seconds''',
	 'ARRAY[NULL, ''infinity'', ''-infinity'', ''1999-12-31 23:59:59.999999'']::timestamp[]',
	 'ARRAY[''2000-01-01 00:00:00.000001'', ''294276-12-31 23:59:59.999999'', ''4713-01-01 00:00:00 BC'']::timestamp[]');

-- Tables dd_T (gpubtree) and ddb_T (btree) with the same rows: 2000 keys of
-- 20 rows each, and each special value in 5 rows.
CREATE FUNCTION dd_table(ty dd_type) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('CREATE TABLE dd_%s (id int, k %s)', ty.t, ty.keytype);
	EXECUTE format('INSERT INTO dd_%s SELECT g, %s FROM generate_series(1, 40000) g, LATERAL (SELECT g %% 2000 AS x) gx',
				   ty.t, ty.keyexpr);
	EXECUTE format('INSERT INTO dd_%s SELECT 40000 + g * 100 + s.n, s.v FROM generate_series(1, 5) g, '
				   'unnest(%s) WITH ORDINALITY s(v, n)', ty.t, ty.specials);
	EXECUTE format('CREATE TABLE ddb_%s AS SELECT * FROM dd_%s', ty.t, ty.t);
	EXECUTE format('CREATE INDEX ON dd_%s USING gpubtree (k)', ty.t);
	EXECUTE format('CREATE INDEX ON ddb_%s (k)', ty.t);
	EXECUTE format('ANALYZE dd_%s', ty.t);
	EXECUTE format('ANALYZE ddb_%s', ty.t);
END $$;
SELECT count(dd_table(ty)) FROM dd_type ty;

-- The arrays: per table, a name, the element type, the elements as a query
-- over dd_keys (the table's distinct non-NULL keys k, numbered i from 1)
-- and dd_vals (the type's specials and absent values), and a further
-- condition on the column.
CREATE TABLE dd_case (t text, name text, elemtype text, elems text, extra text);
INSERT INTO dd_case
SELECT t, name, coalesce(elemtype, keytype), elems, coalesce(extra, 'true')
FROM dd_type,
	 (VALUES
		-- 5000 elements cycling over 10 keys
		('cycle10', NULL, 'SELECT k FROM generate_series(0, 4999) g JOIN dd_keys ON i = g % 10 + 1', NULL),
		-- 1500 keys twice each, shuffled
		('twice', NULL, 'SELECT k FROM generate_series(0, 2999) g JOIN dd_keys ON i = g % 1500 + 1 ORDER BY md5(g::text)', NULL),
		-- every special value (NULL too) and absent value 300 times, and 10 keys
		('specials', NULL, 'SELECT v FROM generate_series(1, 300) g, unnest((SELECT specials || absent FROM dd_vals)) v '
		 'UNION ALL SELECT k FROM dd_keys WHERE i <= 10', NULL),
		-- NULLs only
		('nulls', NULL, 'SELECT NULL FROM generate_series(1, 2000)', NULL),
		-- all of them, and ranges on the same column that cut them
		('mixed, range', NULL, 'SELECT k FROM generate_series(0, 4999) g JOIN dd_keys ON i = g % 1700 + 1 '
		 'UNION ALL SELECT v FROM generate_series(1, 300) g, unnest((SELECT specials || absent FROM dd_vals)) v',
		 'k >= (SELECT k FROM dd_keys WHERE i = 300) AND k < (SELECT k FROM dd_keys WHERE i = 1200)'),
		('mixed, above', NULL, 'SELECT k FROM generate_series(0, 4999) g JOIN dd_keys ON i = g % 1700 + 1 '
		 'UNION ALL SELECT v FROM generate_series(1, 300) g, unnest((SELECT specials || absent FROM dd_vals)) v',
		 'k > (SELECT k FROM dd_keys WHERE i = 1500) AND k >= (SELECT k FROM dd_keys WHERE i = 1400)'),
		('mixed, below', NULL, 'SELECT k FROM generate_series(0, 4999) g JOIN dd_keys ON i = g % 1700 + 1 '
		 'UNION ALL SELECT v FROM generate_series(1, 300) g, unnest((SELECT specials || absent FROM dd_vals)) v',
		 'k <= (SELECT k FROM dd_keys WHERE i = 1600)'),
		-- past 65536 elements (radix-sorted): every key many times,
		-- shuffled, in order, and with every special and absent value
		('large', NULL, 'SELECT k FROM generate_series(0, 69999) g JOIN dd_keys ON i = g % 1900 + 1 '
		 'ORDER BY md5(g::text)', NULL),
		('large, in order', NULL, 'SELECT k FROM generate_series(0, 69999) g JOIN dd_keys ON i = g % 1900 + 1 '
		 'ORDER BY k', NULL),
		('large, specials', NULL, 'SELECT k FROM (SELECT k FROM generate_series(0, 69999) g JOIN dd_keys ON i = g % 1900 + 1 '
		 'UNION ALL SELECT v FROM generate_series(1, 300) g, unnest((SELECT specials || absent FROM dd_vals)) v) e '
		 'ORDER BY md5(k::text)', NULL),
		-- bounds that no element meets
		('contradiction', NULL, 'SELECT k FROM generate_series(0, 4999) g JOIN dd_keys ON i = g % 10 + 1',
		 'k > (SELECT k FROM dd_keys WHERE i = 20) AND k < (SELECT k FROM dd_keys WHERE i = 10)')) c(name, elemtype, elems, extra)
UNION ALL
-- cross-type arrays: out-of-range and unrepresentable values, repeated
SELECT * FROM (VALUES
	('int4', 'int8[]', 'int8',
	 'SELECT k FROM generate_series(0, 3999) g JOIN dd_keys ON i = g % 1200 + 1 UNION ALL '
	 'SELECT v FROM generate_series(1, 200) g, unnest(ARRAY[2147483648, -2147483649, 9223372036854775807, '
	 '-9223372036854775808, 2147483647, -2147483648, NULL]::int8[]) v',
	 'true'),
	('int4', 'int2[]', 'int2',
	 'SELECT (i - 1000)::int2 * 3 FROM generate_series(0, 3999) g JOIN dd_keys ON i = g % 1200 + 1 '
	 'UNION ALL SELECT -32768 FROM generate_series(1, 100)',
	 'true'),
	('int8', 'int4[]', 'int4',
	 'SELECT (i - 1000)::int4 FROM generate_series(0, 3999) g JOIN dd_keys ON i = g % 1800 + 1 '
	 'UNION ALL SELECT NULL FROM generate_series(1, 100)',
	 'true'),
	('float4', 'float8[]', 'float8',
	 'SELECT k FROM generate_series(0, 3999) g JOIN dd_keys ON i = g % 1200 + 1 UNION ALL '
	 'SELECT v FROM generate_series(1, 200) g, unnest(ARRAY[''NaN'', ''Infinity''::float8 - ''Infinity''::float8, '
	 '''Infinity'', ''-Infinity'', ''-0'', 0.1, 1e300, -1e300, 3.4028235e38, NULL]::float8[]) v',
	 'true'),
	('float8', 'float4[]', 'float4',
	 'SELECT ((i - 1000) / 8.0)::float4 FROM generate_series(0, 3999) g JOIN dd_keys ON i = g % 1200 + 1 UNION ALL '
	 'SELECT v FROM generate_series(1, 200) g, unnest(ARRAY[''NaN'', ''Infinity''::float4 - ''Infinity''::float4, '
	 '''Infinity'', ''-Infinity'', ''-0'', NULL]::float4[]) v',
	 'true'),
	-- timestamptz against timestamp compares by time zone: left to nbtree
	('ts', 'timestamptz[]', 'timestamptz',
	 'SELECT k FROM generate_series(0, 3999) g JOIN dd_keys ON i = g % 1200 + 1',
	 'true')) x;

-- One case: who answered the scan, whether its answer is btree's, how many
-- rows match, and whether the service probed each distinct key once and
-- returned each matching entry once.
CREATE FUNCTION dd_check(c dd_case, OUT answered_by text, OUT same_as_btree bool,
						 OUT rows bigint, OUT keys_once bool, OUT entries_once bool)
LANGUAGE plpgsql AS $$
DECLARE
	ty dd_type;
	cond text := format('k = ANY ((SELECT a FROM dd_arr)::%s[]) AND %s', c.elemtype, c.extra);
	line text;
	m text[];
	scans bigint;
	probed bigint;
	entries bigint;
	fallbacks bigint;
	g text;
	b text;
	distinct_keys bigint;
BEGIN
	SELECT * INTO ty FROM dd_type WHERE t = c.t;
	DROP TABLE IF EXISTS dd_keys, dd_vals, dd_arr;
	EXECUTE format('CREATE TEMP TABLE dd_keys AS SELECT row_number() OVER (ORDER BY k) AS i, k '
				   'FROM (SELECT DISTINCT k FROM ddb_%s WHERE k IS NOT NULL) d', c.t);
	EXECUTE format('CREATE TEMP TABLE dd_vals AS SELECT %s AS specials, %s AS absent',
				   ty.specials, ty.absent);
	EXECUTE format('CREATE TEMP TABLE dd_arr AS SELECT array_agg(k::%s) AS a FROM (%s) e(k)',
				   c.elemtype, c.elems);

	FOR line IN EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) '
							   'SELECT count(*) FROM dd_%s WHERE %s', c.t, cond) LOOP
		m := regexp_match(line, 'Service: (\d+) scans, (\d+) keys probed, (\d+) entries returned, (\d+) answered by nbtree');
		IF m IS NOT NULL THEN
			scans := m[1];
			probed := m[2];
			entries := m[3];
			fallbacks := m[4];
		END IF;
	END LOOP;
	EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM dd_%s WHERE %s', c.t, cond) INTO g;
	EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM ddb_%s WHERE %s', c.t, cond) INTO b;
	EXECUTE format('SELECT count(*) FROM ddb_%s WHERE %s', c.t, cond) INTO rows;
	EXECUTE format('SELECT count(DISTINCT k) FROM unnest((SELECT a FROM dd_arr)) k WHERE %s', c.extra)
		INTO distinct_keys;

	answered_by := CASE WHEN scans = 1 AND fallbacks = 0 THEN 'service'
					WHEN scans = 0 AND fallbacks = 0 AND distinct_keys = 0 THEN 'nothing to ask'
					WHEN scans = 0 AND fallbacks = 0 THEN 'nbtree'
					ELSE format('%s scans, %s fallbacks', scans, fallbacks) END;
	same_as_btree := g = b;
	IF scans > 0 THEN
		keys_once := probed = distinct_keys;
		entries_once := entries = rows;
	END IF;
END $$;

-- Every array goes to the service, however few its distinct keys.
SET gpubtree.min_gpu_batch = 1;
SELECT c.t, c.name, r.*
FROM dd_case c, dd_check(c) r
ORDER BY c.t, c.name;

-- With the default gpubtree.min_gpu_batch, the distinct keys decide:
-- 5000 elements over 10 keys are nbtree's (10 descents), 3000 over 1500
-- keys the service's.
RESET gpubtree.min_gpu_batch;
SELECT c.t, c.name, r.*
FROM dd_case c, dd_check(c) r
WHERE c.name IN ('cycle10', 'twice')
ORDER BY c.t, c.name;

DROP FUNCTION dd_check(dd_case);
DROP TABLE dd_case, dd_keys, dd_vals, dd_arr;
DROP TABLE dd_int4, ddb_int4, dd_int8, ddb_int8, dd_float4, ddb_float4,
	dd_float8, ddb_float8, dd_ts, ddb_ts;
DROP FUNCTION dd_table(dd_type);
DROP TABLE dd_type;
