-- Every aggregate the GpubtreeAggregate node knows, over every kind of
-- column: each gpubtree key type, each of them under a domain, and types the
-- mirror does not hold (as INCLUDE columns), as the key or as an INCLUDE
-- column, over NULL-free, NULL-heavy and extreme data (NaN, infinities,
-- each type's limits).  Generated from the lists below, so that a type or
-- aggregate added there is covered.  Each query is planned with the other
-- plans disabled, so that the node is taken wherever it accepts the
-- aggregate, and its result is compared with the ordinary plan's
-- (gpubtree.device = off); the gpubtree_sum/avg/min/max functions likewise
-- with the SQL they stand for.  Then the same aggregates over whole tables
-- (no WHERE), where the node reads the rows with NULL keys, which the
-- mirror does not hold, through an index scan.  One line per column, per
-- data set and position, says for each aggregate:
--   node   the node answered from the mirror
--   child  the node was planned, the plan below it answered (EXPLAIN says why)
--   node* / child*  the same, where the node reads the rows with NULL keys
--          with an index scan (no WHERE, and a key that may be NULL)
--   error  the node was planned, and the query failed (as it must where
--          the ordinary plan fails too)
--   plan   the node was not planned (it refuses the aggregate)
--   -      PostgreSQL has no such aggregate for the type
--   ok / 0A000  a function's result agreed / it refused the column
--   WRONG(...)  the results differ
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
-- The disabled plans' costs would call for JIT compilation, which is slow.
SET jit = off;

-- Column types: a short name, the type, whether gpubtree takes it as a key,
-- the value of row g (NULL: the data set's float values), extreme values,
-- and (keys) the lowest and highest value.
-- Float extremes stay small enough that PostgreSQL's sums never overflow:
-- where they do, the error depends on the order of the rows, so on the plan.
CREATE TABLE agt_type (ord serial, name text, typ text, is_key bool, val text,
					   extremes text[], lowest text, highest text);
INSERT INTO agt_type (name, typ, is_key, val, extremes, lowest, highest) VALUES
	('i2', 'int2', true, 'g % 20000 - 10000', '{-32768,32767,0}', '-32768', '32767'),
	('i4', 'int4', true, 'g * 1000 - 2000000',
	 '{-2147483648,2147483647,2147483000}', '-2147483648', '2147483647'),
	('i8', 'int8', true, 'g::int8 * 1000000007 - 3000000000000',
	 '{-9223372036854775808,9223372036854775807,9223372036854775000}',
	 '-9223372036854775808', '9223372036854775807'),
	('f4', 'float4', true, NULL, '{NaN,Infinity,-Infinity,1e30,-0}', '-Infinity', 'NaN'),
	('f8', 'float8', true, NULL,
	 '{NaN,Infinity,-Infinity,1e100,-1e-300,-0}', '-Infinity', 'NaN'),
	('dt', 'date', true, 'date ''2000-01-01'' + g',
	 '{-infinity,infinity,4714-11-24 BC,5874897-12-31}', '-infinity', 'infinity'),
	('ts', 'timestamp', true, 'timestamp ''2000-01-01'' + g * interval ''61 minutes''',
	 '{-infinity,infinity,"4714-11-24 00:00 BC","294276-12-31 23:59:59.999999"}',
	 '-infinity', 'infinity'),
	('tz', 'timestamptz', true, 'timestamptz ''2000-01-01 00:00+00'' + g * interval ''61 minutes''',
	 '{-infinity,infinity,"4714-11-24 00:00+00 BC","294276-12-31 23:59:59.999999+00"}',
	 '-infinity', 'infinity'),
	('tm', 'time', true, 'time ''00:00'' + g * interval ''61 seconds''',
	 '{00:00,24:00,23:59:59.999999}', '00:00', '24:00'),
	('tx', 'text', false, '''v'' || g', '{"",zzz}', NULL, NULL),
	('vc', 'varchar', false, '''v'' || g', '{"",zzz}', NULL, NULL),
	('nu', 'numeric', false, 'g * 1.5', '{NaN,Infinity,-Infinity}', NULL, NULL),
	('bo', 'bool', false, 'g % 3 = 0', '{true,false}', NULL, NULL),
	('uu', 'uuid', false, 'md5(g::text)::uuid', '{00000000-0000-0000-0000-000000000000}', NULL, NULL),
	('js', 'jsonb', false, 'jsonb_build_object(''g'', g)', '{"null","[]"}', NULL, NULL),
	('ar', 'int4[]', false, 'ARRAY[g, NULL]', '{"{}"}', NULL, NULL);

-- Data sets: which rows are NULL, which take extreme values, the float
-- values, and which rows have a NULL key kn in the copies for whole-table
-- aggregates (none, many or some, among rows of every kind).  Dense floats
-- are multiples of 1/8, so that every partial sum is exact, in any order:
-- sums and averages must agree to the last bit.  Other floats are not: the
-- node's sum is the exact sum, rounded once, and PostgreSQL's is rounded at
-- each step in the plan's order; being positive, they agree within 1e-12
-- relative.
CREATE TABLE agt_set (ord serial, name text, nulls text, extreme text, floats text,
					  kn_nulls text);
INSERT INTO agt_set (name, nulls, extreme, floats, kn_nulls) VALUES
	('dense', 'false', 'false', '(g % 2000 - 1000) * 0.125', 'false'),
	('sparse', 'g % 8 <> 0', 'false', '(g % 2000) / 7.0 + 0.5', 'g % 3 <> 0'),
	('extreme', 'g % 10 = 0', 'g % 7 = 0', '(g % 2000) / 7.0 + 0.5', 'g % 9 = 0');

-- The aggregates; count(*) stands first.
CREATE TABLE agt_agg (ord int, name text);
INSERT INTO agt_agg VALUES (1, 'count(*)'), (2, 'count'), (3, 'sum'), (4, 'avg'),
	(5, 'min'), (6, 'max');

-- The columns: each type, and a domain over it.
CREATE TABLE agt_col AS
SELECT t.*, dom, CASE WHEN dom THEN 'c_d_' ELSE 'c_' END || t.name AS col,
	   CASE WHEN dom THEN 'agt_d_' || t.name ELSE t.typ END AS decl
FROM agt_type t, (VALUES (false), (true)) d(dom);

DO $$
DECLARE
	t record;
BEGIN
	FOR t IN SELECT * FROM agt_col WHERE dom LOOP
		EXECUTE format('CREATE DOMAIN %I AS %s', t.decl, t.typ);
	END LOOP;
END $$;

-- One table a data set, 6000 rows, NOT NULL columns where the data has no
-- NULLs; a gpubtree index on each column of a key type, and indexes on g
-- carrying the columns three by three as INCLUDE columns.  For whole-table
-- aggregates, where the node takes the first index that can answer, copies
-- with only one kind of index each: the key indexes (_keys), and indexes on
-- a nullable key kn in front carrying the columns likewise (_kn).
-- agt_case: what to check, with the condition of the queries (none: the
-- whole table, whose NULL keys nullkeys describes), and the index and
-- bounds for the functions.
CREATE TABLE agt_case (data text, sord int, tord int, col text, typ text, is_key bool,
					   pos text, tab text, cond text, idx text, lo text, hi text, fcond text,
					   nullkeys text);
DO $$
DECLARE
	s record;
	t record;
	tab text;
	cols text;
	vals text;
	incl text[];
	n int;
BEGIN
	FOR s IN SELECT * FROM agt_set ORDER BY ord LOOP
		tab := 'agt_' || s.name;
		cols := 'g int4 NOT NULL';
		vals := 'g';
		FOR t IN SELECT * FROM agt_col ORDER BY ord, dom LOOP
			cols := cols || format(', %I %s%s', t.col, t.decl,
								   CASE WHEN s.nulls = 'false' THEN ' NOT NULL' END);
			vals := vals || format(', CASE WHEN %s THEN NULL WHEN %s THEN (%L::text[])[g / 7 %% %s + 1]::%s ELSE (%s)::%s END',
								   s.nulls, s.extreme, t.extremes, cardinality(t.extremes),
								   t.typ, coalesce(t.val, s.floats), t.typ);
		END LOOP;
		EXECUTE format('CREATE TABLE %I (%s) WITH (autovacuum_enabled = off)', tab, cols);
		EXECUTE format('INSERT INTO %I SELECT %s FROM generate_series(1, 6000) g', tab, vals);
		EXECUTE format('CREATE TABLE %I (LIKE %I) WITH (autovacuum_enabled = off)',
					   tab || '_keys', tab);
		EXECUTE format('INSERT INTO %I SELECT * FROM %I', tab || '_keys', tab);
		EXECUTE format('CREATE TABLE %I (kn int4, LIKE %I) WITH (autovacuum_enabled = off)',
					   tab || '_kn', tab);
		EXECUTE format('INSERT INTO %I SELECT CASE WHEN %s THEN NULL ELSE g END, * FROM %I',
					   tab || '_kn', s.kn_nulls, tab);

		FOR t IN SELECT * FROM agt_col WHERE is_key ORDER BY ord, dom LOOP
			EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (%I)',
						   tab || '_' || t.col, tab, t.col);
			INSERT INTO agt_case VALUES (s.name, s.ord, t.ord, t.col, t.typ, true, 'key', tab,
				format('%I > %L::%s AND %I <= %L::%s', t.col, t.lowest, t.decl,
					   t.col, t.highest, t.typ),
				tab || '_' || t.col, format('%L::%s', t.lowest, t.typ),
				format('%L::%s', t.highest, t.typ),
				format('%I BETWEEN %L::%s AND %L::%s', t.col, t.lowest, t.typ, t.highest, t.typ));
			EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (%I)',
						   tab || '_keys_' || t.col, tab || '_keys', t.col);
			INSERT INTO agt_case (data, sord, tord, col, typ, is_key, pos, tab, nullkeys)
			VALUES (s.name, s.ord, t.ord, t.col, t.typ, true, 'key', tab || '_keys',
					CASE WHEN s.nulls = 'false' THEN 'NOT NULL' END);
		END LOOP;

		n := 0;
		FOR incl IN
			SELECT array_agg(col ORDER BY ord, dom)
			FROM (SELECT *, (row_number() OVER (ORDER BY ord, dom) - 1) / 3 AS grp FROM agt_col) c
			GROUP BY grp ORDER BY grp
		LOOP
			n := n + 1;
			EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (g) INCLUDE (%s)',
						   tab || '_g' || n, tab,
						   (SELECT string_agg(quote_ident(c), ', ') FROM unnest(incl) c));
			INSERT INTO agt_case
			SELECT s.name, s.ord, c.ord, c.col, c.typ, c.is_key, 'include', tab,
				   'g BETWEEN 100 AND 5900', tab || '_g' || n, '100', '5900',
				   'g BETWEEN 100 AND 5900'
			FROM agt_col c WHERE c.col = ANY (incl);
			EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (kn) INCLUDE (%s)',
						   tab || '_kn' || n, tab || '_kn',
						   (SELECT string_agg(quote_ident(c), ', ') FROM unnest(incl) c));
			INSERT INTO agt_case (data, sord, tord, col, typ, is_key, pos, tab)
			SELECT s.name, s.ord, c.ord, c.col, c.typ, c.is_key, 'include', tab || '_kn'
			FROM agt_col c WHERE c.col = ANY (incl);
		END LOOP;
	END LOOP;
