-- Queries that run inside another statement see what that statement did so
-- far, as PostgreSQL's own plans do: a volatile function in a DELETE's or
-- UPDATE's RETURNING, WHERE or SET list, user triggers BEFORE and AFTER, ROW
-- and STATEMENT, rules, ON CONFLICT, MERGE, data-modifying CTEs, SQL and
-- PL/pgSQL functions that delete and then read, loops over a cursor while
-- deleting, cursors opened before a delete and read after it.  The capture
-- trigger logs a deleted row's entry only when the row's statement ends,
-- so until then the mirror must not be trusted for this transaction's
-- rows (capture.c: gbt_capture_current()).
--
-- st_probe(shape) runs each probe query (a range aggregate, an = ANY
-- aggregate, rows of many keys, a join on the key) through the gpubtree
-- node (the other plans disabled) and through the ordinary plan
-- (gpubtree.device = off), and records whether they agree and whether the
-- service answered.  A new
-- shape is one more statement below; a new probe query one more row of
-- st_queries.
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET gpubtree.build_wait = '60s';

CREATE TABLE st (k int8, v int8, w int8 UNIQUE) WITH (autovacuum_enabled = off);
INSERT INTO st SELECT g, g * 3, g FROM generate_series(1, 4000) g;
CREATE INDEX st_k ON st USING gpubtree (k) INCLUDE (v);
CREATE TABLE st_keys AS SELECT generate_series(1, 3000, 2)::int8 AS a;
VACUUM ANALYZE st, st_keys;
CREATE TABLE st_results (ord serial, shape text, query text, same boolean, service boolean);
-- parallel: with parallel plans made cheap (a Gather over the node's
-- partial path, whose workers ask the service too).
CREATE TABLE st_queries (query text PRIMARY KEY, node text, parallel boolean DEFAULT false);
INSERT INTO st_queries (query, node) VALUES
('SELECT count(*), sum(v), min(v), max(k) FROM st WHERE k BETWEEN 1 AND 5000', 'GpubtreeAggregate'),
('SELECT count(*), sum(v) FROM st WHERE k = ANY (ARRAY(SELECT generate_series(1, 3000, 2)::int8))', 'GpubtreeAggregate'),
('SELECT k, v FROM st WHERE k = ANY (ARRAY(SELECT generate_series(1, 3000, 2)::int8))', 'GpubtreeLookup'),
('SELECT st.k, st.v FROM st_keys JOIN st ON st.k = st_keys.a', 'GpubtreeJoin');
INSERT INTO st_queries VALUES
('SELECT count(*), sum(st.v) FROM st_keys JOIN st ON st.k = st_keys.a', 'GpubtreeJoin', true);

CREATE FUNCTION st_probe(shape text) RETURNS int
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	r record;
	plan jsonb;
	got jsonb;
	ord jsonb;
	node jsonb;
