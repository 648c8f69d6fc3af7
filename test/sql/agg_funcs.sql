-- The gpubtree_count/sum/avg/min/max functions against the SQL each stands
-- for, generated over every type of bound and every column type they take:
-- each call must answer what the SELECT answers, or fail as it fails (the
-- same SQLSTATE), never with an internal error.  The SQL (README):
--   gpubtree_count(i, lo, hi)      count(*)
--   gpubtree_sum(i, col, lo, hi)   sum(col)::numeric; float: sum(col::float8)::numeric
--   gpubtree_avg(i, col, lo, hi)   avg(col)::numeric; float: sum(col::float8)::numeric / count(col)
--   gpubtree_min/max(i, col, ...)  min(col)::numeric; date and time: extract(epoch FROM min(col))
-- FROM table WHERE key BETWEEN lo AND hi.  Each with the service and without.
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- q's single value as text, or 'ERROR <SQLSTATE>'.
CREATE FUNCTION af_result(q text, device text DEFAULT 'off') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	PERFORM set_config('gpubtree.device', device, true);
	EXECUTE q INTO result;
	RETURN coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE;
END $$;

-- The SQL a function stands for, over column col of type typ.
CREATE FUNCTION af_sql(f text, col text, typ regtype) RETURNS text
LANGUAGE sql AS $$
	SELECT CASE
		WHEN f = 'count' THEN 'count(*)'
		WHEN f IN ('min', 'max') AND typ = ANY ('{date,timestamp,timestamptz,time}'::regtype[])
			THEN format('extract(epoch FROM %s(%I))', f, col)
		WHEN f = 'sum' AND typ = ANY ('{float4,float8}'::regtype[])
			THEN format('sum(%I::float8)::numeric', col)
		WHEN f = 'avg' AND typ = ANY ('{float4,float8}'::regtype[])
			THEN format('sum(%I::float8)::numeric / count(%I)', col, col)
		ELSE format('%s(%I)::numeric', f, col) END
$$;

-- Function f over index idx against its SQL over table tab with key k:
-- 'ok' (the same value), '=SQLSTATE' (the same error), 'refused' (42804,
-- bounds of a type the key's operator family does not compare: 'SQL
-- answers' where SQL compares them through a cast, else SQL's SQLSTATE),
-- or what went wrong.
CREATE FUNCTION af_check(f text, tab text, idx text, col text, typ regtype,
						 lo text, hi text, device text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	got text;
	want text;
BEGIN
	got := af_result(format('SELECT gpubtree_%s(%L%s, %s, %s)::text', f, idx,
							CASE WHEN f <> 'count' THEN format(', %L', col) END, lo, hi),
					 device);
	want := af_result(format('SELECT (%s)::text FROM %I WHERE k BETWEEN %s AND %s',
							 af_sql(f, col, typ), tab, lo, hi));
	RETURN CASE
		WHEN got = want AND got LIKE 'ERROR %' THEN '=' || substr(got, 7)
		WHEN got = want THEN 'ok'
		WHEN got = 'ERROR 42804' AND want NOT LIKE 'ERROR %' THEN 'refused, SQL answers'
		WHEN got = 'ERROR 42804' AND want = 'ERROR 42883' THEN 'refused, SQL: 42883'
		ELSE format('WRONG(%s, not %s)', got, want) END;
END $$;

--
-- Bounds of every type.  Keys of each family; bounds of every base type
-- of pg_catalog, of domains over each key type (and over a domain), of
-- arrays, of a record and of a composite type, each made from the text of
-- the key's bound or cast from the key's own value.
--
CREATE TABLE af_key (typ regtype, lo text, hi text);
INSERT INTO af_key VALUES ('int8', '10', '20'), ('int4', '10', '20'), ('int2', '10', '20'),
	('float8', '10', '20'), ('float4', '10', '20'), ('date', '2000-01-10', '2000-01-20'),
	('timestamp', '2000-01-10', '2000-01-20'), ('timestamptz', '2000-01-10 00:00+00', '2000-01-20 00:00+00'),
	('time', '00:00:10', '00:00:20');
-- Every key type of gpubtree's operator classes is there.
SELECT c.opcintype::regtype AS missing_key_type
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod WHERE a.amname = 'gpubtree'
EXCEPT SELECT typ FROM af_key;
DO $$
DECLARE
	k record;
BEGIN
	FOR k IN SELECT * FROM af_key LOOP
		EXECUTE format('CREATE TABLE %I (k %s, v int8)', 'af_k_' || k.typ::oid, k.typ);
		EXECUTE format('INSERT INTO %I SELECT %L::%s + %s, g FROM generate_series(0, 30) g',
					   'af_k_' || k.typ::oid,
					   CASE WHEN k.typ = 'date'::regtype THEN '2000-01-01'
						   WHEN k.typ = ANY ('{timestamp,timestamptz}'::regtype[]) THEN '2000-01-01 00:00+00'
						   WHEN k.typ = 'time'::regtype THEN '00:00' ELSE '0' END, k.typ,
					   CASE WHEN k.typ = 'date'::regtype THEN 'g'
						   WHEN k.typ = ANY ('{timestamp,timestamptz}'::regtype[]) THEN 'g * interval ''1 day'''
						   WHEN k.typ = 'time'::regtype THEN 'g * interval ''1 second'''
						   ELSE 'g' END);
		EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (k) INCLUDE (v)',
					   'af_k_' || k.typ::oid || '_i', 'af_k_' || k.typ::oid);
		EXECUTE format('CREATE DOMAIN %I AS %s', 'af_d_' || replace(k.typ::text, ' ', '_'), k.typ);
	END LOOP;
