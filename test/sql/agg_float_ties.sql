-- The sign of zero and NaNs in float aggregates: every aggregate over every
-- float type (each type of a gpubtree operator class whose -0 is equal to
-- 0 but prints otherwise, and a domain over each), as the key and as an
-- INCLUDE column, over mixes of 0, -0, NaN, -NaN, +-Infinity and NULL.
-- PostgreSQL's min/max keep the later of equal values (float8smaller/
-- larger), so of -0 and 0, or NaNs of other bits, they return the last the
-- plan reads; the rows are in key order in the heap, so that every plan
-- below reads them in one order.  Each query is planned with the other
-- plans disabled, so that the node is taken wherever it accepts the
-- aggregate, and its result is compared with the ordinary plan's
-- (gpubtree.device = off), by its text and its bits (float8send).  One
-- line per mix, column and position says for each aggregate (count sum avg
-- min max): node (the service answered), tie (the plan below answered: a
-- min or max among equal values of other bits), child (the plan below
-- answered for another reason: float sums with NaN or infinities), plan
-- (the node refuses the aggregate) or WRONG(...).
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
SET jit = off;

CREATE TABLE aft_type (ord serial, typ text, decl text, col text);
DO $$
DECLARE
	t text;
	signed bool;
BEGIN
	FOR t IN
		SELECT DISTINCT format_type(opcintype, NULL) FROM pg_opclass
		WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'gpubtree') ORDER BY 1
	LOOP
		BEGIN
			EXECUTE format('SELECT %1$L::%2$s = %3$L::%2$s AND %1$L::%2$s::text <> %3$L::%2$s::text',
						   '-0', t, '0') INTO signed;
		EXCEPTION WHEN OTHERS THEN
			signed := false;
		END;
		IF signed THEN
			INSERT INTO aft_type (typ, decl) VALUES (t, t);
			EXECUTE format('CREATE DOMAIN %I AS %s', 'aft_d_' || replace(t, ' ', '_'), t);
			INSERT INTO aft_type (typ, decl) VALUES (t, 'aft_d_' || replace(t, ' ', '_'));
		END IF;
	END LOOP;
	UPDATE aft_type SET col = 'c' || ord;
END $$;
SELECT col, typ, decl FROM aft_type ORDER BY ord;

-- Mixes: row g's value (text, NULL for NULL).  The table has 6000 rows, so
-- that a range reads chunk sums too; "rare" has one -0 among 0s, a tie
-- inside one chunk; in "wide" mixes 0.1 keeps a double column in 8 bytes a
-- value (the others are held in 4).
CREATE TABLE aft_mix (ord serial, name text, val text);
INSERT INTO aft_mix (name, val) VALUES
	('zeros', '(ARRAY[''0'', ''-0''])[g % 2 + 1]'),
	('zeros_nulls', '(ARRAY[''-0'', NULL, ''0'', NULL, NULL])[g % 5 + 1]'),
	('neg_zeros', '(ARRAY[''-0'', NULL])[g % 2 + 1]'),
	('min_zero', '(ARRAY[''0'', ''Infinity'', ''-0'', ''NaN'', NULL, ''-NaN''])[g % 6 + 1]'),
	('max_zero', '(ARRAY[''-0'', ''-Infinity'', ''0'', NULL])[g % 4 + 1]'),
	('one_zero', '(ARRAY[''0'', ''Infinity'', ''NaN'', NULL])[g % 4 + 1]'),
	('one_neg_zero', '(ARRAY[''-0'', ''-Infinity'', ''-NaN''])[g % 3 + 1]'),
	('all', '(ARRAY[''NaN'', ''-0'', ''Infinity'', ''-Infinity'', ''0'', ''-NaN'', NULL])[g % 7 + 1]'),
	('rare', 'CASE WHEN g = 1777 THEN ''-0'' ELSE ''0'' END'),
	('wide', '(ARRAY[''0'', ''-0'', ''0.1'', NULL, ''NaN'', ''-NaN''])[g % 6 + 1]'),
	('wide_one_zero', '(ARRAY[''-0'', ''0.1'', ''-NaN''])[g % 3 + 1]');

-- One table a mix, rows in key order: an index on each column as the key
-- (the table sorted by the key), and one on g with the columns as INCLUDE
-- columns, three by three.
CREATE TABLE aft_case (mord int, tord int, col text, pos text, tab text, cond text);
DO $$
DECLARE
	m record;
	t record;
	tab text;
	cols text;
	vals text;
	incl text[];
	n int;
BEGIN
	FOR m IN SELECT * FROM aft_mix ORDER BY ord LOOP
		cols := 'g int4 NOT NULL';
		vals := 'g';
		FOR t IN SELECT * FROM aft_type ORDER BY ord LOOP
			cols := cols || format(', %I %s', t.col, t.decl);
			vals := vals || format(', (%s)::%s', m.val, t.typ);
		END LOOP;
		tab := 'aft_' || m.name;
		EXECUTE format('CREATE TABLE %I (%s) WITH (autovacuum_enabled = off)', tab, cols);
		EXECUTE format('INSERT INTO %I SELECT %s FROM generate_series(1, 6000) g', tab, vals);
		n := 0;
		FOR incl IN
			SELECT array_agg(col ORDER BY ord) FROM aft_type GROUP BY (ord - 1) / 3 ORDER BY (ord - 1) / 3
		LOOP
			n := n + 1;
			EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (g) INCLUDE (%s)', tab || '_g' || n, tab,
						   (SELECT string_agg(quote_ident(c), ', ') FROM unnest(incl) c));
		END LOOP;
		INSERT INTO aft_case SELECT m.ord, ty.ord, ty.col, 'include', tab, 'g BETWEEN 1 AND 6000'
		FROM aft_type ty;
		FOR t IN SELECT * FROM aft_type ORDER BY ord LOOP
			tab := format('aft_%s_%s', m.name, t.col);
			EXECUTE format('CREATE TABLE %I WITH (autovacuum_enabled = off) AS SELECT * FROM %I ORDER BY %I, g',
						   tab, 'aft_' || m.name, t.col);
			EXECUTE format('CREATE INDEX ON %I USING gpubtree (%I)', tab, t.col);
			INSERT INTO aft_case VALUES (m.ord, t.ord, t.col, 'key', tab,
				format('%I BETWEEN %L AND %L', t.col, '-Infinity', 'NaN'));
		END LOOP;
	END LOOP;
