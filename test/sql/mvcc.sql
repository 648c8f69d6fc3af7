-- MVCC in the mirror: the GpubtreeAggregate node answers from the mirror's
-- visibility stamps after other transactions' updates, deletes, inserts,
-- rollbacks and savepoints (committed, no VACUUM since), without visiting
-- the heap; the querying transaction's own uncommitted changes are checked
-- in the heap.  The cases are generated: each kind of change in mv_cases
-- runs on a fresh, vacuumed table whose mirror a first aggregate query has
-- built, and each check compares the node's answer with the ordinary
-- plan's (gpubtree.device = off) in the same transaction.  Then the
-- internal capture trigger in the catalogs, and who may use its function.
-- The regression cluster preloads gpubtree, so the service runs.
-- Mirrors here are built by the first query that asks (the outputs say
-- when), not after CREATE INDEX: that is build_after_create.sql's subject.
SET gpubtree.build_after_create = off;
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;

-- One row per check: the node's count(*), sum(v), min(v), max(v), whether
-- its answer is the ordinary plan's (those and count(v)),
-- whether the service answered, whether the node checked entries in the
-- heap (EXPLAIN ANALYZE's "Entries Checked in Heap" > 0).
CREATE TABLE mv_results (
	ord serial, kase text, phase text, rel text,
	n bigint, s numeric, mn bigint, mx bigint, same boolean, service boolean, heap_visited boolean);
-- What each change did, counted in its transaction before it ends.
CREATE TABLE mv_stats (kase text, rel text, ins bigint, upd bigint, hot bigint, del bigint);

-- mv_check: the query through the node (the other plans disabled, so that
-- it is chosen on a table of a few thousand rows), run under EXPLAIN
-- ANALYZE as CREATE TEMP TABLE AS, so that the answer compared is the one
-- whose plan says what answered it; then the same query by the ordinary
-- plan.  The SET clauses end with the call.
CREATE PROCEDURE mv_check(kase text, phase text, rel text, lo int8, hi int8)
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
SET enable_bitmapscan = off SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
	q text := format('SELECT count(*) AS n, count(v) AS nv, sum(v) AS s, min(v) AS mn, max(v) AS mx '
					 'FROM %I WHERE k BETWEEN %s AND %s', rel, lo, hi);
	plan jsonb;
	node jsonb;
	got jsonb;
	ord jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) '
		|| 'CREATE TEMP TABLE mv_answer AS ' || q INTO plan;
	SELECT to_jsonb(a) INTO got FROM mv_answer a;
	DROP TABLE mv_answer;
	PERFORM set_config(name, 'on', true) FROM pg_settings
	WHERE name IN ('enable_seqscan', 'enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan');
	PERFORM set_config('gpubtree.device', 'off', true);
	EXECUTE format('SELECT to_jsonb(r) FROM (%s) r', q) INTO ord;
	node := jsonb_path_query_first(plan, 'strict $.** ? (@."Custom Plan Provider" == "GpubtreeAggregate")');
	INSERT INTO mv_results (kase, phase, rel, n, s, mn, mx, same, service, heap_visited)
	VALUES (kase, phase, rel, (got ->> 'n')::bigint, (got ->> 's')::numeric, (got ->> 'mn')::bigint,
			(got ->> 'mx')::bigint, got = ord,
			coalesce(node ->> 'Answered by' = 'GPU service', false),
			(node ->> 'Entries Checked in Heap')::bigint > 0);
END $$;

-- The tables.  mv: k = 1..4000, v = 3k (NULL where k % 97 = 0), w = 0;
-- (k) INCLUDE (v).  Each layout's checks run over k BETWEEN 1000 AND 4500
-- on each of its relations.
CREATE TABLE mv_layouts (layout text PRIMARY KEY, rels text[], ddl text[]);
INSERT INTO mv_layouts VALUES
('plain', '{mv}', ARRAY[
	'CREATE TABLE mv (k int8, v int8, w int8) WITH (autovacuum_enabled = off)',
	'INSERT INTO mv SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE 3 * g END, 0 FROM generate_series(1, 4000) g',
	'CREATE INDEX mv_k ON mv USING gpubtree (k) INCLUDE (v)',
	'VACUUM ANALYZE mv']),
('fillfactor 50', '{mv}', ARRAY[
	'CREATE TABLE mv (k int8, v int8, w int8) WITH (autovacuum_enabled = off, fillfactor = 50)',
	'INSERT INTO mv SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE 3 * g END, 0 FROM generate_series(1, 4000) g',
	'CREATE INDEX mv_k ON mv USING gpubtree (k) INCLUDE (v)',
	'VACUUM ANALYZE mv']),