END $$;
CREATE DOMAIN af_d_d_int8 AS af_d_bigint;
CREATE DOMAIN af_d_pos_int8 AS int8 CHECK (VALUE > 0);
CREATE DOMAIN af_d_text AS text;
CREATE DOMAIN af_d_numeric AS numeric;
CREATE TYPE af_comp AS (a int8);

-- (xml's input works only where the server was built with libxml: left out)
CREATE TABLE af_bound_type (typ text);
INSERT INTO af_bound_type
SELECT t.oid::regtype::text FROM pg_type t
WHERE (t.typnamespace = 'pg_catalog'::regnamespace AND t.typtype = 'b' AND t.typisdefined
	   AND t.typcategory <> 'A' AND t.typname NOT LIKE 'pg\_%' AND t.typname !~ '^(unknown|cstring|xml)$')
   OR t.typname ~ '^af_(d_|comp$)'
UNION ALL VALUES ('int8[]'), ('int4[]'), ('text[]'), ('record');

-- The bounds of one key as type t: lo and hi, or NULL where neither the
-- text nor the key's value becomes a t.
CREATE FUNCTION af_bounds(k af_key, t text, OUT lo text, OUT hi text)
LANGUAGE plpgsql AS $$
DECLARE
	e text;
BEGIN
	FOREACH e IN ARRAY ARRAY[
		CASE WHEN t = 'record' THEN 'ROW(%L::%s)'
			WHEN t LIKE '%[]' THEN 'ARRAY[%L::%s]::' || t
			ELSE '%L::' || t END,
		CASE WHEN t = 'record' THEN NULL
			WHEN t LIKE '%[]' THEN 'ARRAY[%L::%s]::' || t
			ELSE '(%L::%s)::' || t END] LOOP
		CONTINUE WHEN e IS NULL;
		BEGIN
			lo := format(e, k.lo, k.typ);
			hi := format(e, k.hi, k.typ);
			EXECUTE format('SELECT %s, %s', lo, hi);
			RETURN;
		EXCEPTION WHEN OTHERS THEN
			lo := NULL;
			hi := NULL;
		END;
	END LOOP;
END $$;

CREATE TABLE af_bound_case AS
SELECT k.typ AS keytype, t.typ AS boundtype, b.lo, b.hi, f, d.device,
	   af_check(f, 'af_k_' || k.typ::oid, 'af_k_' || k.typ::oid || '_i', 'v', 'int8',
				b.lo, b.hi, d.device) AS outcome
FROM af_key k, af_bound_type t, LATERAL af_bounds(k, t.typ) b,
	 unnest('{count,sum}'::text[]) f, (VALUES ('auto'), ('off')) d(device)
WHERE b.lo IS NOT NULL;

-- Nothing went wrong; every key met bounds of many types.
SELECT keytype, count(DISTINCT boundtype) > 10 AS many_types,
	   count(*) FILTER (WHERE outcome LIKE 'WRONG%') AS wrong
FROM af_bound_case GROUP BY keytype ORDER BY keytype::oid;
SELECT keytype, boundtype, f, device, outcome FROM af_bound_case
WHERE outcome LIKE 'WRONG%' ORDER BY 1, 2, 3, 4;
-- What each key answers (the same outcome for every function and device):
-- the types of its family, and domains over them.
SELECT keytype, string_agg(boundtype, ', ' ORDER BY boundtype) AS answered
FROM (SELECT DISTINCT keytype, boundtype FROM af_bound_case WHERE outcome = 'ok') s
GROUP BY keytype ORDER BY keytype::oid;
-- Where SQL compares and the function does not: other families through a
-- cast, which the function refuses with 42804.
SELECT keytype, string_agg(boundtype, ', ' ORDER BY boundtype) AS refused
FROM (SELECT DISTINCT keytype, boundtype FROM af_bound_case
	  WHERE outcome = 'refused, SQL answers') s
GROUP BY keytype ORDER BY keytype::oid;
-- Where SQL fails too: how many types of each outcome.
SELECT keytype, outcome, count(DISTINCT boundtype) AS types
FROM af_bound_case WHERE outcome NOT IN ('ok', 'refused, SQL answers')
GROUP BY 1, 2 ORDER BY keytype::oid, 2;
-- Each key and bound type gives one outcome, whatever the function and device.
SELECT count(*) AS mixed FROM (
	SELECT keytype, boundtype FROM af_bound_case GROUP BY 1, 2
	HAVING count(DISTINCT outcome) > 1) s;

--
-- Every type a gpubtree index keys (from its operator classes), a domain
-- over each, and types the functions refuse, over data sets of NULLs, NaN,
-- infinities, extremes and float sums that overflow.  Rows are in key order, as the heap holds them, so that
-- PostgreSQL's float sums add them in the same order in every plan (where a
-- partial sum overflows, whether sum() fails depends on the order).
--
CREATE TABLE af_set (ord serial, name text, ints int8[], floats float8[]);
INSERT INTO af_set (name, ints, floats) VALUES
	('plain', '{1,2,3,-4}', '{0.5,1.25,-3,8}'),
	('nulls', '{1,NULL,3,NULL}', '{0.5,NULL,NULL,-3}'),
	('all NULL', '{NULL,NULL}', '{NULL,NULL}'),
	('extremes', '{9223372036854775807,9223372036854775807,-9223372036854775808}',
	 '{1.7976931348623157e308,-1.7976931348623157e308,5e-324}'),
	('NaN', '{0}', '{1,NaN,2}'),
	('infinity', '{0}', '{1,Infinity,2}'),
	('both infinities', '{0}', '{Infinity,-Infinity,1}'),
	('overflow', '{0}', '{9e307,1.5e308,1}'),
	('negative overflow', '{0}', '{-1e308,-1e308}'),
	('overflow, then infinity', '{0}', '{1e308,1e308,Infinity}'),
	('infinity, then overflow', '{0}', '{Infinity,1e308,1e308}'),
	('NaN, then overflow', '{0}', '{NaN,1e308,1e308}'),
	('large, no overflow', '{0}', '{1e308,-1e308,1e308}'),
	('negative zero', '{0}', '{-0,-0}');