END $$;
SELECT format('VACUUM ANALYZE %I', tab) FROM (SELECT DISTINCT tab FROM aft_case) c ORDER BY 1 \gexec

-- q's result: its text and its bits, or its error.
CREATE FUNCTION aft_result(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE q INTO result;
	RETURN result;
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR: ' || SQLERRM;
END $$;

-- The ordinary plan's, an aggregate over a scan (not min/max's index scan
-- with LIMIT 1, which returns the first of equal values).
CREATE FUNCTION aft_plain(q text) RETURNS text LANGUAGE sql
SET gpubtree.device = off SET enable_indexscan = off SET enable_indexonlyscan = off
SET enable_bitmapscan = off RETURN aft_result(q);

-- How the node answers q (node, child, plan) and the result.
CREATE FUNCTION aft_run(q text, OUT how text, OUT result text) LANGUAGE plpgsql
SET enable_seqscan = off SET enable_indexscan = off
SET enable_indexonlyscan = off SET enable_bitmapscan = off AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE format('EXPLAIN (COSTS OFF, FORMAT JSON) %s', q) INTO plan;
	how := 'plan';
	IF plan::text LIKE '%GpubtreeAggregate%' THEN
		EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) %s', q)
			INTO plan;
		how := jsonb_path_query_first(plan, 'strict $.**."Answered by"') #>> '{}';
		how := CASE WHEN how LIKE 'GPU service%' THEN 'node'
			WHEN how LIKE '%equal values of other bits%' THEN 'tie' ELSE 'child' END;
	END IF;
	result := aft_result(q);
END $$;

CREATE FUNCTION aft_check(c aft_case, agg text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	q text;
	r record;
	want text;
BEGIN
	q := format('SELECT %1$s(%2$I)::text || '' '' || encode(float8send(%1$s(%2$I)::float8), ''hex'') FROM %3$I WHERE %4$s',
				agg, c.col, c.tab, c.cond);
	r := aft_run(q);
	want := aft_plain(q);
	RETURN CASE WHEN r.result IS NOT DISTINCT FROM want THEN r.how
		ELSE format('WRONG(%s: %s, not %s)', r.how, r.result, want) END;
END $$;

SELECT m.name AS mix, t.decl, c.pos,
	   (SELECT string_agg(aft_check(c, a), ' ' ORDER BY o)
		FROM unnest('{count,sum,avg,min,max}'::text[]) WITH ORDINALITY u(a, o)) AS "count sum avg min max"
FROM aft_case c JOIN aft_mix m ON m.ord = c.mord JOIN aft_type t ON t.ord = c.tord
ORDER BY c.mord, c.pos DESC, c.tord;

-- Ties across the mirror's parts: a tree of 0s, and -0 in the delta
-- (inserted after the build) or among the entries checked in the heap (the
-- transaction's own row).
CREATE TABLE aft_parts (g int4 NOT NULL, k float8, v float8) WITH (autovacuum_enabled = off);
INSERT INTO aft_parts SELECT g, 0, 0 FROM generate_series(1, 6000) g;
CREATE INDEX ON aft_parts USING gpubtree (g) INCLUDE (k, v);
CREATE INDEX ON aft_parts USING gpubtree (k);
VACUUM ANALYZE aft_parts;
CREATE FUNCTION aft_parts_check(part text) RETURNS TABLE (part text, col text, agg text, how text)
LANGUAGE sql AS $$
	SELECT $1, col, a, aft_check(ROW(0, 0, col, pos, 'aft_parts', cond)::aft_case, a)
	FROM (VALUES ('v', 'include', 'g BETWEEN 1 AND 7000'),
				 ('k', 'key', 'k BETWEEN ''-Infinity'' AND ''NaN''')) p(col, pos, cond),
		 unnest('{min,max}'::text[]) a
$$;
SELECT * FROM aft_parts_check('tree');
INSERT INTO aft_parts VALUES (6001, '-0', '-0');
SELECT * FROM aft_parts_check('delta');
BEGIN;
DELETE FROM aft_parts WHERE g = 6001;
INSERT INTO aft_parts VALUES (6002, '-0', '-0');
SELECT * FROM aft_parts_check('own row');
ROLLBACK;

DROP TABLE aft_parts;
SELECT format('DROP TABLE %I', tab) FROM (SELECT DISTINCT tab FROM aft_case) c ORDER BY 1 \gexec
SELECT format('DROP DOMAIN %I', decl) FROM aft_type WHERE decl <> typ ORDER BY ord \gexec
DROP FUNCTION aft_parts_check, aft_check, aft_run, aft_plain, aft_result;
DROP TABLE aft_case, aft_mix, aft_type;