BEGIN
	FOR r IN SELECT * FROM st_queries ORDER BY query, parallel LOOP
		PERFORM set_config(name, 'off', true) FROM pg_settings
		WHERE name IN ('enable_seqscan', 'enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan');
		IF r.parallel THEN
			PERFORM set_config(name, '0', true) FROM pg_settings
			WHERE name IN ('parallel_setup_cost', 'parallel_tuple_cost', 'min_parallel_table_scan_size');
			PERFORM set_config('max_parallel_workers_per_gather', '2', true);
			PERFORM set_config('enable_seqscan', 'on', true);
			-- each process's share of the keys goes to the service, however
			-- the workers split them (EXPLAIN tells of every process)
			PERFORM set_config('gpubtree.min_gpu_batch', '1', true);
		END IF;
		EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || r.query INTO plan;
		EXECUTE format('SELECT jsonb_agg(to_jsonb(x) ORDER BY to_jsonb(x)) FROM (%s) x', r.query) INTO got;
		PERFORM set_config(name, reset_val, true) FROM pg_settings
		WHERE name IN ('parallel_setup_cost', 'parallel_tuple_cost', 'min_parallel_table_scan_size');
		PERFORM set_config('max_parallel_workers_per_gather', '0', true);
		PERFORM set_config('gpubtree.min_gpu_batch', reset_val, true) FROM pg_settings
		WHERE name = 'gpubtree.min_gpu_batch';
		PERFORM set_config(name, 'on', true) FROM pg_settings
		WHERE name IN ('enable_seqscan', 'enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan');
		PERFORM set_config('gpubtree.device', 'off', true);
		EXECUTE format('SELECT jsonb_agg(to_jsonb(x) ORDER BY to_jsonb(x)) FROM (%s) x', r.query) INTO ord;
		PERFORM set_config('gpubtree.device', 'auto', true);
		node := jsonb_path_query_first(plan, 'strict $.** ? (@."Custom Plan Provider" == $n)',
									   jsonb_build_object('n', r.node));
		INSERT INTO st_results (shape, query, same, service)
		VALUES (shape, r.node || CASE WHEN r.parallel THEN ' (parallel, '
					|| (jsonb_path_query_first(plan, 'strict $.**."Workers Launched"') IS NOT NULL) || ') ' ELSE ' ' END
					|| left(r.query, 30), got = ord,
				coalesce(node ->> 'Answered by' = 'GPU service', false));
	END LOOP;
	RETURN 0;
END $$;

-- Before anything: the mirror answers.
SELECT st_probe('before');

-- A volatile function in RETURNING, WHERE and SET.
DELETE FROM st WHERE k <= 3 RETURNING st_probe('delete returning');
UPDATE st SET k = k + 100000 WHERE k BETWEEN 4 AND 6 RETURNING st_probe('update returning');
DELETE FROM st WHERE k BETWEEN 7 AND 9 AND st_probe('delete where') = 0;
UPDATE st SET v = v + st_probe('update set') WHERE k BETWEEN 10 AND 12;
INSERT INTO st SELECT g, g, g FROM generate_series(100001, 100003) g WHERE st_probe('insert select') = 0;

-- User triggers on the table, each kind in turn.
CREATE FUNCTION st_trig() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM st_probe(TG_ARGV[0]);
	RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
CREATE TABLE st_trigger_kinds (timing text, level text, event text);
INSERT INTO st_trigger_kinds
SELECT t, l, e FROM unnest(ARRAY['BEFORE', 'AFTER']) t, unnest(ARRAY['ROW', 'STATEMENT']) l,
	unnest(ARRAY['DELETE', 'UPDATE']) e;
SELECT format('CREATE TRIGGER st_user_trigger %s %s ON st FOR EACH %s EXECUTE FUNCTION st_trig(%L)',
			  timing, event, level, lower(format('%s %s %s trigger', timing, level, event))),
	   CASE event WHEN 'DELETE' THEN format('DELETE FROM st WHERE k BETWEEN %s AND %s', 20 + 3 * n, 22 + 3 * n)
		   ELSE format('UPDATE st SET k = k + 200000 WHERE k BETWEEN %s AND %s', 20 + 3 * n, 22 + 3 * n) END,
	   'DROP TRIGGER st_user_trigger ON st'
FROM (SELECT *, row_number() OVER (ORDER BY timing, level, event) AS n FROM st_trigger_kinds) x
ORDER BY n \gexec
-- A deferred constraint trigger, fired at commit.
CREATE CONSTRAINT TRIGGER st_deferred AFTER DELETE ON st DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION st_trig('deferred constraint trigger');
BEGIN;
DELETE FROM st WHERE k BETWEEN 60 AND 61;
COMMIT;
DROP TRIGGER st_deferred ON st;

-- A rule's extra action.
CREATE TABLE st_log (n int);
CREATE RULE st_rule AS ON DELETE TO st DO ALSO INSERT INTO st_log SELECT st_probe('rule action');
DELETE FROM st WHERE k BETWEEN 70 AND 71;
DROP RULE st_rule ON st;