END $$;
SELECT format('VACUUM ANALYZE %I', 'agt_' || name || t)
FROM agt_set, unnest('{"",_keys,_kn}'::text[]) t ORDER BY ord, t \gexec
-- The share of NULL keys in each whole-table case.
DO $$
DECLARE
	c record;
	share numeric;
BEGIN
	FOR c IN SELECT * FROM agt_case WHERE cond IS NULL AND nullkeys IS NULL LOOP
		EXECUTE format('SELECT round(100.0 * count(*) FILTER (WHERE %I IS NULL) / count(*)) FROM %I',
					   CASE WHEN c.pos = 'key' THEN c.col ELSE 'kn' END, c.tab)
			INTO share;
		UPDATE agt_case SET nullkeys = share || '%'
		WHERE tab = c.tab AND col = c.col AND cond IS NULL;
	END LOOP;
END $$;

-- Do two results agree: the same text, or for float sums and averages
-- (approx) the same within 1e-12 relative (see agt_set)?
CREATE FUNCTION agt_same(got text, want text, approx bool) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
	IF got IS NOT DISTINCT FROM want THEN
		RETURN true;
	END IF;
	RETURN approx AND abs(got::numeric - want::numeric) <= 1e-12 * abs(want::numeric);
EXCEPTION WHEN invalid_text_representation THEN
	RETURN false;
