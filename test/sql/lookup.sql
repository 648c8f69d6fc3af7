-- Rows of many keys through the GpubtreeLookup node: k = ANY(array) with the
-- array a constant, a parameter of a generic plan, an InitPlan or a PL/pgSQL
-- variable, and the rows of a key range; and joins that probe the index
-- with another table's keys, the GpubtreeJoin node.  For
-- every key type of the access method (from its operator classes, so that a
-- new type is covered by itself), every query form and every kind of array,
-- the rows equal those of the ordinary plan (gpubtree.device = off), and
-- EXPLAIN ANALYZE says who answered: the service for many keys, nbtree for
-- fewer than gpubtree.min_gpu_batch, nothing for a NULL array.  The tables
-- have updated and deleted rows that no VACUUM has removed, so the mirror's
-- visibility decisions are compared too.
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;

-- The key types, and how to make the n-th value of each.
CREATE TABLE lk_types AS
SELECT c.opcintype::regtype AS typ,
	   CASE WHEN c.opcintype = 'time'::regtype THEN format('(time ''00:00'' + (%%s) * interval ''1 second'')::%s', c.opcintype::regtype)
			WHEN t.typcategory = 'D' THEN format('(timestamp ''2000-01-01'' + (%%s) * interval ''1 day'')::%s', c.opcintype::regtype)
			ELSE format('(%%s)::%s', c.opcintype::regtype) END AS make
FROM pg_opclass c JOIN pg_type t ON t.oid = c.opcintype
WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'gpubtree') AND c.opcdefault;