-- ON CONFLICT and MERGE.
INSERT INTO st VALUES (80, 0, 80), (81, 0, 81)
ON CONFLICT (w) DO UPDATE SET k = st.k + 300000, v = st.v + st_probe('on conflict do update');
MERGE INTO st USING (VALUES (90), (91)) s(k) ON st.k = s.k
WHEN MATCHED AND st_probe('merge condition') = 0 THEN DELETE;
MERGE INTO st USING (VALUES (92), (93)) s(k) ON st.k = s.k
WHEN MATCHED THEN UPDATE SET k = st.k + 400000, v = st.v + st_probe('merge update');

-- Data-modifying CTEs.
WITH d AS (DELETE FROM st WHERE k BETWEEN 100 AND 102 RETURNING k)
SELECT count(*), st_probe('cte delete, outer query') FROM d;
WITH d AS (DELETE FROM st WHERE k BETWEEN 103 AND 105 RETURNING st_probe('cte delete returning') AS p)
SELECT count(*) FROM d;

-- Functions that delete, then read, in one call.
CREATE FUNCTION st_sql_fn() RETURNS int LANGUAGE sql AS $$
	DELETE FROM st WHERE k BETWEEN 110 AND 112;
	SELECT st_probe('sql function after its delete');
$$;
SELECT st_sql_fn();
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT k FROM st WHERE k BETWEEN 120 AND 123 ORDER BY k LOOP
		DELETE FROM st WHERE k = r.k;
		PERFORM st_probe('plpgsql loop over a cursor, deleting');
	END LOOP;
	UPDATE st SET k = k + 500000 WHERE k BETWEEN 124 AND 126;
	PERFORM st_probe('plpgsql after update');
END $$;

-- Cursors opened before this transaction's delete, read after it: each sees
-- the table as of its opening.
CREATE FUNCTION st_cursors(shape text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	q text;
	c_node refcursor;
	c_ord refcursor;
	got jsonb;
	ord jsonb;
BEGIN
	FOR q IN SELECT query FROM st_queries WHERE node = 'GpubtreeAggregate' ORDER BY query LOOP
		PERFORM set_config(name, 'off', true) FROM pg_settings
		WHERE name IN ('enable_seqscan', 'enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan');
		OPEN c_node FOR EXECUTE format('SELECT to_jsonb(x) FROM (%s) x', q);
		PERFORM set_config(name, 'on', true) FROM pg_settings
		WHERE name IN ('enable_seqscan', 'enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan');
		PERFORM set_config('gpubtree.device', 'off', true);
		OPEN c_ord FOR EXECUTE format('SELECT to_jsonb(x) FROM (%s) x', q);
		PERFORM set_config('gpubtree.device', 'auto', true);
		DELETE FROM st WHERE k IN (SELECT k FROM st WHERE k > 130 ORDER BY k LIMIT 2);
		FETCH c_node INTO got;
		FETCH c_ord INTO ord;
		CLOSE c_node;
		CLOSE c_ord;
		INSERT INTO st_results (shape, query, same) VALUES (shape, 'cursor ' || left(q, 30), got = ord);
	END LOOP;
END $$;
SELECT st_cursors('cursor opened before a delete');

-- After the statements, in a transaction of their own.
SELECT st_probe('after');

-- Every probe agreed with the ordinary plan.
SELECT shape, query FROM st_results WHERE NOT same ORDER BY ord;
-- The parallel probes ran with workers.
SELECT DISTINCT query FROM st_results WHERE query LIKE '%parallel%';
-- Each shape was probed (and how many of its probes the service answered).
SELECT shape, count(*) AS probes, count(*) FILTER (WHERE service) AS by_service
FROM st_results GROUP BY shape ORDER BY min(ord);

DROP TABLE st, st_keys, st_results, st_queries, st_trigger_kinds, st_log;
DROP FUNCTION st_probe(text), st_trig(), st_sql_fn(), st_cursors(text);