END $$;

-- q's result as text, or its error.
CREATE FUNCTION agt_result(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE q INTO result;
	RETURN result;
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR: ' || SQLERRM;
END $$;

-- The same from the ordinary plan.
CREATE FUNCTION agt_plain(q text) RETURNS text LANGUAGE sql
SET gpubtree.device = off RETURN agt_result(q);

-- How q is answered: node, child or plan (see the top), and its result as
-- text, or its error; how is '-' when PostgreSQL has no such aggregate.
CREATE FUNCTION agt_run(q text, OUT how text, OUT result text) LANGUAGE plpgsql
SET enable_seqscan = off SET enable_indexscan = off
SET enable_indexonlyscan = off SET enable_bitmapscan = off AS $$
DECLARE
	plan jsonb;
BEGIN
	BEGIN
		EXECUTE format('EXPLAIN (COSTS OFF, FORMAT JSON) %s', q) INTO plan;
	EXCEPTION WHEN undefined_function THEN
		how := '-';
		RETURN;
	END;
	how := 'plan';
	IF plan::text LIKE '%GpubtreeAggregate%' THEN
		BEGIN
			EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) %s', q)
				INTO plan;
			how := CASE WHEN jsonb_path_query_first(plan, 'strict $.**."Answered by"') #>> '{}'
				LIKE 'GPU service%' THEN 'node' ELSE 'child' END ||
				CASE WHEN jsonb_path_exists(plan, 'strict $.**."NULL Keys"') THEN '*' ELSE '' END;
		EXCEPTION WHEN OTHERS THEN
			how := 'error';
		END;
	END IF;
	result := agt_result(q);
