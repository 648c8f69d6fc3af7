-- GROUP BY a bucket of the key through the GpubtreeAggregate node: the
-- index's leading column itself, or a monotone expression of it
-- (width_bucket, date_trunc, date_bin, + - * /, casts, floor/ceil/round/
-- trunc, compositions), each bucket a key range.  Generated from the lists
-- below (key types, bucket templates per family of key types, aggregate
-- lists, WHERE shapes), so that a template or key type added there is
-- covered: every combination runs through the node (the other plans
-- disabled, so that it is taken wherever it is offered) and by the ordinary
-- plan (gpubtree.device = off), and the two results must agree as sets of
-- rows (floats within 1e-12 relative).  One line per key type, template
-- and time zone (UTC, and two with DST changes where the template depends
-- on TimeZone); each column says, for the aggregate list "full" (every
-- aggregate of the key and INCLUDE columns), and in column "none" first
-- for count(*) alone:
--   N  the node answered (the GPU service); the same rows as the ordinary plan
--   C  the node was planned; the plan below it answered; the same rows
--   P  no GpubtreeAggregate node; the same rows
--   E  the node was planned; it failed with the ordinary plan's error
--   e  no node; both failed with the same error
--   W  WRONG: the results differ (a WARNING above shows both)
--   G  the node answered, but EXPLAIN's Groups is not the number of groups
-- Shapes: none (the whole table: NULL keys form their own group), range
-- (BETWEEN two keys of the data), any (= ANY of keys of the data, a
-- missing one, a repeat and NULL), param (a PREPAREd statement's
-- parameters under plan_cache_mode = force_generic_plan), extreme (no
-- WHERE, the table with each type's extremes added: limits, infinities,
-- NaN).
-- Mirrors here are built by the first query that asks (the outputs say
-- when), not after CREATE INDEX: that is build_after_create.sql's subject.
SET gpubtree.build_after_create = off;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
SET jit = off;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';

-- Key types: the mirror's (cuda/keytable.h), the family whose templates
-- apply, the key of row g,
-- and extreme values (integer limits, NaN and infinities; for dates and
-- timestamps infinities and the years 1 and 9999, which every template
-- reaches without overflow).  Timestamps crowd around the DST changes of
-- 2021 in America/New_York (Mar 14, Nov 7) and Australia/Lord_Howe (30
-- minutes: Apr 4, Oct 3), in local time (timestamp) and in UTC
-- (timestamptz).
CREATE TABLE gb_type (ord int, name text, typ text, family text, val text,
					  extremes text[], lo text, hi text, p1 text, p2 text, arr text);
INSERT INTO gb_type (ord, name, typ, family, val, extremes) VALUES
	(1, 'int2', 'int2', 'int', '((g * 37) % 401 - 200) * 3', '{-32768,32767}'),
	(2, 'int4', 'int4', 'int', '(g * 7919) % 501 - 250', '{-2147483648,2147483647}'),
	(3, 'int8', 'int8', 'int',
	 'CASE g % 50 WHEN 1 THEN 9007199254740992 + g % 7 - 3 WHEN 2 THEN 1152921504606846976 + g % 5 '
	 'ELSE ((g * 104729) % 401 - 200) * 3 END', '{-9223372036854775808,9223372036854775807}'),
	(4, 'float4', 'float4', 'float',
	 'CASE WHEN g % 101 = 0 THEN ''-0'' WHEN g % 3 = 0 THEN (g % 401 - 200) / 4.0 '
	 'WHEN g % 3 = 1 THEN (g % 301 - 150) / 7.0 ELSE (g % 201 - 100) / 3.3 END',
	 '{NaN,Infinity,-Infinity,3e38,-3e38}'),
	(5, 'float8', 'float8', 'float',
	 'CASE WHEN g % 101 = 0 THEN ''-0'' WHEN g % 3 = 0 THEN (g % 401 - 200) / 4.0 '
	 'WHEN g % 3 = 1 THEN (g % 301 - 150) / 7.0 ELSE (g % 201 - 100) / 3.3 END',
	 '{NaN,Infinity,-Infinity,1e300,-1e300}'),
	(6, 'date', 'date', 'date', 'date ''2020-01-01'' + (g * 7) % 600',
	 '{infinity,-infinity,0001-01-01,9999-12-31}'),
	(7, 'timestamp', 'timestamp', 'timestamp',
	 'CASE g % 10 WHEN 0 THEN timestamp ''2021-03-14 00:30'' WHEN 1 THEN timestamp ''2021-11-07 00:00'' '
	 'WHEN 2 THEN timestamp ''2021-04-04 00:30'' WHEN 3 THEN timestamp ''2021-10-03 01:00'' '
	 'ELSE timestamp ''2020-12-20'' + (g * 7919 % 300) * interval ''1949 minutes'' END '
	 '+ CASE WHEN g % 10 < 4 THEN (g / 10 % 45) * interval ''7 minutes'' ELSE interval ''0'' END',
	 '{infinity,-infinity,"0001-01-01 00:00","9999-12-31 23:59:59.999999"}'),
	(8, 'timestamptz', 'timestamptz', 'timestamptz',
	 'CASE g % 10 WHEN 0 THEN timestamptz ''2021-03-14 05:00+00'' WHEN 1 THEN timestamptz ''2021-11-07 04:00+00'' '
	 'WHEN 2 THEN timestamptz ''2021-04-03 13:00+00'' WHEN 3 THEN timestamptz ''2021-10-02 13:30+00'' '
	 'ELSE timestamptz ''2020-12-20 00:00+00'' + (g * 7919 % 300) * interval ''1949 minutes'' END '
	 '+ CASE WHEN g % 10 < 4 THEN (g / 10 % 45) * interval ''7 minutes'' ELSE interval ''0'' END',
	 '{infinity,-infinity,"0001-01-01 00:00+00","9999-12-31 23:59:59.999999+00"}'),
	(9, 'time', 'time', 'time', 'time ''00:00'' + (g * 7919 % 400) * interval ''217 seconds''',
	 '{00:00,24:00,23:59:59.999999}');

