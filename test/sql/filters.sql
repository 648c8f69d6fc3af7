-- Conditions past the key's ranges and aggregates' FILTER clauses through
-- the GpubtreeAggregate node, generated: predicates from arrays of columns x
-- operators x constants (a NULL constant, IN lists with a NULL, NaN, -0 and
-- infinities among the floats), combined with AND/OR/NOT, in every shape of
-- query, each against the ordinary plan (gpubtree.device = off).  Only
-- counts per shape are printed, so a new column type or operator is covered
-- by adding it to the arrays, and any wrong answer or lost service answer
-- changes the output.
SET max_parallel_workers_per_gather = 0;
SET gpubtree.build_wait = '60s';

-- A nullable int8 key; NULLs in every column, NaN, -0 and infinities in
-- the floats, infinities in the dates and times.
CREATE TABLE ft (k int8, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
				 d date, ts timestamp, tz timestamptz);
INSERT INTO ft
SELECT CASE WHEN g % 40 = 0 THEN NULL ELSE (g * 7919) % 20011 - 10000 END,
	   CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 600 - 300)::int2 END,
	   CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 37) % 100001 - 50000 END,
	   CASE WHEN g % 17 = 0 THEN NULL ELSE (g - 10000)::int8 * 1000000007 END,
	   CASE WHEN g % 19 = 0 THEN NULL WHEN g % 97 = 0 THEN 'NaN'
			WHEN g % 101 = 0 THEN 'Infinity' WHEN g % 103 = 0 THEN '-Infinity'
			WHEN g % 29 = 0 THEN '-0' ELSE (g % 1000) / 7.0 - 50 END,
	   CASE WHEN g % 23 = 0 THEN NULL WHEN g % 89 = 0 THEN 'NaN'
			WHEN g % 107 = 0 THEN 'Infinity' WHEN g % 31 = 0 THEN '-0'
			ELSE (g % 3000) / 3.0 - 400 END,
	   CASE WHEN g % 37 = 0 THEN NULL WHEN g % 211 = 0 THEN 'infinity'
			ELSE date '2020-01-01' + g % 3000 END,
	   CASE WHEN g % 41 = 0 THEN NULL WHEN g % 223 = 0 THEN '-infinity'
			ELSE timestamp '2020-01-01' + g * interval '37 minutes' END,
	   CASE WHEN g % 43 = 0 THEN NULL
			ELSE timestamptz '2020-01-01 00:00+00' + g * interval '1 hour' END
FROM generate_series(1, 20000) g;
-- Mirrors hold the index's first four columns: one index per group of three.
CREATE INDEX ft_int ON ft USING gpubtree (k) INCLUDE (i2, i4, i8);
CREATE INDEX ft_flt ON ft USING gpubtree (k) INCLUDE (f4, f8, i4);
CREATE INDEX ft_time ON ft USING gpubtree (k) INCLUDE (d, ts, tz);
VACUUM ANALYZE ft;