END $$;

-- One aggregate of one case: how it was answered, or how it went wrong.
CREATE FUNCTION agt_check(c agt_case, agg text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	q text;
	r record;
	want text;
BEGIN
	q := format('SELECT (%s)::text FROM %I%s',
				CASE WHEN agg = 'count(*)' THEN agg ELSE format('%s(%I)', agg, c.col) END,
				c.tab, ' WHERE ' || c.cond);
	r := agt_run(q);
	IF r.how = '-' THEN
		RETURN r.how;
	END IF;
	want := agt_plain(q);
	RETURN CASE WHEN agt_same(r.result, want, c.typ IN ('float4', 'float8') AND
							  agg IN ('sum', 'avg')) THEN r.how
		ELSE format('WRONG(%s: %s, not %s)', r.how, r.result, want) END;
END $$;

-- A gpubtree_<f> function on one case against the SQL it stands for.
CREATE FUNCTION agt_func(c agt_case, f text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	isfloat bool := c.typ IN ('float4', 'float8');
	sql text;
	got text;
	want text;
BEGIN
	sql := CASE
		WHEN f IN ('min', 'max') AND c.typ IN ('date', 'timestamp', 'timestamptz', 'time')
			THEN format('extract(epoch FROM %s(%I))', f, c.col)
		WHEN f IN ('min', 'max') THEN format('%s(%I)::numeric', f, c.col)
		WHEN f = 'sum' AND isfloat THEN format('sum(%I::float8)::numeric', c.col)
		WHEN f = 'avg' AND isfloat THEN format('sum(%I::float8)::numeric / count(%I)', c.col, c.col)
		ELSE format('%s(%I)::numeric', f, c.col) END;
	BEGIN
		EXECUTE format('SELECT gpubtree_%s(%L, %L, %s, %s)::text', f, c.idx, c.col, c.lo, c.hi)
			INTO got;
	EXCEPTION WHEN feature_not_supported THEN
		RETURN '0A000';
	END;
	EXECUTE format('SELECT (%s)::text FROM %I WHERE %s', sql, c.tab, c.fcond) INTO want;
	RETURN CASE WHEN agt_same(got, want, isfloat AND f IN ('sum', 'avg')) THEN 'ok'
		ELSE format('WRONG(%s, not %s)', got, want) END;
END $$;

SELECT c.data, c.col, c.pos,
	   (SELECT string_agg(agt_check(c, a.name), ' ' ORDER BY a.ord) FROM agt_agg a) AS "count(*) count sum avg min max",
	   (SELECT string_agg(agt_func(c, f), ' ' ORDER BY o)
		FROM unnest('{sum,avg,min,max}'::text[]) WITH ORDINALITY u(f, o)) AS "gpubtree_ sum avg min max"
FROM agt_case c
WHERE c.cond IS NOT NULL
ORDER BY c.sord, c.pos DESC, c.tord, c.col;

-- Whole tables: each column of a key type as the key of its own index (NOT
-- NULL where the data set has no NULLs, else NULL in as many rows as its
-- values), and each column as an INCLUDE column of an index on kn, whose
-- NULL keys are none, many or some.  The node reads the rows with NULL keys,
-- whatever values they hold, with an index scan.
SELECT c.data, c.nullkeys AS "NULL keys", c.col, c.pos,
	   (SELECT string_agg(agt_check(c, a.name), ' ' ORDER BY a.ord) FROM agt_agg a) AS "count(*) count sum avg min max"
FROM agt_case c
WHERE c.cond IS NULL
ORDER BY c.sord, c.pos DESC, c.tord, c.col;

-- The planner's own choice, with default settings: count of columns the
-- mirror does not hold, NULL in some rows, is left to the ordinary plan; a
-- domain over int4 is an int4 key, and one over int8 an int8 column.
CREATE TABLE agt_ct (k int4 NOT NULL, t text, n numeric, b bool,
					 kd agt_d_i4 NOT NULL, d agt_d_i8);
INSERT INTO agt_ct SELECT g, CASE WHEN g % 2 = 0 THEN 'x' END,
	CASE WHEN g % 3 = 0 THEN g END, CASE WHEN g % 5 = 0 THEN true END,
	g, CASE WHEN g % 4 = 0 THEN g END
FROM generate_series(1, 40000) g;
CREATE INDEX agt_ct_k ON agt_ct USING gpubtree (k) INCLUDE (t, n, b);
CREATE INDEX agt_ct_kd ON agt_ct USING gpubtree (kd) INCLUDE (d);
VACUUM ANALYZE agt_ct;
CREATE FUNCTION agt_node(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	plan text;
BEGIN
	EXECUTE 'EXPLAIN (COSTS OFF) ' || q INTO plan;
	RETURN plan LIKE '%GpubtreeAggregate%';
END $$;
SELECT agt_node(q) AS node, agt_result(q) AS result, agt_plain(q) = agt_result(q) AS same
FROM (VALUES
	('SELECT (count(t), count(n), count(b), count(*))::text FROM agt_ct WHERE k BETWEEN 1 AND 30000'),
	('SELECT (count(d), sum(d), count(*))::text FROM agt_ct WHERE kd BETWEEN 1 AND 30000'),
	('SELECT (count(kd), max(kd), sum(d))::text FROM agt_ct')) v(q);

DROP TABLE agt_ct;
SELECT format('DROP TABLE %I, %I, %I', 'agt_' || name, 'agt_' || name || '_keys',
			  'agt_' || name || '_kn') FROM agt_set ORDER BY ord \gexec
SELECT format('DROP DOMAIN %I', decl) FROM agt_col WHERE dom ORDER BY ord \gexec
DROP FUNCTION agt_check, agt_func, agt_run, agt_plain, agt_result, agt_node, agt_same;
DROP TABLE agt_case, agt_col, agt_agg, agt_set, agt_type;