-- The columns, in the types' order; each value made from the set's
-- integer i (integer types) or float x (the others: date and time types
-- x seconds after 2000-01-01 12:00), as text.
CREATE FUNCTION af_base(t regtype) RETURNS regtype LANGUAGE sql
RETURN (SELECT CASE WHEN typtype = 'd' THEN typbasetype ELSE oid END FROM pg_type WHERE oid = t);
CREATE TABLE af_col (ord serial, col text, typ regtype);
DO $$
DECLARE
	t regtype;
BEGIN
	FOR t IN
		SELECT DISTINCT c.opcintype::regtype FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
		WHERE a.amname = 'gpubtree' ORDER BY 1
	LOOP
		EXECUTE format('CREATE DOMAIN %I AS %s', 'af_c_' || t::oid, t);
		INSERT INTO af_col (col, typ) VALUES ('c' || t::oid, t),
			('d' || t::oid, ('af_c_' || t::oid)::regtype);
	END LOOP;
END $$;
INSERT INTO af_col (col, typ) VALUES ('c_numeric', 'numeric'), ('c_text', 'text');

CREATE FUNCTION af_value(t regtype, i int8, x float8) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	b regtype := af_base(t);
	integer bool := b = ANY ('{int2,int4,int8}'::regtype[]);
	v text;