-- The columns: each one's group (its index), constants (one NULL), an IN
-- list and BETWEEN bounds, all of the column's own type or one it compares
-- with in the mirror (integers with integers, floats with floats).
CREATE TABLE fcol (grp text, col text, consts text[], list text, lo text, hi text);
INSERT INTO fcol VALUES
	('int', 'k', '{-2500, 0, 777, 4000::int2, NULL::int8}', '-9000, 12, 4000', '-100', '2500'),
	('int', 'i2', '{-150, 0, 299::int2, 42::int8, NULL::int2}', '-1, 0, 7', '-50::int2', '120'),
	('int', 'i4', '{-20000, 0, 31337, 5::int2, NULL::int4}', '-49963, 37, 74', '-10000', '25000::int8'),
	('int', 'i8', '{-3000000021, 0, 5000000035, 1000000007::int4, NULL::int8}', '0, 1000000007, -2000000014', '-1000000007000', '3000000021000'),
	('flt', 'f4', $${'-0'::float4, 12.5::float4, 'NaN'::float4, '-Infinity'::float8, 3.25::float8, NULL::float4}$$,
		$$'NaN'::float4, 0::float4, 'Infinity'::float4$$, $$'-0'::float4$$, $$'Infinity'::float4$$),
	('flt', 'f8', $${'0'::float8, '-0'::float8, 100.5::float8, 'NaN'::float8, 'Infinity'::float8, 7::float4, NULL::float8}$$,
		$$'-0'::float8, 'NaN'::float8, 200::float8$$, $$-50::float8$$, $$'NaN'::float8$$),
	('flt', 'i4', '{0, -7, 49000, NULL::int4}', '37, 74, 111', '-30000', '30000'),
	('flt', 'k', '{0, 5000, -5000, NULL::int8}', '1, 2, 3, 7919', '-3000', '-1000'),
	('time', 'd', $${'2021-03-01'::date, 'infinity'::date, '2020-01-01'::date, NULL::date}$$,
		$$'2020-01-02'::date, '2024-12-31'::date, 'infinity'::date$$, $$'2021-01-01'::date$$, $$'2022-01-01'::date$$),
	('time', 'ts', $${'2020-06-01 10:00'::timestamp, '-infinity'::timestamp, '2020-01-01 00:37'::timestamp, NULL::timestamp}$$,
		$$'2020-01-01 00:37'::timestamp, '2020-01-01 01:14'::timestamp$$, $$'2020-03-01'::timestamp$$, $$'2020-09-01'::timestamp$$),
	('time', 'tz', $${'2020-08-01 00:00+00'::timestamptz, '2020-01-01 01:00+00'::timestamptz, NULL::timestamptz}$$,
		$$'2020-01-01 02:00+00'::timestamptz, '2021-01-01 00:00+00'::timestamptz$$,
		$$'2020-02-01 00:00+02'::timestamptz$$, $$'2020-05-01 00:00-05'::timestamptz$$),
	('time', 'k', '{100, -100, NULL::int8}', '-7, 9999, 11', '0', '6000');

-- The atoms of every column: each comparison with a rotating constant (and
-- once with the constant on the left), NULL tests, BETWEEN, IN and NOT IN
-- with and without a NULL, = ANY and <> ALL of an array.
CREATE TABLE fatom (grp text, n int, col text, pred text);
INSERT INTO fatom
SELECT grp, row_number() OVER (PARTITION BY grp ORDER BY ci, ai), col, pred
FROM (
	SELECT c.grp, ci, ai, c.col, a.pred
	FROM (SELECT *, row_number() OVER () AS ci FROM fcol) c,
		 LATERAL (
			SELECT oi AS ai, format('%s %s %s', c.col, op,
							  c.consts[1 + (oi + ci) % cardinality(c.consts)]) AS pred
			FROM unnest('{<, <=, =, <>, >=, >}'::text[]) WITH ORDINALITY o(op, oi)
			UNION ALL SELECT 10, format('%s < %s', c.consts[1 + ci % cardinality(c.consts)], c.col)
			UNION ALL SELECT 11, format('%s = %s', c.col, c.consts[cardinality(c.consts)])
			UNION ALL SELECT 12, format('%s IS NULL', c.col)
			UNION ALL SELECT 13, format('%s IS NOT NULL', c.col)
			UNION ALL SELECT 14, format('%s BETWEEN %s AND %s', c.col, c.lo, c.hi)
			UNION ALL SELECT 15, format('%s NOT BETWEEN %s AND %s', c.col, c.lo, c.hi)
			UNION ALL SELECT 16, format('%s IN (%s, NULL)', c.col, c.list)
			UNION ALL SELECT 17, format('%s NOT IN (%s)', c.col, c.list)
			UNION ALL SELECT 18, format('%s NOT IN (%s, NULL)', c.col, c.list)
			UNION ALL SELECT 19, format('%s = ANY (ARRAY[%s])', c.col, c.list)
			UNION ALL SELECT 20, format('%s <> ALL (ARRAY[%s, NULL])', c.col, c.list)
			UNION ALL SELECT 21, format('NOT (%s >= %s)', c.col, c.consts[1 + ci % cardinality(c.consts)])
		 ) a
) s;
-- The predicates: every atom, and as many combinations of two or three
-- atoms of the same group with AND, OR and NOT.
CREATE TABLE fpred (grp text, n int, pred text);
INSERT INTO fpred
SELECT grp, n, pred FROM fatom
UNION ALL
SELECT a.grp, a.n + 1000,
	   CASE a.n % 5
		   WHEN 0 THEN format('(%s) AND (%s)', a.pred, b.pred)
		   WHEN 1 THEN format('(%s) OR (%s)', a.pred, b.pred)
		   WHEN 2 THEN format('NOT ((%s) OR (%s))', a.pred, b.pred)
		   WHEN 3 THEN format('((%s) OR (%s)) AND NOT (%s)', a.pred, b.pred, c.pred)
		   ELSE format('NOT (%s) AND ((%s) OR %s IS NULL)', a.pred, b.pred, c.col)
	   END