('unique', '{mv}', ARRAY[
	'CREATE TABLE mv (k int8, v int8, w int8) WITH (autovacuum_enabled = off)',
	'INSERT INTO mv SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE 3 * g END, 0 FROM generate_series(1, 4000) g',
	'CREATE UNIQUE INDEX mv_k ON mv USING gpubtree (k) INCLUDE (v)',
	'VACUUM ANALYZE mv']),
-- w = k / 100 references the parent's id.
('foreign key', '{mv}', ARRAY[
	'CREATE TABLE mv_parent (id int8 PRIMARY KEY)',
	'INSERT INTO mv_parent SELECT generate_series(0, 40)',
	'CREATE TABLE mv (k int8, v int8, w int8 REFERENCES mv_parent ON DELETE CASCADE) WITH (autovacuum_enabled = off)',
	'INSERT INTO mv SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE 3 * g END, g / 100 FROM generate_series(1, 4000) g',
	'CREATE INDEX mv_k ON mv USING gpubtree (k) INCLUDE (v)',
	'VACUUM ANALYZE mv_parent',
	'VACUUM ANALYZE mv']),
-- Partitioned by w (= k % 2); the index made on the parent.
('partitioned', '{mvp_0,mvp_1}', ARRAY[
	'CREATE TABLE mvp (k int8, v int8, w int8) PARTITION BY LIST (w)',
	'CREATE TABLE mvp_0 PARTITION OF mvp FOR VALUES IN (0) WITH (autovacuum_enabled = off)',
	'CREATE TABLE mvp_1 PARTITION OF mvp FOR VALUES IN (1) WITH (autovacuum_enabled = off)',
	'INSERT INTO mvp SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE 3 * g END, g % 2 FROM generate_series(1, 4000) g',
	'CREATE INDEX mvp_k ON mvp USING gpubtree (k) INCLUDE (v)',
	'VACUUM ANALYZE mvp']);

-- The kinds of change.  In steps, CHECK:<phase> stands for a check of each
-- of the layout's relations, STATS for a row of mv_stats each (both in the
-- transaction where they appear).  Every case checks 'before' (building
-- the mirror) and 'after' (the change over, in a new transaction).
CREATE TABLE mv_cases (ord int PRIMARY KEY, kase text, layout text REFERENCES mv_layouts, steps text[]);
INSERT INTO mv_cases VALUES
(1, 'UPDATE of the INCLUDE column', 'plain', ARRAY[
	'BEGIN', 'UPDATE mv SET v = v + 100000 WHERE k BETWEEN 1500 AND 1599', 'STATS', 'COMMIT']),
(2, 'UPDATE of the INCLUDE column to NULL', 'plain', ARRAY[
	'BEGIN', 'UPDATE mv SET v = NULL WHERE k BETWEEN 1000 AND 1099', 'STATS', 'COMMIT']),
(3, 'UPDATE of the key, out of and into the range', 'plain', ARRAY[
	'BEGIN', 'UPDATE mv SET k = k + 10000 WHERE k BETWEEN 1500 AND 1599',
	'UPDATE mv SET k = k + 3000 WHERE k BETWEEN 900 AND 1099', 'STATS', 'COMMIT']),
(4, 'HOT UPDATE of an unindexed column', 'fillfactor 50', ARRAY[
	'BEGIN', 'UPDATE mv SET w = w + 1 WHERE k BETWEEN 1500 AND 1599', 'STATS', 'COMMIT']),
(5, 'DELETE', 'plain', ARRAY[
	'BEGIN', 'DELETE FROM mv WHERE k BETWEEN 1000 AND 1099 OR k BETWEEN 3951 AND 4000', 'STATS', 'COMMIT']),
(6, 'DELETE + INSERT of the same keys', 'plain', ARRAY[
	'BEGIN', 'DELETE FROM mv WHERE k BETWEEN 1500 AND 1599',
	'INSERT INTO mv SELECT g, -g, 0 FROM generate_series(1500, 1599) g', 'STATS', 'COMMIT']),
(7, 'INSERT ... ON CONFLICT DO UPDATE', 'unique', ARRAY[
	'BEGIN', 'INSERT INTO mv SELECT g, g, 0 FROM generate_series(3901, 4100) g ON CONFLICT (k) DO UPDATE SET v = mv.v + 100000',
	'STATS', 'COMMIT']),