-- Bucket templates of the key k, by family (or key type).  others: outside
-- the supported expressions (not monotone, or not in the list): no node.
CREATE TABLE gb_template (ord serial, families text[], expr text, others bool DEFAULT false);
INSERT INTO gb_template (families, expr) VALUES
	('{int,float,date,timestamp,timestamptz,time}', 'k'),
	('{int}', 'k / 10'), ('{int}', 'k / 7'), ('{int}', 'k / -3'), ('{int}', '(k + 5) / 10'),
	('{int}', 'k / 10 / 3'), ('{int}', 'k + 100'), ('{int}', 'k - 100'), ('{int}', '100 - k'),
	('{int}', 'k * 3'), ('{int}', 'k * -2'), ('{int}', 'k * 0.5'), ('{int}', 'k * 0.25::float8'),
	('{int}', 'width_bucket(k, -500, 500, 10)'), ('{int}', 'width_bucket(k, 500, -500, 7)'),
	('{int}', 'width_bucket(k::numeric, -500, 1000, 9)'), ('{int}', 'width_bucket(k, 0, 1, 1)'),
	('{int}', 'width_bucket(k / 10, -30, 30, 4)'),
	('{int}', 'width_bucket(k, 9007199254740900, 9007199254741100, 5)'),
	('{int}', 'k::float8'), ('{int}', 'k::float4'), ('{int}', 'k::float4::float8'),
	('{int}', 'k::float8::int8'), ('{int}', 'k::numeric'), ('{int}', 'k::int8'), ('{int}', 'k::int2'),
	('{int}', 'floor(k / 10.0)'), ('{int}', 'ceil(k::float8 / 8)'), ('{int}', 'round(k::numeric, -2)'),
	('{int}', 'trunc(k / 3.0)'), ('{int}', '(k / 10) * 10'),
	('{float}', 'floor(k)'), ('{float}', 'ceil(k)'), ('{float}', 'round(k)'), ('{float}', 'trunc(k)'),
	('{float}', 'k * 2'), ('{float}', 'k * -0.5'), ('{float}', 'k / 4'), ('{float}', 'k + 0.5'),
	('{float}', '10 - k'), ('{float}', 'width_bucket(k, -50, 50, 20)'),
	('{float}', 'width_bucket(k, 100, -100, 30)'), ('{float}', 'width_bucket(k::numeric, -50, 50, 9)'),
	('{float}', 'width_bucket(k, -1, 1, 3)'), ('{float}', 'k::float8'), ('{float}', 'k::float4'),
	('{float}', 'k::numeric'), ('{float}', 'k::int4'), ('{float}', 'k::int8'),
	('{float}', 'round(k::numeric, 1)'), ('{float}', 'floor(k / 2.5)'), ('{float}', 'trunc(k * 3)'),
	('{float}', 'floor(k * 10) / 10'),
	('{date}', 'date_trunc(''month'', k)'), ('{date}', 'date_trunc(''week'', k)'),
	('{date}', 'date_trunc(''year'', k::timestamp)'),
	('{date}', 'date_trunc(''quarter'', k, ''Australia/Lord_Howe'')'),
	('{date}', 'k + 7'), ('{date}', 'k - 30'), ('{date}', 'k - date ''2020-01-01'''),
	('{date}', '(k - date ''2020-01-01'') / 7'), ('{date}', 'k::timestamp'), ('{date}', 'k::timestamptz'),
	('{date}', 'date_bin(''7 days'', k::timestamp, timestamp ''2020-01-03'')'),
	('{date}', 'date_bin(''10 days'', k, timestamptz ''2020-01-01 12:00+00'')'),
	('{date}', 'width_bucket((k - date ''2020-01-01'')::float8, 0, 1000, 10)'),
	('{date}', 'k + interval ''1 month'''),
	('{timestamp}', 'date_trunc(''minute'', k)'), ('{timestamp}', 'date_trunc(''hour'', k)'),
	('{timestamp}', 'date_trunc(''day'', k)'), ('{timestamp}', 'date_trunc(''week'', k)'),
	('{timestamp}', 'date_trunc(''month'', k)'), ('{timestamp}', 'date_trunc(''quarter'', k)'),
	('{timestamp}', 'date_trunc(''year'', k)'),
	('{timestamp}', 'date_bin(''15 minutes'', k, timestamp ''2001-01-01 00:07'')'),
	('{timestamp}', 'date_bin(''1 day 2 hours'', k, timestamp ''2021-06-01'')'),
	('{timestamp}', 'k::date'), ('{timestamp}', 'k::timestamptz'),
	('{timestamp}', 'date_trunc(''day'', k::timestamptz)'),
	('{timestamp}', 'date_trunc(''hour'', k, ''America/New_York'')'),
	('{timestamp}', 'k + interval ''1 hour'''), ('{timestamp}', 'k - interval ''1 month'''),
	('{timestamp}', 'date_trunc(''month'', k) + interval ''1 day'''),
	('{timestamp}', 'k::date - date ''2021-01-01'''),
	('{timestamptz}', 'date_trunc(''hour'', k)'), ('{timestamptz}', 'date_trunc(''day'', k)'),
	('{timestamptz}', 'date_trunc(''week'', k)'), ('{timestamptz}', 'date_trunc(''month'', k)'),
	('{timestamptz}', 'date_trunc(''year'', k)'),
	('{timestamptz}', 'date_trunc(''day'', k, ''Australia/Lord_Howe'')'),
	('{timestamptz}', 'date_trunc(''hour'', k, ''UTC'')'),
	('{timestamptz}', 'date_trunc(''day'', k, ''America/New_York'')'),
	('{timestamptz}', 'date_bin(''1 hour'', k, timestamptz ''2021-01-01 00:00+00'')'),
	('{timestamptz}', 'date_bin(''30 minutes'', k, timestamptz ''2021-01-01 00:15+05:30'')'),
	('{timestamptz}', 'date_bin(''1 day'', k, timestamptz ''2021-01-01 00:00+00'')'),
	('{timestamptz}', 'k::date'), ('{timestamptz}', 'k::timestamp'),
	('{timestamptz}', 'date_trunc(''day'', k::timestamp)'), ('{timestamptz}', 'date_trunc(''hour'', k::timestamp)'),
	('{timestamptz}', 'date_bin(''20 minutes'', k::timestamp, timestamp ''2021-01-01'')'),
	('{timestamptz}', 'k + interval ''1 day'''), ('{timestamptz}', 'k - interval ''90 minutes'''),
	('{timestamptz}', 'date_trunc(''month'', k)::date'),
	('{time}', 'k + interval ''1 hour'''), ('{time}', 'k - interval ''30 minutes''');