FROM fatom a
JOIN fatom b ON b.grp = a.grp AND b.n = 1 + (a.n * 7 + 3) % (SELECT count(*) FROM fatom x WHERE x.grp = a.grp)
JOIN fatom c ON c.grp = a.grp AND c.n = 1 + (a.n * 11 + 5) % (SELECT count(*) FROM fatom x WHERE x.grp = a.grp);
-- Aggregates of each group: with no float sum, and float sums and averages.
CREATE TABLE fagg (grp text, aggs text, float_sums text);
INSERT INTO fagg VALUES
	('int', 'count(*), count(i2), sum(i2), sum(i4), sum(i8), avg(i4), avg(k), min(i2), max(i8), min(k), max(k)',
	 'count(*), sum(i4), avg(i8)'),
	('flt', 'count(*), count(f4), min(f4), max(f4), min(f8), max(f8), sum(i4), avg(i4), max(k)',
	 'count(*), sum(f8), avg(f8), avg(f4)'),
	('time', 'count(*), count(d), min(d), max(d), min(ts), max(ts), min(tz), max(tz), sum(k)',
	 'count(*), min(tz), avg(k)');

-- fcheck(shape, q, ref): q's rows through the node (the other plans are
-- disabled, as agree() in aggregates.sql does) and what answered, against
-- ref's rows (q unless given) on the ordinary plan; rows compared as sets
-- (a grouped query names its bucket b), numbers within 1e-12 relative.
CREATE TABLE fresult (shape text, q text, same bool, how text, detail text);
CREATE FUNCTION rows_of(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	r record;
	acc jsonb[] := '{}';
BEGIN
	-- a loop, not a subquery: q may be an EXECUTE of a prepared statement
	FOR r IN EXECUTE q LOOP
		acc := acc || to_jsonb(r);
	END LOOP;
	RETURN (SELECT coalesce(jsonb_agg(e ORDER BY e -> 'b'), '[]') FROM unnest(acc) e);
END $$;
CREATE FUNCTION fcheck(shape text, q text, ref text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	node jsonb;
	plain jsonb;
	plan jsonb;
	how text;
	ok bool;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE format('EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF, COSTS OFF) %s', q) INTO plan;
	how := coalesce(jsonb_path_query_first(plan, 'strict $.**."Answered by"') #>> '{}', 'no GpubtreeAggregate node');
	node := rows_of(q);
	RESET enable_seqscan;
	RESET enable_indexscan;
	RESET enable_indexonlyscan;
	RESET enable_bitmapscan;
	SET LOCAL gpubtree.device = off;
	plain := rows_of(coalesce(ref, q));
	RESET gpubtree.device;
	-- equal as they are (most answers: cheap for thousands of groups), or
	-- row by row, value by value: numbers within 1e-12 relative
	ok := node = plain;
	IF NOT ok THEN
		SELECT jsonb_array_length(node) = jsonb_array_length(plain) AND
			   coalesce(bool_and(CASE WHEN jsonb_typeof(y.value) = 'number' AND
											jsonb_typeof(x.value) = 'number'
								 THEN abs((x.value #>> '{}')::numeric - (y.value #>> '{}')::numeric)
									  <= 1e-12 * abs((y.value #>> '{}')::numeric)
								 ELSE x.value IS NOT DISTINCT FROM y.value END), true)
		INTO ok
		FROM jsonb_array_elements(plain) WITH ORDINALITY p(e, i)
		LEFT JOIN jsonb_array_elements(node) WITH ORDINALITY n(e, i) USING (i)
		CROSS JOIN LATERAL jsonb_each(p.e) y
		LEFT JOIN LATERAL jsonb_each(n.e) x ON x.key = y.key;
	END IF;
	INSERT INTO fresult VALUES (shape, q, ok, how,
		CASE WHEN NOT ok THEN node::text || ' vs ' || plain::text END);
END $$;
-- The counts of a shape: a wrong answer or one the service no longer gives
-- changes them; a float sum over NaN or an infinity falls back (intended).
CREATE VIEW fsummary AS
SELECT shape, count(*) AS queries, count(*) FILTER (WHERE same) AS same,
	   count(*) FILTER (WHERE how LIKE 'GPU service%') AS by_service,
	   count(*) FILTER (WHERE how LIKE '%float sum that could overflow%') AS float_fallback,
	   count(*) FILTER (WHERE how NOT LIKE 'GPU service%'
						AND how NOT LIKE '%float sum that could overflow%') AS other
FROM fresult GROUP BY shape ORDER BY shape;

-- What the node shows: the WHERE past the key's ranges and the FILTERs.
EXPLAIN (COSTS OFF)
SELECT count(*) FILTER (WHERE i2 IN (1, 2, NULL)), sum(i8) FILTER (WHERE NOT (i4 > 0 OR i2 IS NULL))
FROM ft WHERE k BETWEEN -6000 AND 7000 AND i4 <> 5;

-- (a) a key range and the predicate, (b) FILTERs of two predicates, (c)
-- GROUP BY a bucket of the key, (d) no key condition (NULL keys too).
SELECT fcheck('a range AND pred', format('SELECT %s FROM ft WHERE k BETWEEN -6000 AND 7000 AND (%s)', g.aggs, p.pred))
FROM fpred p JOIN fagg g USING (grp);
SELECT fcheck('a range AND pred, float sums', format('SELECT %s FROM ft WHERE k BETWEEN -6000 AND 7000 AND (%s)', g.float_sums, p.pred))
FROM fpred p JOIN fagg g USING (grp);
SELECT fcheck('b two FILTERs', format(
	'SELECT count(*), count(*) FILTER (WHERE %1$s), %3$s FILTER (WHERE %1$s), %4$s FILTER (WHERE %2$s), count(*) FILTER (WHERE %2$s) FROM ft WHERE k > -8000',
	p.pred, q.pred, split_part(g.aggs, ', ', 3), split_part(g.aggs, ', ', 6)))
FROM fpred p JOIN fagg g USING (grp)
JOIN fpred q ON q.grp = p.grp AND q.n = (SELECT min(n) FROM fpred x WHERE x.grp = p.grp AND x.n > (p.n * 13) % 1100);
SELECT fcheck('c GROUP BY k / 1000', format(
	'SELECT k / 1000 AS b, %s, count(*) FILTER (WHERE %s) FROM ft WHERE k BETWEEN -9000 AND 9000 AND (%s) GROUP BY k / 1000',
	g.aggs, q.pred, p.pred))
FROM fpred p JOIN fagg g USING (grp)
JOIN fpred q ON q.grp = p.grp AND q.n = (SELECT min(n) FROM fpred x WHERE x.grp = p.grp AND x.n > (p.n * 17) % 1100);
SELECT fcheck('d no key condition', format('SELECT %s, count(*) FILTER (WHERE %s) FROM ft WHERE %s', g.aggs, p.pred, q.pred))
FROM fpred p JOIN fagg g USING (grp)
JOIN fpred q ON q.grp = p.grp AND q.n = (SELECT min(n) FROM fpred x WHERE x.grp = p.grp AND x.n > (p.n * 19) % 1100);
SELECT fcheck('d no key condition, GROUP BY', format(
	'SELECT k / 1000 AS b, %s FROM ft WHERE %s GROUP BY 1', g.aggs, p.pred))
FROM fpred p JOIN fagg g USING (grp) WHERE p.n % 3 = 0;

-- (g) GROUP BY a column the index holds (integers and dates: up to
-- thousands of groups, NULL among them), or the key itself, under a key
-- range and the predicate, with a FILTER; and with no key condition (the
-- rows with NULL keys go into their groups too).  Each predicate with one
-- of its group's columns.
CREATE TABLE fgroup (grp text, n int, col text);
INSERT INTO fgroup VALUES ('int', 0, 'i2'), ('int', 1, 'i4'), ('int', 2, 'i8'), ('int', 3, 'k'),
	('flt', 0, 'i4'), ('flt', 1, 'k'), ('time', 0, 'd'), ('time', 1, 'k');
CREATE VIEW fpred_group AS
SELECT p.grp, p.n, p.pred, c.col AS gcol, g.aggs,
	   coalesce((SELECT q.pred FROM fpred q WHERE q.grp = p.grp AND q.n =
				 (SELECT min(n) FROM fpred x WHERE x.grp = p.grp AND x.n > (p.n * 29) % 1100)),
				p.pred) AS filter
FROM fpred p JOIN fagg g USING (grp)
JOIN fgroup c ON c.grp = p.grp AND c.n = p.n % (SELECT count(*) FROM fgroup y WHERE y.grp = p.grp);
SELECT fcheck('g GROUP BY a column', format(
	'SELECT %s AS b, %s, count(*) FILTER (WHERE %s) FROM ft WHERE k BETWEEN -9000 AND 9000 AND (%s) GROUP BY 1',
	gcol, aggs, filter, pred))
FROM fpred_group;
SELECT fcheck('g GROUP BY a column, no key condition', format(
	'SELECT %s AS b, %s FROM ft WHERE %s GROUP BY 1 HAVING count(*) > 1', gcol, aggs, pred))
FROM fpred_group WHERE n % 3 = 0;

-- GROUP BY an immutable expression of one such column (of the key under
-- the predicate or a FILTER): the column's groups, the expression
-- evaluated once a value and equal results merged.  Each predicate with
-- one of its group's expressions.
CREATE TABLE fgexpr (grp text, n int, expr text);
INSERT INTO fgexpr VALUES ('int', 0, 'i4 % 7'), ('int', 1, 'i2 / 10'), ('int', 2, 'abs(i8) % 1000'),
	('int', 3, 'CASE WHEN i4 > 0 THEN 1 END'), ('int', 4, 'k % 10'),
	('flt', 0, 'i4::float8 / 3'), ('flt', 1, 'abs(k) % 1000 / 10.0'), ('flt', 2, '(i4 % 5)::text'),
	('time', 0, $$CASE WHEN d = 'infinity' THEN -1 ELSE (d - date '2020-01-01') / 7 END$$),
	('time', 1, 'extract(year FROM d)'), ('time', 2, $$d + 30 < date '2022-01-01'$$);
CREATE VIEW fpred_gexpr AS
SELECT f.grp, f.n, f.pred, e.expr, f.aggs, f.filter
FROM fpred_group f
JOIN fgexpr e ON e.grp = f.grp AND e.n = f.n % (SELECT count(*) FROM fgexpr y WHERE y.grp = f.grp);
SELECT fcheck('g GROUP BY an expression', format(
	'SELECT %s AS b, %s, count(*) FILTER (WHERE %s) FROM ft WHERE k BETWEEN -9000 AND 9000 AND (%s) GROUP BY 1',
	expr, aggs, filter, pred))
FROM fpred_gexpr;
SELECT fcheck('g GROUP BY an expression, no key condition', format(
	'SELECT %s AS b, %s FROM ft WHERE %s GROUP BY 1 HAVING count(*) > 1', expr, aggs, pred))
FROM fpred_gexpr WHERE n % 3 = 1;

-- (e) PREPAREd with parameters, a generic plan: the key range, the
-- predicate's constant and a FILTER's IN list as parameters.
SET plan_cache_mode = force_generic_plan;
CREATE FUNCTION check_prepared() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	c record;
	op text;
	i int := 0;
	typ text;
	const text;
	q text;
BEGIN
	FOR c IN SELECT * FROM fcol ORDER BY grp, col LOOP
		FOREACH op IN ARRAY '{<, <=, =, <>, >=, >}'::text[] LOOP
			i := i + 1;
			const := c.consts[1 + i % cardinality(c.consts)];
			EXECUTE format('SELECT pg_typeof(%s)::text', const) INTO typ;
			q := format('SELECT %s, count(*) FILTER (WHERE %s = ANY ($4)) FROM ft WHERE k BETWEEN $1 AND $2 AND %s %s $3',
						(SELECT aggs FROM fagg WHERE grp = c.grp), c.col, c.col, op);
			EXECUTE format('PREPARE fp(int8, int8, %s, %s[]) AS %s', typ,
						   (SELECT format_type(atttypid, atttypmod) FROM pg_attribute
							WHERE attrelid = 'ft'::regclass AND attname = c.col), q);
			-- fcheck() disables the other plans when the generic plan is made.
			PERFORM fcheck('e prepared, generic plan',
				format('EXECUTE fp(-7000, 8000, %s, ARRAY[%s, NULL])', const, c.list),
				format('SELECT %s, count(*) FILTER (WHERE %s = ANY (ARRAY[%s, NULL])) FROM ft WHERE k BETWEEN -7000 AND 8000 AND %s %s %s',
					   (SELECT aggs FROM fagg WHERE grp = c.grp), c.col, c.list, c.col, op, const));
			DEALLOCATE fp;
		END LOOP;
	END LOOP;
END $$;
SELECT check_prepared();
RESET plan_cache_mode;

-- (f) Inside a transaction with its own uncommitted UPDATE, DELETE and
-- INSERT (rows with NULL keys and the floats' specials among them).
BEGIN;
UPDATE ft SET i4 = i4 + 1, f8 = -f8, d = d + 1, i2 = NULL WHERE k BETWEEN 0 AND 1500;
DELETE FROM ft WHERE k BETWEEN 3000 AND 3400 OR (k IS NULL AND i4 % 3 = 0);
INSERT INTO ft VALUES
	(4000, 7, 7, 7, 'NaN', '-0', '2021-03-01', '2020-06-01 10:00', '2020-08-01 00:00+00'),
	(NULL, -150, 0, 0, '-0', 'Infinity', 'infinity', '-infinity', NULL),
	(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(-2500, 299, 31337, 5000000035, 12.5, 100.5, '2020-01-01', NULL, '2020-01-01 01:00+00');
SELECT fcheck('f own changes, range AND pred', format('SELECT %s FROM ft WHERE k BETWEEN -6000 AND 7000 AND (%s)', g.aggs, p.pred))
FROM fpred p JOIN fagg g USING (grp) WHERE p.n % 2 = 0;
SELECT fcheck('f own changes, FILTER, GROUP BY', format(
	'SELECT k / 1000 AS b, %s, count(*) FILTER (WHERE %s) FROM ft WHERE k > -9000 GROUP BY k / 1000', g.aggs, p.pred))
FROM fpred p JOIN fagg g USING (grp) WHERE p.n % 2 = 1;
SELECT fcheck('f own changes, no key condition', format('SELECT %s, count(*) FILTER (WHERE %s) FROM ft', g.aggs, p.pred))
FROM fpred p JOIN fagg g USING (grp) WHERE p.n % 3 = 0;
SELECT fcheck('f own changes, GROUP BY a column', format(
	'SELECT %s AS b, %s, count(*) FILTER (WHERE %s) FROM ft WHERE k > -9000 AND (%s) GROUP BY 1',
	gcol, aggs, filter, pred))
FROM fpred_group WHERE n % 2 = 0;
SELECT fcheck('f own changes, GROUP BY an expression', format(
	'SELECT %s AS b, %s, count(*) FILTER (WHERE %s) FROM ft WHERE k > -9000 AND (%s) GROUP BY 1',
	expr, aggs, filter, pred))
FROM fpred_gexpr WHERE n % 2 = 1;
-- Float min and max among the transaction's own rows fall back (-0 and 0,
-- NaNs); the same predicates without them.
SELECT fcheck('f own changes, no float min/max', format(
	'SELECT count(*), count(f8), sum(i4), max(k), count(*) FILTER (WHERE %s) FROM ft WHERE k BETWEEN -6000 AND 7000 AND (%s)',
	p.pred, q.pred))
FROM fpred p JOIN fpred q ON q.grp = p.grp AND q.n = (SELECT min(n) FROM fpred x WHERE x.grp = p.grp AND x.n > (p.n * 23) % 1100)
WHERE p.grp = 'flt';
COMMIT;

SELECT * FROM fsummary;
-- Any wrong answer, in full.
SELECT shape, q, detail FROM fresult WHERE NOT same ORDER BY shape, q;
-- What answered where the service did not (beyond float sums).
SELECT shape, how, count(*) FROM fresult
WHERE how NOT LIKE 'GPU service%' AND how NOT LIKE '%float sum that could overflow%'
GROUP BY shape, how ORDER BY shape, how;

RESET ALL;
DROP VIEW fsummary, fpred_gexpr, fpred_group;
DROP TABLE ft, fcol, fatom, fpred, fagg, fresult, fgroup, fgexpr;
DROP FUNCTION fcheck(text, text, text);
DROP FUNCTION rows_of(text);
DROP FUNCTION check_prepared();