(8, 'MERGE', 'plain', ARRAY[
	'BEGIN', 'MERGE INTO mv USING (SELECT generate_series(1500, 1599) AS k UNION ALL SELECT generate_series(4101, 4150)) s '
	'ON mv.k = s.k WHEN MATCHED AND s.k % 2 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = -mv.v '
	'WHEN NOT MATCHED THEN INSERT VALUES (s.k, 5 * s.k, 0)', 'STATS', 'COMMIT']),
(9, 'FK ON DELETE CASCADE from the parent', 'foreign key', ARRAY[
	'BEGIN', 'DELETE FROM mv_parent WHERE id IN (15, 39)', 'STATS', 'COMMIT']),
(10, 'cross-partition UPDATE', 'partitioned', ARRAY[
	'BEGIN', 'UPDATE mvp SET w = 1 - w WHERE k BETWEEN 1500 AND 1599', 'STATS', 'COMMIT']),
(11, 'rolled-back transaction', 'plain', ARRAY[
	'BEGIN', 'UPDATE mv SET v = v + 100000 WHERE k BETWEEN 1500 AND 1599',
	'UPDATE mv SET k = k + 10000 WHERE k BETWEEN 2000 AND 2099', 'DELETE FROM mv WHERE k BETWEEN 1000 AND 1099',
	'INSERT INTO mv SELECT g, 1, 0 FROM generate_series(4001, 4100) g', 'ROLLBACK']),
(12, 'rolled-back savepoint', 'plain', ARRAY[
	'BEGIN', 'UPDATE mv SET v = v + 1 WHERE k BETWEEN 3000 AND 3099', 'SAVEPOINT s',
	'UPDATE mv SET v = v + 100000 WHERE k BETWEEN 1500 AND 1599',
	'UPDATE mv SET k = k + 10000 WHERE k BETWEEN 2000 AND 2099', 'DELETE FROM mv WHERE k BETWEEN 1000 AND 1099',
	'INSERT INTO mv SELECT g, 1, 0 FROM generate_series(4001, 4100) g', 'ROLLBACK TO SAVEPOINT s', 'STATS', 'COMMIT']),
(13, 'UPDATE, then DELETE of the new versions', 'plain', ARRAY[
	'BEGIN', 'UPDATE mv SET v = v + 1 WHERE k BETWEEN 1500 AND 1599', 'COMMIT',
	'BEGIN', 'DELETE FROM mv WHERE k BETWEEN 1550 AND 1649', 'STATS', 'COMMIT']),
(14, 'own changes', 'plain', ARRAY[
	'BEGIN', 'UPDATE mv SET v = v + 100000 WHERE k BETWEEN 1500 AND 1599',
	'UPDATE mv SET k = k + 10000 WHERE k BETWEEN 2000 AND 2099', 'DELETE FROM mv WHERE k BETWEEN 1000 AND 1099',
	'INSERT INTO mv SELECT g, 1, 0 FROM generate_series(4001, 4100) g', 'STATS', 'CHECK:own, open', 'COMMIT']),
(15, 'own changes, REPEATABLE READ', 'plain', ARRAY[
	'BEGIN ISOLATION LEVEL REPEATABLE READ', 'DELETE FROM mv WHERE k BETWEEN 1000 AND 1099',
	'UPDATE mv SET v = v + 100000 WHERE k BETWEEN 1500 AND 1599', 'STATS', 'CHECK:own, open', 'COMMIT']),
(16, 'own changes, part rolled back to a savepoint', 'plain', ARRAY[
	'BEGIN', 'UPDATE mv SET v = v + 100000 WHERE k BETWEEN 1500 AND 1599', 'SAVEPOINT s',
	'DELETE FROM mv WHERE k BETWEEN 1000 AND 1099', 'ROLLBACK TO SAVEPOINT s', 'STATS', 'CHECK:own, open', 'COMMIT']);