INSERT INTO gb_template (families, expr, others) VALUES
	('{int}', 'k % 10', true), ('{int}', 'abs(k)', true), ('{int}', 'k * k', true),
	('{int}', '(k / 10) % 3', true), ('{int}', 'k::text', true),
	('{float}', 'abs(k)', true), ('{float}', 'sin(k)', true),
	('{date}', 'extract(dow FROM k)', true), ('{date}', 'to_char(k, ''YYYY-MM'')', true),
	('{timestamp,timestamptz}', 'extract(hour FROM k)', true),
	('{timestamp,timestamptz}', 'k::time', true);

-- Time zones, for the templates that depend on the session's TimeZone.
CREATE TABLE gb_zone (ord int, tz text);
INSERT INTO gb_zone VALUES (1, 'UTC'), (2, 'America/New_York'), (3, 'Australia/Lord_Howe');

-- Does expr of a key of type typ depend on the session (TimeZone): is it
-- not immutable, which CREATE INDEX finds out?  date_trunc with an explicit
-- zone counts as if it did (it is stable in PostgreSQL 15, immutable from
-- 16): the same rows on every version.
CREATE FUNCTION gb_stable(typ text, expr text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	stable bool := false;
BEGIN
	EXECUTE format('CREATE TEMP TABLE gb_probe (k %s)', typ);
	BEGIN
		EXECUTE format('CREATE INDEX ON gb_probe ((%s))', expr);
	EXCEPTION WHEN invalid_object_definition THEN
		stable := true;
	END;
	DROP TABLE gb_probe;
	RETURN stable OR expr ~ 'date_trunc\([^,]*,[^,]*,';
END $$;

-- One table a key type, 1500 rows: NULL keys (every 41st row), NULL
-- values, a row all NULL; gb_x_<type> has the same rows and each extreme
-- value three times.  INCLUDE columns of int and float types (f8: eighths,
-- so that float sums are exact in any order).
DO $$
DECLARE
	t record;
	tab text;
	v record;
BEGIN
	FOR t IN SELECT * FROM gb_type ORDER BY ord LOOP
		tab := 'gb_' || t.name;
		EXECUTE format('CREATE TABLE %I (k %s, i4 int4, i8 int8, f8 float8) WITH (autovacuum_enabled = off)',
					   tab, t.typ);
		EXECUTE format('INSERT INTO %I SELECT CASE WHEN g %% 41 = 0 THEN NULL ELSE (%s)::%s END, '
					   'CASE WHEN g %% 11 = 0 THEN NULL ELSE g %% 300 - 150 END, '
					   'CASE WHEN g %% 13 = 0 THEN NULL ELSE g * 1000003 END, '
					   'CASE WHEN g %% 17 = 0 THEN NULL ELSE (g %% 801 - 400) * 0.125 END '
					   'FROM generate_series(1, 1500) g', tab, t.val, t.typ);
		EXECUTE format('INSERT INTO %I VALUES (NULL, NULL, NULL, NULL)', tab);
		EXECUTE format('CREATE TABLE %I (LIKE %I) WITH (autovacuum_enabled = off)', 'gb_x_' || t.name, tab);
		EXECUTE format('INSERT INTO %I SELECT * FROM %I', 'gb_x_' || t.name, tab);
		EXECUTE format('INSERT INTO %I SELECT e::%s, n, n * 7, n / 4.0 FROM unnest(%L::text[]) e, '
					   'generate_series(1, 3) n', 'gb_x_' || t.name, t.typ, t.extremes);
		EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (k) INCLUDE (i4, i8, f8)', tab || '_k', tab);
		EXECUTE format('CREATE INDEX %I ON %I USING gpubtree (k) INCLUDE (i4, i8, f8)',
					   'gb_x_' || t.name || '_k', 'gb_x_' || t.name);
		-- WHERE bounds from the data: a range, parameters, keys for = ANY.
		EXECUTE format('SELECT percentile_disc(0.2) WITHIN GROUP (ORDER BY k)::text AS lo, '
					   'percentile_disc(0.7) WITHIN GROUP (ORDER BY k)::text AS hi, '
					   'percentile_disc(0.1) WITHIN GROUP (ORDER BY k)::text AS p1, '
					   'percentile_disc(0.6) WITHIN GROUP (ORDER BY k)::text AS p2 FROM %I', tab) INTO v;
		UPDATE gb_type SET lo = v.lo, hi = v.hi, p1 = v.p1, p2 = v.p2 WHERE ord = t.ord;
		EXECUTE format('SELECT (array_agg(k ORDER BY k) || (%L::%s + %s)::%s || NULL::%s || min(k))::text AS arr '
					   'FROM (SELECT k, row_number() OVER (ORDER BY k) AS n '
					   'FROM (SELECT DISTINCT k FROM %I WHERE k IS NOT NULL) d) s WHERE n %% 25 = 1',
					   v.hi, t.typ, CASE t.family WHEN 'int' THEN '1' WHEN 'float' THEN '0.001'
					   WHEN 'date' THEN '1' ELSE 'interval ''1 second''' END, t.typ, t.typ, tab) INTO v;
		UPDATE gb_type SET arr = v.arr WHERE ord = t.ord;
	END LOOP;
END $$;
SELECT format('VACUUM ANALYZE %I, %I', 'gb_' || name, 'gb_x_' || name) FROM gb_type ORDER BY ord \gexec

-- Two results of gb_rows() agree: the same error, or the same rows (in the
-- same order if ordered; otherwise as sets, paired by their column g where
-- they have one), numbers within 1e-12 relative.
CREATE FUNCTION gb_same_row(a jsonb, b jsonb) RETURNS bool LANGUAGE sql IMMUTABLE AS $$
	SELECT (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(a) x) =
		   (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(b) x)
		AND NOT EXISTS (
			SELECT FROM jsonb_each(b) e(name, want)
			WHERE NOT CASE WHEN jsonb_typeof(want) = 'number' AND jsonb_typeof(a -> name) = 'number'
				THEN abs((a ->> name)::numeric - (want #>> '{}')::numeric)
					 <= 1e-12 * abs((want #>> '{}')::numeric)
				ELSE a -> name = want END)
$$;
CREATE FUNCTION gb_sorted(rows jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT jsonb_agg(r ORDER BY r -> 'g', r::text) FROM jsonb_array_elements(rows) r
$$;
CREATE FUNCTION gb_same(got jsonb, want jsonb, ordered bool) RETURNS bool LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN jsonb_typeof(got) <> 'array' OR jsonb_typeof(want) <> 'array' THEN got = want
		WHEN jsonb_array_length(got) <> jsonb_array_length(want) THEN false
		WHEN got = want OR NOT ordered AND gb_sorted(got) = gb_sorted(want) THEN true
		ELSE NOT EXISTS (
			SELECT FROM (SELECT r, row_number() OVER (ORDER BY CASE WHEN ordered THEN o END, r -> 'g', r::text) AS n
						 FROM jsonb_array_elements(got) WITH ORDINALITY a(r, o)) x
			JOIN (SELECT r, row_number() OVER (ORDER BY CASE WHEN ordered THEN o END, r -> 'g', r::text) AS n
				  FROM jsonb_array_elements(want) WITH ORDINALITY b(r, o)) y USING (n)
			WHERE NOT gb_same_row(x.r, y.r))
	END
$$;

-- q's rows as a jsonb array of objects, or {"error": "SQLSTATE: message"}.
CREATE FUNCTION gb_rows(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	r record;
	acc jsonb[] := '{}';
BEGIN
	FOR r IN EXECUTE q LOOP
		acc := acc || to_jsonb(r);
	END LOOP;
	RETURN to_jsonb(acc);
EXCEPTION WHEN OTHERS THEN
	RETURN jsonb_build_object('error', SQLSTATE || ': ' || SQLERRM);
END $$;

-- The prepared statement gb_p: dropped, then made from prep (unless NULL).
-- (PREPARE is not undone by a rolled-back subtransaction.)
CREATE FUNCTION gb_prepare(prep text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT FROM pg_prepared_statements WHERE name = 'gb_p') THEN
		DEALLOCATE gb_p;
	END IF;
	IF prep IS NOT NULL THEN
		EXECUTE prep;
	END IF;
END $$;

-- q through the node (the other plans disabled): how it was answered
-- (node, child, plan, or error where the node was planned and EXPLAIN
-- ANALYZE failed), the node's Groups, and the rows.  prep: a PREPARE that
-- q executes.
CREATE FUNCTION gb_node(prep text, q text, OUT how text, OUT groups bigint, OUT result jsonb)
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
SET enable_bitmapscan = off SET plan_cache_mode = force_generic_plan AS $$
DECLARE
	plan jsonb;
	node jsonb;
BEGIN
	PERFORM gb_prepare(prep);
	BEGIN
		EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q INTO plan;
	EXCEPTION WHEN OTHERS THEN
		EXECUTE 'EXPLAIN (FORMAT JSON, COSTS OFF) ' || q INTO plan;
	END;
	node := jsonb_path_query_first(plan, 'strict $.** ? (@."Custom Plan Provider" == "GpubtreeAggregate")');
	how := CASE WHEN node IS NULL THEN 'plan'
		WHEN node ->> 'Answered by' LIKE 'GPU service%' THEN 'node'
		WHEN node ? 'Answered by' THEN 'child' ELSE 'error' END;
	groups := (node ->> 'Groups')::bigint;
	result := gb_rows(q);
	PERFORM gb_prepare(NULL);
END $$;

-- The same by the ordinary plan.
CREATE FUNCTION gb_plain(prep text, q text) RETURNS jsonb LANGUAGE plpgsql
SET gpubtree.device = off SET plan_cache_mode = force_generic_plan AS $$
DECLARE
	result jsonb;
BEGIN
	PERFORM gb_prepare(prep);
	result := gb_rows(q);
	PERFORM gb_prepare(NULL);
	RETURN result;
END $$;

-- One check: q (after prep) through the node against the ordinary plan; its
-- code (see the top), and a WARNING with both results where they differ.
-- The node's Groups must be the number of rows unless HAVING, LIMIT or
-- DISTINCT drops some.
CREATE FUNCTION gb_check(label text, prep text, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	query text := coalesce(prep, q);
	n record;
	want jsonb;
	problem text;
BEGIN
	n := gb_node(prep, q);
	want := gb_plain(prep, q);
	IF NOT gb_same(n.result, want, query ~* 'ORDER BY') THEN
		problem := 'results differ';
	ELSIF n.how = 'error' AND NOT want ? 'error' THEN
		problem := 'EXPLAIN ANALYZE failed, the query did not';
	ELSIF n.how = 'node' AND query !~* '(HAVING|LIMIT|DISTINCT)' AND n.groups IS DISTINCT FROM jsonb_array_length(want) THEN
		RAISE WARNING '%', format('GROUPS %s: %s%s: Groups: %s, %s groups', label, prep || '; ', q,
								  n.groups, jsonb_array_length(want));
		RETURN 'G';
	END IF;
	IF problem IS NOT NULL THEN
		RAISE WARNING '%', format('WRONG %s: %s%s: %s: the node (%s) %s, the ordinary plan %s', label,
								  prep || '; ', q, problem, n.how, left(n.result::text, 600),
								  left(want::text, 600));
		RETURN 'W';
	END IF;
	IF want ? 'error' THEN
		RETURN CASE WHEN n.how = 'plan' THEN 'e' ELSE 'E' END;
	END IF;
	RETURN CASE n.how WHEN 'node' THEN 'N' WHEN 'child' THEN 'C' ELSE 'P' END;
END $$;

-- The aggregate lists: count(*) alone, and every aggregate of the key and
-- the INCLUDE columns (sum and avg of the key for integer keys).
CREATE FUNCTION gb_aggs(list text, family text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE list WHEN 'count' THEN 'count(*) AS n'
		ELSE 'count(*) AS n, count(i4) AS c4, sum(i4) AS s4, avg(i4) AS a4, max(i4) AS x4, '
			 'sum(i8) AS s8, avg(i8) AS a8, min(i8) AS m8, sum(f8) AS sf, avg(f8) AS af, '
			 'min(f8) AS mf, max(f8) AS xf, count(k) AS ck, min(k) AS mk, max(k) AS xk'
			 || CASE WHEN family = 'int' THEN ', sum(k) AS sk, avg(k) AS ak' ELSE '' END END
$$;

-- One column of a line: the template expr on key type t under time zone
-- tz, in one WHERE shape, for the full aggregate list (GROUP BY the
-- expression itself), and without WHERE first for count(*) (GROUP BY 1).
CREATE FUNCTION gb_cell(t gb_type, tab text, expr text, tz text, shape text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	old_tz text := current_setting('TimeZone');
	list text;
	cond text;
	q text;
	prep text;
	codes text := '';
BEGIN
	PERFORM set_config('TimeZone', tz, true);
	cond := CASE shape
		WHEN 'range' THEN format(' WHERE k BETWEEN %L::%s AND %L::%s', t.lo, t.typ, t.hi, t.typ)
		WHEN 'any' THEN format(' WHERE k = ANY (%L::%s[])', t.arr, t.typ)
		WHEN 'param' THEN ' WHERE k >= $1 AND k < $2' ELSE '' END;
	FOREACH list IN ARRAY CASE WHEN shape = 'none' THEN '{count,full}'::text[] ELSE '{full}' END LOOP
		q := format('SELECT %s AS g, %s FROM %I%s GROUP BY %s', expr, gb_aggs(list, t.family), tab, cond,
					CASE list WHEN 'count' THEN '1' ELSE expr END);
		prep := NULL;
		IF shape = 'param' THEN
			prep := format('PREPARE gb_p(%s, %s) AS %s', t.typ, t.typ, q);
			q := format('EXECUTE gb_p(%L, %L)', t.p1, t.p2);
		END IF;
		codes := codes || gb_check(format('%s, %s, %s, %s', tab, tz, shape, list), prep, q);
	END LOOP;
	PERFORM set_config('TimeZone', old_tz, true);
	RETURN codes;
END $$;

-- The lines of key types matching the LIKE pattern types, on their tables
-- (prefix || name) and in the given shapes ('-' for the others).
CREATE FUNCTION gb_lines(types text, prefix text, shapes text[])
RETURNS TABLE (key text, "TimeZone" text, "GROUP BY" text, "none" text, "range" text, "any" text,
			   "param" text, "extreme" text) LANGUAGE sql AS $$
	SELECT t.name, z.tz, p.expr,
		   CASE WHEN 'none' = ANY (shapes) THEN gb_cell(t, prefix || t.name, p.expr, z.tz, 'none') ELSE '-' END,
		   CASE WHEN 'range' = ANY (shapes) THEN gb_cell(t, prefix || t.name, p.expr, z.tz, 'range') ELSE '-' END,
		   CASE WHEN 'any' = ANY (shapes) THEN gb_cell(t, prefix || t.name, p.expr, z.tz, 'any') ELSE '-' END,
		   CASE WHEN 'param' = ANY (shapes) THEN gb_cell(t, prefix || t.name, p.expr, z.tz, 'param') ELSE '-' END,
		   CASE WHEN 'extreme' = ANY (shapes) THEN gb_cell(t, 'gb_x_' || t.name, p.expr, z.tz, 'extreme') ELSE '-' END
	FROM gb_type t
	JOIN gb_template p ON t.name = ANY (p.families) OR t.family = ANY (p.families)
	CROSS JOIN LATERAL (SELECT gb_stable(t.typ, p.expr) AS stable) s
	JOIN gb_zone z ON s.stable OR z.tz = 'UTC'
	WHERE t.name LIKE types
	ORDER BY t.ord, p.others, p.ord, z.ord
$$;

-- Every key type x template x time zone x WHERE shape x aggregate list.
SELECT * FROM gb_lines('%', 'gb_', '{none,range,any,param,extreme}');

-- One query (after prep) through the node and by the ordinary plan.
CREATE FUNCTION gb_one(q text, prep text DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
	SELECT gb_check('', prep, q)
$$;

-- HAVING, ORDER BY, LIMIT, DISTINCT and expressions of the aggregates and
-- of the group key run above the node; the group key need not be output;
-- minutes across DST changes, where a local bucket is two key ranges.
SET TimeZone = 'America/New_York';
SELECT q, gb_one(q) FROM unnest(ARRAY[
	'SELECT k / 10 AS g, count(*) AS n, sum(i4) AS s FROM gb_int4 GROUP BY 1 HAVING count(*) > 3',
	'SELECT k / 10 AS g, count(*) AS n FROM gb_int4 GROUP BY 1 HAVING sum(i4) IS NULL OR min(f8) < -45',
	'SELECT k / 10 AS g, count(*) AS n, max(i8) AS m FROM gb_int4 GROUP BY 1 ORDER BY g DESC NULLS LAST LIMIT 5',
	'SELECT k / 10 AS g, count(*) AS n FROM gb_int4 WHERE k > 0 GROUP BY 1 ORDER BY n DESC, g LIMIT 4 OFFSET 2',
	'SELECT count(*) AS n, sum(i4) AS s FROM gb_int4 GROUP BY k / 10',
	'SELECT DISTINCT count(*) AS n FROM gb_int4 GROUP BY k / 10',
	'SELECT (k / 10) * 10 AS g, count(*) * 2 + 1 AS n2, sum(i4) / count(*) AS r FROM gb_int4 GROUP BY k / 10',
	'SELECT width_bucket(k, -500, 500, 10) AS g, count(*) AS n FROM gb_int8 GROUP BY 1 ORDER BY 1',
	'SELECT width_bucket(k, -500, 500, 10) AS g, count(*) AS n FROM gb_int8 GROUP BY 1 HAVING width_bucket(k, -500, 500, 10) BETWEEN 1 AND 10',
	'SELECT date_trunc(''day'', k) AS g, count(*) AS n, sum(i8) AS s FROM gb_timestamptz GROUP BY 1 HAVING count(*) > 10 ORDER BY g',
	'SELECT date_trunc(''day'', k) AS g, avg(f8) AS a FROM gb_timestamptz WHERE k >= ''2021-11-06'' AND k < ''2021-11-09'' GROUP BY 1 ORDER BY g',
	'SELECT k AS g, count(*) AS n FROM gb_int2 WHERE k IS NOT NULL GROUP BY 1',
	'SELECT k AS g, count(*) AS n FROM gb_int2 WHERE k > 0 AND k <= 200 AND k <> 7 GROUP BY 1',
	-- local minutes across the fall-back hour: each bucket two key ranges
	'SELECT date_trunc(''minute'', k::timestamp) AS g, count(*) AS n, sum(i4) AS s FROM gb_timestamptz WHERE k BETWEEN ''2021-11-07 04:00+00'' AND ''2021-11-07 08:00+00'' GROUP BY 1',
	'SELECT date_trunc(''minute'', k, ''Australia/Lord_Howe'') AS g, count(*) AS n FROM gb_timestamptz WHERE k BETWEEN ''2021-04-03 13:00+00'' AND ''2021-04-03 17:00+00'' GROUP BY 1'
]) q;

-- Beyond one GROUP BY bucket of the key: an INCLUDE column, two
-- expressions, grouping sets, DISTINCT and ordered aggregates, bucket
-- arguments that are not constants (the node where it takes the shape;
-- else the ordinary plan).
SELECT q, gb_one(q) FROM unnest(ARRAY[
	'SELECT i4 AS g, count(*) AS n FROM gb_int4 WHERE k > 0 GROUP BY 1',
	'SELECT k / 10 AS g, i4 / 10 AS h, count(*) AS n FROM gb_int4 GROUP BY 1, 2',
	'SELECT k / 10 AS g, k / 100 AS h, count(*) AS n FROM gb_int4 GROUP BY 1, 2',
	'SELECT k / 10 AS g, count(*) AS n FROM gb_int4 GROUP BY GROUPING SETS ((k / 10), ())',
	'SELECT k / 10 AS g, count(*) AS n FROM gb_int4 GROUP BY ROLLUP (k / 10)',
	'SELECT k / 10 AS g, count(DISTINCT i4) AS n FROM gb_int4 GROUP BY 1',
	'SELECT k / 10 AS g, count(*) FILTER (WHERE i4 > 0) AS n FROM gb_int4 GROUP BY 1',
	'SELECT k / 10 AS g, count(*) AS n FROM gb_int4 WHERE i4 > 0 GROUP BY 1',
	'SELECT k / i4 AS g, count(*) AS n FROM gb_int4 GROUP BY 1',
	'SELECT date_trunc(CASE WHEN i4 > 0 THEN ''day'' ELSE ''hour'' END, k) AS g, count(*) AS n FROM gb_timestamptz GROUP BY 1',
	'SELECT k / 10 AS g, string_agg(i4::text, '','' ORDER BY i4) AS l FROM gb_int4 GROUP BY 1'
]) q;

-- Parameters inside the bucket expression (generic plans), and in WHERE.
SELECT p.prep, e.exec, gb_one(e.exec, p.prep) FROM (VALUES
	(1, 'PREPARE gb_p(float8, float8, int) AS SELECT width_bucket(k, $1, $2, $3) AS g, count(*) AS n, sum(i4) AS s FROM gb_int8 GROUP BY 1',
	 '{"EXECUTE gb_p(-500, 500, 10)","EXECUTE gb_p(500, -500, 3)","EXECUTE gb_p(0, 10, 0)","EXECUTE gb_p(5, 5, 3)"}'::text[]),
	(2, 'PREPARE gb_p(int) AS SELECT k / $1 AS g, count(*) AS n, min(f8) AS m FROM gb_int4 GROUP BY 1',
	 '{"EXECUTE gb_p(10)","EXECUTE gb_p(-7)","EXECUTE gb_p(0)"}'),
	(3, 'PREPARE gb_p(int4, int4, int4) AS SELECT k / $3 AS g, count(*) AS n FROM gb_int4 WHERE k BETWEEN $1 AND $2 GROUP BY 1',
	 '{"EXECUTE gb_p(-100, 400, 25)","EXECUTE gb_p(400, -100, 25)","EXECUTE gb_p(-100, 400, 0)","EXECUTE gb_p(5000, 6000, 0)"}'),
	(4, 'PREPARE gb_p(text) AS SELECT date_trunc($1, k) AS g, count(*) AS n, max(i4) AS m FROM gb_timestamptz GROUP BY 1',
	 '{"EXECUTE gb_p(''day'')","EXECUTE gb_p(''month'')","EXECUTE gb_p(''fortnight'')"}'),
	(5, 'PREPARE gb_p(interval, timestamptz) AS SELECT date_bin($1, k, $2) AS g, count(*) AS n FROM gb_timestamptz GROUP BY 1',
	 '{"EXECUTE gb_p(''2 hours'', ''2021-01-01 00:30+00'')","EXECUTE gb_p(''0 days'', ''2021-01-01'')","EXECUTE gb_p(''1 month'', ''2021-01-01'')"}'),
	(6, 'PREPARE gb_p(text, text) AS SELECT date_trunc($1, k, $2) AS g, count(*) AS n FROM gb_timestamptz GROUP BY 1',
	 '{"EXECUTE gb_p(''day'', ''Australia/Lord_Howe'')","EXECUTE gb_p(''hour'', ''America/New_York'')"}')
) p(ord, prep, execs), unnest(p.execs) WITH ORDINALITY e(exec, ord)
ORDER BY p.ord, e.ord;

-- Expression errors: PostgreSQL's error where a row is visible; no error
-- where none is (a range without rows, an empty table, a table whose rows
-- are all deleted but not vacuumed).
CREATE TABLE gb_e_int4 (LIKE gb_int4) WITH (autovacuum_enabled = off);
CREATE INDEX gb_e_int4_k ON gb_e_int4 USING gpubtree (k) INCLUDE (i4, i8, f8);
CREATE TABLE gb_e_timestamptz (LIKE gb_timestamptz) WITH (autovacuum_enabled = off);
CREATE INDEX gb_e_timestamptz_k ON gb_e_timestamptz USING gpubtree (k) INCLUDE (i4, i8, f8);
CREATE TABLE gb_d_int4 WITH (autovacuum_enabled = off) AS SELECT * FROM gb_int4;
CREATE INDEX gb_d_int4_k ON gb_d_int4 USING gpubtree (k) INCLUDE (i4, i8, f8);
CREATE TABLE gb_d_timestamptz WITH (autovacuum_enabled = off) AS SELECT * FROM gb_timestamptz;
CREATE INDEX gb_d_timestamptz_k ON gb_d_timestamptz USING gpubtree (k) INCLUDE (i4, i8, f8);
VACUUM ANALYZE gb_e_int4, gb_e_timestamptz, gb_d_int4, gb_d_timestamptz;
SELECT gpubtree_count('gb_d_int4_k', -1000000, 1000000) AS builds_the_mirror;
SELECT gpubtree_count('gb_d_timestamptz_k', '-infinity'::timestamptz, 'infinity'::timestamptz) AS builds_the_mirror;
DELETE FROM gb_d_int4;
DELETE FROM gb_d_timestamptz;
SELECT e.expr, c.cond, s.tab, gb_one(format('SELECT %s AS g, count(*) AS n, sum(i4) AS s FROM %I%s GROUP BY 1',
										  e.expr, s.tab, c.cond)) AS code
FROM (VALUES (1, 'int4', 'k / 0'), (2, 'int4', 'width_bucket(k, 0, 10, 0)'),
			 (3, 'int4', 'width_bucket(k, 5, 5, 10)'), (4, 'int4', 'k::int2 * 1000::int2'),
			 (5, 'timestamptz', 'date_trunc(''fortnight'', k)'),
			 (6, 'timestamptz', 'date_bin(''1 month'', k, ''2021-01-01'')'),
			 (7, 'timestamptz', 'date_bin(''0 days'', k, ''2021-01-01'')')) e(ord, typ, expr)
CROSS JOIN (VALUES (1, ''), (2, ' WHERE k > ''1000000''')) c(ord, cond)
CROSS JOIN LATERAL (VALUES (1, 'gb_' || e.typ), (2, 'gb_e_' || e.typ), (3, 'gb_d_' || e.typ)) s(ord, tab)
WHERE c.cond = '' OR e.typ = 'int4'
ORDER BY e.ord, c.ord, s.ord;
-- Every template on the empty and the all-deleted tables.
SELECT * FROM gb_lines('int4', 'gb_e_', '{none,range,any,param}');
SELECT * FROM gb_lines('timestamptz', 'gb_d_', '{none,range,any,param}');

-- The transaction's own uncommitted changes: keys moved between buckets and
-- across DST changes, to and from NULL, deleted, inserted, and a
-- rolled-back savepoint.
BEGIN;
UPDATE gb_int4 SET k = k + 37 WHERE k BETWEEN -200 AND 0;
UPDATE gb_int4 SET k = NULL WHERE k BETWEEN 300 AND 330;
UPDATE gb_int4 SET i4 = i4 + 1000, f8 = -f8 WHERE k BETWEEN 100 AND 200;
DELETE FROM gb_int4 WHERE k % 5 = 0;
INSERT INTO gb_int4 SELECT CASE WHEN g % 4 = 0 THEN NULL ELSE g * 13 - 700 END, g, g, g / 8.0
FROM generate_series(1, 120) g;
SAVEPOINT s;
DELETE FROM gb_int4 WHERE k > 0;
ROLLBACK TO SAVEPOINT s;
UPDATE gb_timestamptz SET k = k + interval '1 hour' WHERE k BETWEEN '2021-11-07 05:00+00' AND '2021-11-07 07:00+00';
UPDATE gb_timestamptz SET k = k - interval '1 day' WHERE k BETWEEN '2021-04-03 14:00+00' AND '2021-04-03 16:00+00';
DELETE FROM gb_timestamptz WHERE i4 % 3 = 0;
INSERT INTO gb_timestamptz SELECT timestamptz '2021-03-14 06:30+00' + g * interval '3 minutes', g, NULL, g
FROM generate_series(1, 40) g;
SELECT * FROM gb_lines('int4', 'gb_', '{none,range,any,param}');
SELECT * FROM gb_lines('timestamptz', 'gb_', '{none,range,any,param}');
ROLLBACK;

-- EXPLAIN: the node's Group Key, and with ANALYZE its Groups.  The node's
-- own lines only: the ordinary plan below it differs between versions.
CREATE FUNCTION gb_explain(q text) RETURNS SETOF text LANGUAGE plpgsql
SET enable_seqscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
SET enable_bitmapscan = off AS $$
DECLARE
	line text;
	node_indent int := -1;
BEGIN
	FOR line IN EXECUTE q LOOP
		CONTINUE WHEN line ~ '^\s*(Index Searches: \d+|Disabled: true)$';
		IF node_indent >= 0 AND line ~ '^\s*->' AND
			length(substring(line FROM '^\s*')) > node_indent THEN
			EXIT;
		END IF;
		IF node_indent < 0 AND line ~ 'Custom Scan \(GpubtreeAggregate\)' THEN
			node_indent := length(substring(line FROM '^\s*'));
		END IF;
		IF node_indent >= 0 THEN
			RETURN NEXT regexp_replace(line, '(rows=\d+)\.00 ', '\1 ', 'g');
		END IF;
	END LOOP;
	IF node_indent < 0 THEN
		RETURN NEXT 'no GpubtreeAggregate node';
	END IF;
END $$;
SELECT gb_explain('EXPLAIN (COSTS OFF) SELECT width_bucket(k, -500, 500, 10), count(*), sum(i4) FROM gb_int8 WHERE k > 0 GROUP BY 1');
SELECT gb_explain('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT date_trunc(''day'', k), count(*), avg(f8) FROM gb_timestamptz WHERE k BETWEEN ''2021-11-01'' AND ''2021-11-10'' GROUP BY 1');
SELECT gb_explain('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT k / 100 AS g, count(*) FROM gb_int4 GROUP BY 1 HAVING count(*) > 1 ORDER BY 1 LIMIT 3');
SELECT gb_explain('EXPLAIN (COSTS OFF) SELECT k % 10, count(*) FROM gb_int4 GROUP BY 1');
RESET TimeZone;

SELECT format('DROP TABLE %I, %I', 'gb_' || name, 'gb_x_' || name) FROM gb_type ORDER BY ord \gexec
DROP TABLE gb_e_int4, gb_e_timestamptz, gb_d_int4, gb_d_timestamptz;
DROP FUNCTION gb_lines, gb_cell, gb_one, gb_check, gb_node, gb_plain, gb_prepare, gb_rows, gb_same,
	gb_same_row, gb_sorted, gb_aggs, gb_stable, gb_explain;
DROP TABLE gb_template, gb_zone, gb_type;