-- One table per type: keys 0..9999 step 3 (some twice), NULL keys, an INCLUDE
-- payload, a column the index does not hold; then updates and deletes.
CREATE FUNCTION lk_setup(typ regtype, make text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	t text := 'lk_' || replace(typ::text, ' ', '_');
BEGIN
	EXECUTE format('CREATE TABLE %I (k %s, v int8, f float8, w text)', t, typ);
	EXECUTE format('INSERT INTO %I SELECT %s, g, g / 4.0, ''w'' || g FROM generate_series(0, 9999, 3) g',
				   t, format(make, 'g % 30000'));
	EXECUTE format('INSERT INTO %I SELECT %s, -g, NULL, NULL FROM generate_series(0, 3000, 9) g',
				   t, format(make, 'g'));
	EXECUTE format('INSERT INTO %I SELECT NULL, g, g, ''null'' FROM generate_series(1, 50) g', t);
	EXECUTE format('CREATE INDEX ON %I USING gpubtree (k) INCLUDE (v, f)', t);
	-- The probe keys: 2000 distinct, half of them present, each twice.
	EXECUTE format('CREATE TABLE %I AS SELECT %s AS a FROM generate_series(1, 2000) g, generate_series(1, 2)',
				   t || '_probe', format(make, 'g * 3 + (g % 2)'));
END $$;
SELECT lk_setup(typ, make) FROM lk_types;
SELECT format('VACUUM ANALYZE %I, %I', 'lk_' || replace(typ::text, ' ', '_'),
			  'lk_' || replace(typ::text, ' ', '_') || '_probe') FROM lk_types \gexec
SELECT format('UPDATE %I SET v = v + 1000000 WHERE v %% 17 = 0', 'lk_' || replace(typ::text, ' ', '_')),
	   format('DELETE FROM %I WHERE v %% 23 = 0', 'lk_' || replace(typ::text, ' ', '_'))
FROM lk_types \gexec

-- answered(query): what the GpubtreeLookup or GpubtreeJoin node says
-- answered it.
CREATE FUNCTION answered(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	found bool := false;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		found := found OR line LIKE '%GpubtreeLookup%' OR line LIKE '%GpubtreeJoin%';
		IF line LIKE '%Answered by%' AND found THEN
			RETURN regexp_replace(trim(line), 'Answered by: ', '');
		END IF;
	END LOOP;
	RETURN CASE WHEN found THEN 'not run' ELSE 'no lookup node' END;
END $$;

-- same(query): its rows, sorted, equal gpubtree.device = off's.  Read row
-- by row, so that the query may be an EXECUTE.
CREATE FUNCTION rows_of(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
	r record;
	out text[] := '{}';
BEGIN
	FOR r IN EXECUTE q LOOP
		out := out || r::text;
	END LOOP;
	RETURN ARRAY(SELECT x FROM unnest(out) x ORDER BY x);
END $$;
CREATE FUNCTION same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	a text[] := rows_of(q);
	b text[];
BEGIN
	PERFORM set_config('gpubtree.device', 'off', true);
	b := rows_of(q);
	PERFORM set_config('gpubtree.device', 'auto', true);
	RETURN CASE WHEN a = b THEN 'same, ' || cardinality(a) || ' rows' ELSE 'DIFFERENT' END;
END $$;

-- The arrays, as SQL expressions over a type's probe table.
CREATE TABLE lk_arrays (name text, expr text);
INSERT INTO lk_arrays VALUES
	('4000 keys, 2000 distinct', 'ARRAY(SELECT a FROM %1$I)'),
	('NULL elements among them', 'ARRAY(SELECT CASE WHEN hashtext(a::text) %% 3 = 0 THEN NULL ELSE a END FROM %1$I)'),
	('3 keys', 'ARRAY(SELECT a FROM %1$I LIMIT 3)'),
	('empty', 'ARRAY(SELECT a FROM %1$I LIMIT 0)'),
	('NULL', '(SELECT NULL::%2$s[])::%2$s[]');

-- Every type x array: a generic plan's parameter, a constant (a custom
-- plan), an InitPlan; rows from the index's columns and from the heap.
CREATE FUNCTION lk_check(typ regtype, arr text, form text) RETURNS TABLE (answered text, result text)
LANGUAGE plpgsql AS $$
DECLARE
	t text := 'lk_' || replace(typ::text, ' ', '_');
	a text := format(arr, t || '_probe', typ);
	lit text;
	q text;
BEGIN
	EXECUTE format('SELECT quote_nullable((%s)::text)', a) INTO lit;
	IF form = 'generic plan' THEN
		EXECUTE format('PREPARE lk_p(%s[]) AS SELECT k, v, f FROM %I WHERE k = ANY($1)', typ, t);
		q := format('EXECUTE lk_p(%s)', lit);
		PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
		answered := answered(q);
		result := same(q);
		PERFORM set_config('plan_cache_mode', 'auto', true);
		DEALLOCATE lk_p;
		RETURN NEXT;
		RETURN;
	ELSIF form = 'constant' THEN
		q := format('SELECT k, v FROM %I WHERE k = ANY(%s::%s[])', t, lit, typ);
	ELSIF form = 'InitPlan' THEN
		q := format('SELECT k, v FROM %I WHERE k = ANY(%s)', t, a);
	ELSIF form = 'InitPlan, heap columns' THEN
		q := format('SELECT k, w FROM %I WHERE k = ANY(%s) AND w <> ''w3''', t, a);
	END IF;
	answered := answered(q);
	result := same(q);
	RETURN NEXT;
END $$;

SELECT typ, a.name AS array, form, c.*
FROM lk_types, lk_arrays a,
	 unnest(ARRAY['generic plan', 'constant', 'InitPlan', 'InitPlan, heap columns']) form,
	 LATERAL lk_check(typ, a.expr, form) c
ORDER BY typ::text, a.name, form;

-- The generic plan really was generic, and still chose the node.
SET plan_cache_mode = force_generic_plan;
PREPARE lk_g(int8[]) AS SELECT k, v FROM lk_bigint WHERE k = ANY($1);
EXPLAIN (COSTS OFF) EXECUTE lk_g('{1,2,3}');
SELECT generic_plans > 0 AS generic FROM pg_prepared_statements WHERE name = 'lk_g';
DEALLOCATE lk_g;
RESET plan_cache_mode;

-- Rows of a key range (no array): every type x range form x order (none,
-- ORDER BY k, ORDER BY k DESC), at the default gpubtree.min_gpu_batch (a
-- form estimated at fewer rows has no lookup node) and at 1 (every form has
-- one; the node then decides at run time).  In order, the keys come in the
-- ordinary plan's sequence, and EXPLAIN says what ordered them (the lookup
-- node itself, or a Sort above it, or nbtree's ordered scan).
CREATE TABLE lk_ranges (name text, cond text, params text);
INSERT INTO lk_ranges VALUES
	('BETWEEN', 'k BETWEEN %1$s AND %2$s', NULL),
	('> and <=', 'k > %1$s AND k <= %2$s', NULL),
	('>= alone', 'k >= %1$s', NULL),
	('narrow', 'k BETWEEN %1$s AND %1$s', NULL),
	('empty (low above high)', 'k BETWEEN %2$s AND %1$s', NULL),
	('an InitPlan bound', 'k >= (SELECT %1$s) AND k < %2$s', NULL),
	('and an INCLUDE column', 'k BETWEEN %1$s AND %2$s AND f < 1500', NULL),
	('and = ANY', 'k < %2$s AND k = ANY(ARRAY(SELECT a FROM %3$I))', NULL),
	('generic plan', 'k BETWEEN $1 AND $2', '%1$s, %2$s'),
	('generic plan, NULL bound', 'k BETWEEN $1 AND $2', 'NULL, %2$s');

-- keys_of(q): the keys of q's rows, in the order they came.
CREATE FUNCTION keys_of(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
	r record;
	out text[] := '{}';
BEGIN
	FOR r IN EXECUTE q LOOP
		out := out || (to_jsonb(r) ->> 'k');	-- (r.k: one type a session)
	END LOOP;
	RETURN out;
END $$;
-- ordered_by(q): what puts q's rows in order, from its plan.
CREATE FUNCTION ordered_by(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line LIKE '%key order%' THEN
			RETURN 'the lookup';
		ELSIF line LIKE '%Sort%' THEN
			RETURN 'a Sort';
		ELSIF line LIKE '%Index%Scan%' THEN
			RETURN 'an index scan';
		END IF;
	END LOOP;
	RETURN 'nothing';
END $$;

CREATE FUNCTION lk_range_check(typ regtype, make text, r lk_ranges, batch int, ord text)
RETURNS TABLE (answered text, result text, ordered text) LANGUAGE plpgsql AS $$
DECLARE
	t text := 'lk_' || replace(typ::text, ' ', '_');
	lo text := format(make, '600');
	hi text := format(make, '8100');
	q text;
	a text[];
	b text[];
BEGIN
	PERFORM set_config('gpubtree.min_gpu_batch', batch::text, true);
	IF r.params IS NOT NULL THEN
		EXECUTE format('PREPARE lk_r(%s, %s) AS SELECT k, v, f FROM %I WHERE %s %s',
					   typ, typ, t, r.cond, ord);
		q := format('EXECUTE lk_r(%s)', format(r.params, lo, hi));
		PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
	ELSE
		q := format('SELECT k, v, f FROM %I WHERE %s %s', t,
					format(r.cond, lo, hi, t || '_probe'), ord);
	END IF;
	answered := answered(q);
	result := same(q);
	IF ord <> '' THEN
		a := keys_of(q);
		PERFORM set_config('gpubtree.device', 'off', true);
		b := keys_of(q);
		PERFORM set_config('gpubtree.device', 'auto', true);
		ordered := CASE WHEN a = b THEN 'in order' ELSE 'OUT OF ORDER' END ||
			', by ' || ordered_by(q);
	END IF;
	IF r.params IS NOT NULL THEN
		PERFORM set_config('plan_cache_mode', 'auto', true);
		DEALLOCATE lk_r;
	END IF;
	PERFORM set_config('gpubtree.min_gpu_batch', '1024', true);
	RETURN NEXT;
END $$;

SELECT typ, r.name AS range, batch, ord, c.*
FROM lk_types, lk_ranges r, unnest(ARRAY[1024, 1]) batch,
	 unnest(ARRAY['', 'ORDER BY k', 'ORDER BY k DESC']) ord,
	 LATERAL lk_range_check(typ, make, r, batch, ord) c
ORDER BY typ::text, r.name, batch, ord;

-- An index of two key columns: the node's rows come in the leading
-- column's order alone, so ORDER BY a, b takes a Sort (or an Incremental
-- Sort above the node's order by a), as does a leading column fixed by an
-- equality.  Each query's rows in the sequence the ordinary plan gives.
CREATE TABLE lk_two (a int8, b int8, v int8);
INSERT INTO lk_two SELECT g % 500, (g * 7) % 13, g FROM generate_series(1, 20000) g;
CREATE INDEX ON lk_two USING gpubtree (a, b) INCLUDE (v);
VACUUM ANALYZE lk_two;
UPDATE lk_two SET b = b + 1 WHERE v % 11 = 0;
CREATE FUNCTION seq_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	a text[] := '{}';
	b text[] := '{}';
BEGIN
	FOR r IN EXECUTE q LOOP
		a := a || r::text;
	END LOOP;
	PERFORM set_config('gpubtree.device', 'off', true);
	FOR r IN EXECUTE q LOOP
		b := b || r::text;
	END LOOP;
	PERFORM set_config('gpubtree.device', 'auto', true);
	RETURN CASE WHEN a = b THEN 'same sequence, ' || cardinality(a) || ' rows' ELSE 'DIFFERENT' END;
END $$;
SET gpubtree.min_gpu_batch = 1;
SELECT q, answered(q), ordered_by(q), seq_same(q) FROM (VALUES
	('SELECT a FROM lk_two WHERE a BETWEEN 100 AND 400 ORDER BY a'),
	('SELECT a FROM lk_two WHERE a BETWEEN 100 AND 400 ORDER BY a DESC'),
	('SELECT a, b FROM lk_two WHERE a BETWEEN 100 AND 400 ORDER BY a, b'),
	('SELECT a, b FROM lk_two WHERE a BETWEEN 100 AND 400 ORDER BY a DESC, b'),
	('SELECT a, b FROM lk_two WHERE a = 7 ORDER BY a, b'),
	('SELECT a, b FROM lk_two WHERE a = 7 ORDER BY b')) x(q);
-- A merge join fed by two lookups in key order (a full join: an inner one
-- is GpubtreeJoin's).
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT ordered_by(q), answered(q), same(q) FROM (VALUES
	('SELECT x.k, x.v, y.f FROM (SELECT k, v FROM lk_bigint WHERE k BETWEEN 600 AND 8100) x
	  FULL JOIN (SELECT k, f FROM lk_bigint WHERE k BETWEEN 300 AND 5000) y ON x.k = y.k')) x(q);
RESET enable_hashjoin;
RESET enable_nestloop;
RESET gpubtree.min_gpu_batch;

-- Rows of a range with a column the index does not hold: no lookup node.
SELECT answered(q), same(q) FROM (VALUES
	('SELECT k, w FROM lk_bigint WHERE k BETWEEN 600 AND 8100')) x(q);

-- Arrays of another integer width than the key.
SELECT answered(q), same(q) FROM (VALUES
	('SELECT k, v FROM lk_bigint WHERE k = ANY(ARRAY(SELECT a::int4 FROM lk_bigint_probe))'),
	('SELECT k, v FROM lk_bigint WHERE k = ANY(ARRAY(SELECT a::int2 FROM lk_bigint_probe))'),
	('SELECT k, v FROM lk_integer WHERE k = ANY(ARRAY(SELECT a::int8 FROM lk_integer_probe))'),
	('SELECT k, v FROM lk_smallint WHERE k = ANY(ARRAY(SELECT a::int8 FROM lk_smallint_probe))')
) x(q);

-- A PL/pgSQL variable: generic plans after five calls.
CREATE FUNCTION lk_rows(keys int8[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	SELECT string_agg(k || ':' || v, ';' ORDER BY k, v) INTO r FROM lk_bigint WHERE k = ANY (keys);
	RETURN r;
END $$;
SELECT i, lk_rows(a) = (SELECT string_agg(k || ':' || v, ';' ORDER BY k, v)
						 FROM lk_bigint WHERE k = ANY (a)) AS agrees
FROM (SELECT array_agg(a) AS a FROM lk_bigint_probe) p, generate_series(1, 7) i ORDER BY i;

-- Joins that probe the index with another table's keys, for every type;
-- repeated probe keys give repeated rows, as a join must.  These tables are
-- small enough that a hash join over a sequential scan is cheaper: with the
-- table's other scans disabled, the join node is what remains (the probe
-- keys come from a function scan, which the settings leave alone).
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT typ,
	   answered(format('SELECT sum(t.v), count(*) FROM unnest(ARRAY(SELECT a FROM %I)) p(a) JOIN %I t ON t.k = p.a',
					   'lk_' || replace(typ::text, ' ', '_') || '_probe', 'lk_' || replace(typ::text, ' ', '_'))),
	   same(format('SELECT t.k, t.v, t.f, p.a FROM unnest(ARRAY(SELECT a FROM %I)) p(a) JOIN %I t ON t.k = p.a',
				   'lk_' || replace(typ::text, ' ', '_') || '_probe', 'lk_' || replace(typ::text, ' ', '_')))
FROM lk_types ORDER BY typ::text;
-- Conditions on both sides; inner columns the index does not hold (no
-- join node); keys of another integer width; NULL keys and repeated ones;
-- fewer keys than gpubtree.min_gpu_batch; an outer column passed by
-- reference (the outer rows kept in a tuplestore, not as Datums), also
-- with fewer keys (nbtree reads the keys back from the tuplestore).
SELECT answered(q), same(q) FROM (VALUES
	('SELECT t.k, t.v, p.s FROM unnest(ARRAY(SELECT a FROM lk_bigint_probe), ARRAY(SELECT a::text FROM lk_bigint_probe)) p(a, s) JOIN lk_bigint t ON t.k = p.a'),
	('SELECT t.k, t.v, p.s FROM unnest(ARRAY(SELECT a FROM lk_bigint_probe LIMIT 10), ARRAY(SELECT a::text FROM lk_bigint_probe LIMIT 10)) p(a, s) JOIN lk_bigint t ON t.k = p.a'),
	('SELECT t.k, t.v, p.a FROM unnest(ARRAY(SELECT a FROM lk_bigint_probe)) p(a) JOIN lk_bigint t ON t.k = p.a AND t.v > p.a WHERE t.f < 2000'),
	('SELECT t.k, t.w FROM unnest(ARRAY(SELECT a FROM lk_bigint_probe)) p(a) JOIN lk_bigint t ON t.k = p.a'),
	('SELECT t.k, t.v FROM unnest(ARRAY(SELECT a::int4 FROM lk_bigint_probe)) p(a) JOIN lk_bigint t ON t.k = p.a'),
	('SELECT t.k, t.v, p.a FROM unnest(ARRAY(SELECT CASE WHEN hashtext(a::text) % 3 = 0 THEN NULL ELSE a END FROM lk_bigint_probe)) p(a) JOIN lk_bigint t ON t.k = p.a'),
	('SELECT t.k, t.v FROM unnest(ARRAY(SELECT a FROM lk_bigint_probe LIMIT 10)) p(a) JOIN lk_bigint t ON t.k = p.a')
) x(q);

-- A join under an outer join, with a placeholder for a constant of the
-- subquery's: placeholders stay with the ordinary plans.
SELECT answered(q), same(q) FROM (VALUES
	('SELECT g, s.k, s.one FROM generate_series(1, 30) g LEFT JOIN (SELECT t.k, 1 AS one FROM unnest(ARRAY(SELECT a FROM lk_bigint_probe)) p(a) JOIN lk_bigint t ON t.k = p.a) s ON s.k = g')
) x(q);

-- Our own changes, not committed, are seen.
BEGIN;
UPDATE lk_bigint SET v = v + 7 WHERE k % 2 = 0;
INSERT INTO lk_bigint SELECT a, 42, 42, 'new' FROM lk_bigint_probe LIMIT 300;
SELECT answered(q), same(q) FROM (VALUES
	('SELECT k, v FROM lk_bigint WHERE k = ANY(ARRAY(SELECT a FROM lk_bigint_probe))'),
	('SELECT t.k, t.v FROM unnest(ARRAY(SELECT a FROM lk_bigint_probe)) p(a) JOIN lk_bigint t ON t.k = p.a')
) x(q);
ROLLBACK;
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;

-- On a larger table, the planner takes the lookup for a join by itself.
CREATE TABLE lk_big (k int8, v int8);
INSERT INTO lk_big SELECT g, g FROM generate_series(1, 100000) g;
CREATE INDEX ON lk_big USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE lk_big;
EXPLAIN (COSTS OFF) SELECT sum(t.v) FROM lk_bigint_probe p JOIN lk_big t ON t.k = p.a;
SELECT answered(q), same(q) FROM (VALUES
	('SELECT sum(t.v), count(*) FROM lk_bigint_probe p JOIN lk_big t ON t.k = p.a')) x(q);
-- Key lists long enough for the service to sort them (repeats and all):
-- rows and a join.
CREATE TABLE lk_many AS SELECT (g * 7919) % 60000 AS a FROM generate_series(1, 90000) g;
ANALYZE lk_many;
SELECT answered(q), same(q) FROM (VALUES
	('SELECT k, v FROM lk_big WHERE k = ANY(ARRAY(SELECT a FROM lk_many))'),
	('SELECT sum(t.v), count(*), sum(p.a) FROM lk_many p JOIN lk_big t ON t.k = p.a')) x(q);
-- In parallel (its costs zeroed to make it so): each process keeps and
-- looks up its share of the outer rows, under a Gather; also after our own
-- inserts into both tables, not committed, which every worker must see
-- (the leader only gathering: its own lookup cannot send them first).
-- Compared with gpubtree.device = off's answer (PL/pgSQL's loops in same()
-- do not run in parallel).
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT sum(t.v), count(*), sum(p.a) FROM lk_many p JOIN lk_big t ON t.k = p.a;
CREATE FUNCTION lk_parallel_same() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	par text;
	ser text;
BEGIN
	EXECUTE 'SELECT sum(t.v) || '' '' || count(*) || '' '' || sum(p.a) FROM lk_many p JOIN lk_big t ON t.k = p.a' INTO par;
	PERFORM set_config('gpubtree.device', 'off', true);
	EXECUTE 'SELECT sum(t.v) || '' '' || count(*) || '' '' || sum(p.a) FROM lk_many p JOIN lk_big t ON t.k = p.a' INTO ser;
	PERFORM set_config('gpubtree.device', 'auto', true);
	RETURN CASE WHEN par = ser THEN 'same' ELSE 'DIFFERENT: ' || par || ' against ' || ser END;
END $$;
SELECT lk_parallel_same();
BEGIN;
SET LOCAL parallel_leader_participation = off;
INSERT INTO lk_big SELECT g, -g FROM generate_series(100001, 100500) g;
INSERT INTO lk_many SELECT g FROM generate_series(100001, 100500) g;
SELECT lk_parallel_same();
ROLLBACK;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
DROP TABLE lk_big, lk_many;

-- A generic plan keeps a selective condition on another index: the lookup
-- of a long array could not beat it, so it is not offered.
CREATE INDEX lk_bigint_v ON lk_bigint (v);
SET plan_cache_mode = force_generic_plan;
PREPARE lk_v(int8[], int8) AS SELECT k, v FROM lk_bigint WHERE k = ANY($1) AND v = $2;
EXPLAIN (COSTS OFF) EXECUTE lk_v('{1,2,3}', 42);
SELECT answered(format('EXECUTE lk_v(%L, 42)', (SELECT array_agg(a) FROM lk_bigint_probe))),
	   same(format('EXECUTE lk_v(%L, 42)', (SELECT array_agg(a) FROM lk_bigint_probe)));
DEALLOCATE lk_v;
RESET plan_cache_mode;
DROP INDEX lk_bigint_v;

-- Few keys stay on nbtree; with the service off, nbtree answers a plan
-- made with it, and a new plan has no lookup node at all.
SET plan_cache_mode = force_generic_plan;
PREPARE lk_o(int8[]) AS SELECT k, v FROM lk_bigint WHERE k = ANY($1);
SELECT answered(format('EXECUTE lk_o(%L)', (SELECT array_agg(a) FROM lk_bigint_probe)));
SET gpubtree.device = off;
SELECT answered(format('EXECUTE lk_o(%L)', (SELECT array_agg(a) FROM lk_bigint_probe)));
SELECT answered('SELECT k, v FROM lk_bigint WHERE k = ANY(ARRAY(SELECT a FROM lk_bigint_probe))');
RESET gpubtree.device;
DEALLOCATE lk_o;
RESET plan_cache_mode;

DROP FUNCTION lk_setup, lk_check, lk_range_check, lk_rows, answered, same, rows_of, keys_of, ordered_by,
	seq_same, lk_parallel_same;
SELECT format('DROP TABLE %I, %I', 'lk_' || replace(typ::text, ' ', '_'),
			  'lk_' || replace(typ::text, ' ', '_') || '_probe') FROM lk_types \gexec
DROP TABLE lk_types, lk_arrays, lk_ranges, lk_two;