-- Run them: every statement from the lists above, one at a time.  Before
-- each BEGIN, the session's pending statistics are flushed (at the next
-- idle moment, before the BEGIN), so that mv_stats counts only the
-- transaction's own changes (and those of its aborted subtransactions).
SELECT stmt
FROM mv_cases c JOIN mv_layouts l USING (layout),
	 LATERAL unnest(ARRAY['DROP TABLE IF EXISTS mv, mv_parent, mvp'] || l.ddl || '{CHECK:before}'::text[]
					|| c.steps || '{CHECK:after}'::text[]) WITH ORDINALITY s(step, i),
	 LATERAL unnest(CASE
		WHEN step LIKE 'CHECK:%' THEN
			(SELECT array_agg(format('CALL mv_check(%L, %L, %L, 1000, 4500)', c.kase, substr(step, 7), rel) ORDER BY j)
			 FROM unnest(l.rels) WITH ORDINALITY r(rel, j))
		WHEN step = 'STATS' THEN
			(SELECT array_agg(format('INSERT INTO mv_stats SELECT %L, %L, pg_stat_get_xact_tuples_inserted(%L::regclass), '
									 'pg_stat_get_xact_tuples_updated(%L::regclass), '
									 'pg_stat_get_xact_tuples_hot_updated(%L::regclass), '
									 'pg_stat_get_xact_tuples_deleted(%L::regclass)',
									 c.kase, rel, rel, rel, rel, rel) ORDER BY j)
			 FROM unnest(l.rels) WITH ORDINALITY r(rel, j))
		WHEN step LIKE 'BEGIN%' THEN
			ARRAY['DO $$BEGIN PERFORM pg_stat_force_next_flush(); END$$', step]
		ELSE ARRAY[step] END) WITH ORDINALITY t(stmt, j)
ORDER BY c.ord, s.i, t.j
\gexec

-- Every check: expected same = t and service = t; heap visited = t only
-- for a transaction's own open changes.
SELECT r.kase, r.phase, r.rel, r.n, r.s, r.mn, r.mx, r.same, r.service, r.heap_visited
FROM mv_results r ORDER BY r.ord;
-- What each change did (in its transaction, before COMMIT).
SELECT kase, rel, ins, upd, hot, del FROM mv_stats ORDER BY kase, rel;
-- The checks that are not as expected (none).
SELECT kase, phase, rel FROM mv_results
WHERE (same AND service AND heap_visited = (phase LIKE 'own%')) IS NOT TRUE;

DROP TABLE IF EXISTS mv, mv_parent, mvp;

--
-- The capture trigger: internal, AFTER UPDATE OR DELETE FOR EACH ROW,
-- enabled ALWAYS ('A'), on every table with a gpubtree index and on every
-- partition of a partitioned table with one: partitions there before the
-- index, made after it, attached without an index (which gets one) or with
-- a matching gpubtree index of their own, and a partition's partitions.
-- A partitioned table itself has no rows, and no trigger.  A table with
-- only a btree index has none either.
--
CREATE TABLE mvt (k int8, v int8);
CREATE INDEX mvt_k ON mvt USING gpubtree (k) INCLUDE (v);
CREATE TABLE mvt_btree (k int8, v int8);
CREATE INDEX mvt_btree_k ON mvt_btree (k) INCLUDE (v);
CREATE TABLE mvtp (k int8, v int8, d int) PARTITION BY RANGE (d);
CREATE TABLE mvtp_before PARTITION OF mvtp FOR VALUES FROM (0) TO (10);
CREATE INDEX mvtp_k ON mvtp USING gpubtree (k) INCLUDE (v);
CREATE TABLE mvtp_after PARTITION OF mvtp FOR VALUES FROM (10) TO (20);
CREATE TABLE mvtp_attached (k int8, v int8, d int);
ALTER TABLE mvtp ATTACH PARTITION mvtp_attached FOR VALUES FROM (20) TO (30);
CREATE TABLE mvtp_adopted (k int8, v int8, d int);
CREATE INDEX mvtp_adopted_k ON mvtp_adopted USING gpubtree (k) INCLUDE (v);
ALTER TABLE mvtp ATTACH PARTITION mvtp_adopted FOR VALUES FROM (30) TO (40);
CREATE TABLE mvtp_sub PARTITION OF mvtp FOR VALUES FROM (40) TO (50) PARTITION BY RANGE (d);
CREATE TABLE mvtp_sub_1 PARTITION OF mvtp_sub FOR VALUES FROM (40) TO (45);
SELECT c.relname, c.relkind,
	   (SELECT count(*) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
		JOIN pg_am a ON a.oid = ic.relam WHERE i.indrelid = c.oid AND a.amname = 'gpubtree') AS gpubtree_indexes,
	   count(t.oid) AS triggers,
	   string_agg(regexp_replace(t.tgname, '[0-9]+$', 'N'), ',') AS tgname,
	   string_agg(t.tgenabled::text, ',') AS tgenabled,
	   bool_and(t.tgisinternal) AS tgisinternal,
	   bool_and(t.tgtype::int = (1 | 8 | 16)) AS after_row_update_delete