BEGIN
	v := CASE
		WHEN integer THEN i::text
		WHEN (SELECT typcategory FROM pg_type WHERE oid = b) <> 'D' THEN x::text
		WHEN x IN ('Infinity', '-Infinity') THEN x::text
		WHEN x = 'NaN' OR abs(x) > 1e6 THEN NULL
		ELSE (timestamp '2000-01-01 12:00' + x * interval '1 second')::text END;
	EXECUTE format('SELECT %L::%s::text', v, t) INTO v;
	RETURN v;
EXCEPTION WHEN OTHERS THEN
	-- Beyond the type: its limit (integers), the largest float4 or 0.
	IF integer THEN
		RETURN trunc(greatest(least(i::numeric, 2::numeric ^ (8 * typlen - 1) - 1),
							  -(2::numeric ^ (8 * typlen - 1))))::text
			FROM pg_type WHERE oid = b;
	END IF;
	RETURN CASE WHEN b = 'float4'::regtype AND abs(x) > 1 THEN sign(x) * 3e38
		WHEN b = 'float4'::regtype THEN 0 END::text;
END $$;

-- One table a set: key k = 1..n, row k holding the set's kth values; three
-- columns an index, INCLUDE'd after the key.
DO $$
DECLARE
	s record;
	tab text;
	n int;
BEGIN
	FOR s IN SELECT * FROM af_set LOOP
		tab := 'af_s_' || s.ord;
		EXECUTE format('CREATE TABLE %I (k int8, %s)', tab,
					   (SELECT string_agg(format('%I %s', col, typ), ', ' ORDER BY ord) FROM af_col));
		FOR n IN 1 .. greatest(cardinality(s.ints), cardinality(s.floats)) LOOP
			EXECUTE format('INSERT INTO %I VALUES (%s, %s)', tab, n,
						   (SELECT string_agg(format('%L::%s', af_value(typ, s.ints[n], s.floats[n]), typ),
											  ', ' ORDER BY ord) FROM af_col));
		END LOOP;
		FOR n IN 0 .. (SELECT max(ord) - 1 FROM af_col) / 3 LOOP
			EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (k) INCLUDE (%s)',
						   tab || '_' || n, tab,
						   (SELECT string_agg(quote_ident(col), ', ' ORDER BY ord)
							FROM af_col WHERE (ord - 1) / 3 = n));
		END LOOP;
	END LOOP;
END $$;

-- One function over one column of a set: ok, =SQLSTATE, 0A000 where the
-- function refuses the column's type and SQL has the aggregate ('-' where
-- both refuse), with the service and without where they differ.
CREATE FUNCTION af_col_check(s af_set, c af_col, f text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text[];
	d text;
BEGIN
	FOREACH d IN ARRAY '{auto,off}'::text[] LOOP
		r := r || af_check(f, 'af_s_' || s.ord, 'af_s_' || s.ord || '_' || (c.ord - 1) / 3,
						   c.col, af_base(c.typ), '0', '1000', d);
		r[cardinality(r)] := CASE
			WHEN r[cardinality(r)] LIKE 'WRONG(ERROR 0A000, not ERROR %' THEN '-'
			WHEN r[cardinality(r)] LIKE 'WRONG(ERROR 0A000, %' THEN '0A000'
			ELSE r[cardinality(r)] END;
	END LOOP;
	RETURN CASE WHEN r[1] = r[2] THEN r[1] ELSE format('auto:%s/off:%s', r[1], r[2]) END;
END $$;

-- Per set, the columns (the type, d: a domain over it) by outcome of
-- sum, avg, min and max.
SELECT s.name AS set, o.outcome AS "sum avg min max",
	   string_agg(CASE WHEN c.typ = af_base(c.typ) THEN c.typ::text
				  ELSE 'd ' || af_base(c.typ) END, ', ' ORDER BY c.ord) AS columns
FROM af_set s, af_col c,
	 LATERAL (SELECT string_agg(af_col_check(s, c, f), ' ' ORDER BY n) AS outcome
			  FROM unnest('{sum,avg,min,max}'::text[]) WITH ORDINALITY u(f, n)) o
GROUP BY s.ord, s.name, o.outcome
ORDER BY s.ord, min(c.ord);
-- The service answered some of them.
SELECT count(*) > 0 AS mirrors FROM gpubtree_mirrors() WHERE index::regclass::text LIKE 'af\_s\_%';