FROM pg_class c
LEFT JOIN pg_trigger t ON t.tgrelid = c.oid AND t.tgfoid = 'gpubtree_capture()'::regprocedure
WHERE c.relname LIKE 'mvt%' AND c.relkind IN ('r', 'p')
GROUP BY c.oid, c.relname, c.relkind ORDER BY c.relname;
-- Every table with a gpubtree index (in this database) has exactly one.
SELECT c.relname
FROM pg_class c
WHERE c.relkind = 'r'
  AND EXISTS (SELECT FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
			  JOIN pg_am a ON a.oid = ic.relam WHERE i.indrelid = c.oid AND a.amname = 'gpubtree')
  AND (SELECT count(*) FROM pg_trigger t WHERE t.tgrelid = c.oid
	   AND t.tgfoid = 'gpubtree_capture()'::regprocedure AND t.tgenabled = 'A' AND t.tgisinternal) <> 1;

--
-- gpubtree_capture() is no function for users: EXECUTE revoked from
-- PUBLIC, so that an unprivileged role can neither attach it to a table of
-- its own nor call it; yet as a table's owner it creates a gpubtree index
-- (README: the owner creates the trigger with the index), the trigger is
-- there all the same, and it cannot disable it.
--
-- 'ok', or the error's SQLSTATE and message (numbers masked: OIDs vary).
CREATE FUNCTION mv_try(query text, as_role name) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	BEGIN
		EXECUTE format('SET LOCAL ROLE %I', as_role);
		EXECUTE query;
		RESET ROLE;
		RETURN 'ok';
	EXCEPTION WHEN OTHERS THEN
		RETURN SQLSTATE || ' ' || regexp_replace(SQLERRM, '[0-9]+', 'N', 'g');
	END;
END $$;
CREATE ROLE regress_gpubtree_mvcc;
CREATE SCHEMA regress_gpubtree_mvcc AUTHORIZATION regress_gpubtree_mvcc;
SELECT has_function_privilege('regress_gpubtree_mvcc', 'gpubtree_capture()', 'EXECUTE') AS role_may_execute,
	   (SELECT count(*) FROM pg_proc p, aclexplode(p.proacl) a
		WHERE p.oid = 'gpubtree_capture()'::regprocedure AND a.grantee = 0) AS public_grants,
	   (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'gpubtree_capture()'::regprocedure) AS default_acl;
SELECT q, mv_try(q, 'regress_gpubtree_mvcc') FROM unnest(ARRAY[
	'CREATE TABLE regress_gpubtree_mvcc.own (k int8, v int8)',
	'CREATE TRIGGER mine AFTER UPDATE OR DELETE ON regress_gpubtree_mvcc.own FOR EACH ROW EXECUTE FUNCTION gpubtree_capture()',
	'CREATE TRIGGER mine BEFORE INSERT ON regress_gpubtree_mvcc.own FOR EACH ROW EXECUTE FUNCTION gpubtree_capture()',
	'CREATE TRIGGER mine AFTER UPDATE ON regress_gpubtree_mvcc.own FOR EACH STATEMENT EXECUTE FUNCTION public.gpubtree_capture()',
	'SELECT gpubtree_capture()',
	'CREATE INDEX own_k ON regress_gpubtree_mvcc.own USING gpubtree (k) INCLUDE (v)',
	'ALTER TABLE regress_gpubtree_mvcc.own DISABLE TRIGGER ALL',
	'INSERT INTO regress_gpubtree_mvcc.own SELECT g, g FROM generate_series(1, 10) g',
	'DELETE FROM regress_gpubtree_mvcc.own WHERE k < 5',
	'UPDATE regress_gpubtree_mvcc.own SET v = v + 1'
]) WITH ORDINALITY AS x(q, i) ORDER BY i;
SELECT c.relname, count(t.oid) AS triggers, string_agg(t.tgenabled::text, ',') AS tgenabled,
	   bool_and(t.tgisinternal) AS tgisinternal, string_agg(p.proname, ',') AS function
FROM pg_class c
LEFT JOIN pg_trigger t ON t.tgrelid = c.oid
LEFT JOIN pg_proc p ON p.oid = t.tgfoid
WHERE c.relnamespace = 'regress_gpubtree_mvcc'::regnamespace AND c.relkind = 'r'
GROUP BY c.relname ORDER BY c.relname;
SELECT count(*), sum(v) FROM regress_gpubtree_mvcc.own;

DROP SCHEMA regress_gpubtree_mvcc CASCADE;
DROP ROLE regress_gpubtree_mvcc;
DROP TABLE mvt, mvt_btree, mvtp;
DROP FUNCTION mv_try(text, name);
DROP PROCEDURE mv_check(text, text, text, int8, int8);
DROP TABLE mv_results, mv_stats, mv_cases, mv_layouts;
