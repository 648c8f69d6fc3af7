-- Visibility decided at export: a mirror exported from a table that was
-- loaded (INSERT ... SELECT, COPY) and never vacuumed, so that no heap page
-- is all-visible, takes its entries' visibility from their heap tuples once
-- (export_heap.c).  The first aggregate after CREATE INDEX is answered by
-- the service from the mirror's stamps, checking nothing in the heap, and
-- equals the ordinary plan's answer; for every index shape the export
-- handles (INCLUDE, multi-column, DESC, NULL keys).  Entries whose rows
-- no snapshot sees (deleted, old versions of updates, aborted inserts) are
-- left out of the mirror; HOT-updated roots stay to the visibility map and
-- the heap.
-- Where the stamps decide alone, an aggregate takes one round trip (no
-- AGG_PREPARE, no map sent); where some entries are left to the map, two.
-- The regression cluster preloads gpubtree, so the service runs.
SET max_parallel_workers_per_gather = 0;

-- ev_check(q, heap): how the planner's own plan for q answered (EXPLAIN
-- ANALYZE's "Answered by" and, if heap, "Entries Checked in Heap"), in how
-- many round trips (one where the stamps decide without the visibility
-- map: VERBOSE's "Visibility Map: not read"; else AGG_PREPARE, the map,
-- the AGG) and whether its result is the ordinary plan's
-- (gpubtree.device = off), compared as text.
CREATE FUNCTION ev_check(q text, heap bool DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
	got text;
	want text;
BEGIN
	EXECUTE format('EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON, TIMING OFF, SUMMARY OFF, COSTS OFF) %s', q) INTO plan;
	EXECUTE format('SELECT r::text FROM (%s) r', q) INTO got;
	SET LOCAL gpubtree.device = off;
	EXECUTE format('SELECT r::text FROM (%s) r', q) INTO want;
	RESET gpubtree.device;
	RETURN format('answered by: %s, %s%s',
		coalesce(jsonb_path_query_first(plan, 'strict $.**."Answered by"') #>> '{}', 'no GpubtreeAggregate node'),
		coalesce(CASE WHEN heap THEN format('checked in heap: %s, ',
			coalesce(jsonb_path_query_first(plan, 'strict $.**."Entries Checked in Heap"') #>> '{}', '-')) END, '') ||
		CASE WHEN jsonb_path_exists(plan, 'strict $.**."Visibility Map"') THEN 'one round trip, '
			 WHEN jsonb_path_exists(plan, 'strict $.**."Heap Blocks"') THEN 'the map read, '
			 ELSE '' END,
		CASE WHEN got IS NOT DISTINCT FROM want THEN 'same' ELSE 'DIFFERENT ' || got || ' vs ' || want END);
END $$;

-- ev_mirror(index): how the index's current mirror decides, and how many of
-- its entries are stamped (left to the visibility map here: no change
-- since the export).
CREATE FUNCTION ev_mirror(idx regclass) RETURNS TABLE (decided_by text, stamped bigint, entries bigint)
LANGUAGE sql AS $$
	SELECT decided_by, stamped, entries FROM gpubtree_mirrors() WHERE index = idx AND current
$$;

-- A bulk load by INSERT ... SELECT, then CREATE INDEX: nothing vacuumed, no
-- page all-visible.
CREATE TABLE ev (k int8, v int8, f float8) WITH (autovacuum_enabled = off);
INSERT INTO ev SELECT g, g % 1000, g / 8.0 FROM generate_series(1, 200000) g;
CREATE INDEX ev_k ON ev USING gpubtree (k) INCLUDE (v, f);
-- The first aggregate: the service answers, no entry checked in the heap.
SELECT ev_check('SELECT count(*), sum(v), avg(f) FROM ev WHERE k BETWEEN 1000 AND 150000');
SELECT * FROM ev_mirror('ev_k');
SELECT ev_check('SELECT count(*), sum(v), min(f), max(f) FROM ev');

-- COPY into a table that has the index already (its mirror not built
-- yet), never vacuumed; a plain key, no INCLUDE.
CREATE TABLE ev_copy (k int8) WITH (autovacuum_enabled = off);
SET gpubtree.build_after_create = off;
CREATE INDEX ev_copy_k ON ev_copy USING gpubtree (k);
RESET gpubtree.build_after_create;
COPY ev_copy FROM PROGRAM 'seq 1 150000';
SELECT ev_check('SELECT count(*), sum(k) FROM ev_copy WHERE k BETWEEN 100 AND 140000');
SELECT * FROM ev_mirror('ev_copy_k');

-- Every index shape: multi-column, DESC, INCLUDE, NULL keys (in the index,
-- left out of the mirror), on a table loaded and not vacuumed.  The
-- planner takes the (k, w) or the (k DESC) index; the gpubtree_*
-- functions name the index, and build each mirror.
CREATE TABLE ev_shapes (k int8, w int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO ev_shapes
SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE (g * 7919) % 50000 END, g % 13, g
FROM generate_series(1, 60000) g;
CREATE INDEX ev_shapes_kw ON ev_shapes USING gpubtree (k, w);
CREATE INDEX ev_shapes_kd ON ev_shapes USING gpubtree (k DESC) INCLUDE (v);
SELECT ev_check('SELECT count(*), sum(k), min(k), max(k) FROM ev_shapes WHERE k BETWEEN 100 AND 40000');
CREATE INDEX ev_shapes_wk ON ev_shapes USING gpubtree (w, k) INCLUDE (v);
SELECT gpubtree_count('ev_shapes_kw', 100, 40000) = (SELECT count(*) FROM ev_shapes WHERE k BETWEEN 100 AND 40000) AS kw_count,
	   gpubtree_sum('ev_shapes_kd', 'v', 100, 40000) = (SELECT sum(v) FROM ev_shapes WHERE k BETWEEN 100 AND 40000) AS kd_sum,
	   gpubtree_sum('ev_shapes_wk', 'v', 3, 9) = (SELECT sum(v) FROM ev_shapes WHERE w BETWEEN 3 AND 9) AS wk_sum;
SELECT i AS index, m.* FROM unnest(ARRAY['ev_shapes_kw', 'ev_shapes_kd', 'ev_shapes_wk']::regclass[]) i,
	LATERAL ev_mirror(i) m;
DROP TABLE ev_shapes;

-- What stays unknown, and what is left out.  The index made first (so
-- that updates of k are not HOT), then rows loaded, and not vacuumed: rows
-- deleted (committed), HOT-updated rows (w is not indexed; fillfactor
-- leaves room) whose roots' entries stay, rows updated other than by HOT
-- (their old versions' entries), and rows of an aborted insert.  The
-- entries of rows no snapshot sees (deleted, old versions, aborted) are
-- left out: the mirror holds one entry a live row.  The HOT roots', and
-- only those, are left to the visibility map: the mirror lists them, and
-- a query checks the ones in its range in the heap.
CREATE TABLE ev_mixed (k int8, v int8, w int8) WITH (autovacuum_enabled = off, fillfactor = 60);
CREATE INDEX ev_mixed_k ON ev_mixed USING gpubtree (k) INCLUDE (v);
INSERT INTO ev_mixed SELECT g, g % 1000, 0 FROM generate_series(1, 100000) g;
CREATE TEMP TABLE ev_changed (n bigint, hot bool);
WITH d AS (DELETE FROM ev_mixed WHERE k % 331 = 0 RETURNING 1)
INSERT INTO ev_changed SELECT count(*), false FROM d;
WITH u AS (UPDATE ev_mixed SET w = w + 1 WHERE k % 337 = 0 RETURNING 1)
INSERT INTO ev_changed SELECT count(*), true FROM u;
WITH u AS (UPDATE ev_mixed SET k = k + 1000000 WHERE k % 347 = 0 RETURNING 1)
INSERT INTO ev_changed SELECT count(*), false FROM u;
BEGIN;
WITH i AS (INSERT INTO ev_mixed SELECT g, 1, 1 FROM generate_series(200001, 200300) g RETURNING 1)
INSERT INTO ev_changed SELECT count(*), false FROM i;
ROLLBACK;
INSERT INTO ev_changed VALUES (300, false);	-- (the rolled-back insert's rows)
SELECT ev_check('SELECT count(*), sum(v), max(k) FROM ev_mixed WHERE k BETWEEN 1 AND 300000');
SELECT m.decided_by, m.stamped = (SELECT sum(n) FROM ev_changed WHERE hot) AS stamped_are_the_hot_roots,
	   m.entries = (SELECT count(*) FROM ev_mixed) AS an_entry_a_live_row,
	   m.stamped * 64 < (SELECT count(*) FROM ev_mixed) AS few
FROM ev_mirror('ev_mixed_k') m;
-- Changes after the export: the capture trigger logs them.
DELETE FROM ev_mixed WHERE k % 5 = 0 AND k < 20000;
UPDATE ev_mixed SET v = v + 1 WHERE k BETWEEN 50000 AND 50999;
SELECT ev_check('SELECT count(*), sum(v), max(k) FROM ev_mixed WHERE k BETWEEN 1 AND 300000', false);
SELECT count(*) AS problems FROM gpubtree_verify('ev_mixed_k');
-- A VACUUM vouches for the blocks it left all-visible: their entries'
-- inserters no longer matter, and the stamps decide alone again.
-- (The ordinary scans priced out: the all-visible table makes nbtree's
-- cheap, and this asks how the node answers.)
VACUUM ev_mixed;
SET enable_seqscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT ev_check('SELECT count(*), sum(v), max(k) FROM ev_mixed WHERE k BETWEEN 1 AND 300000', false);
RESET enable_seqscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
DROP TABLE ev_mixed, ev_changed;

DROP TABLE ev, ev_copy;
DROP FUNCTION ev_check(text, bool);
DROP FUNCTION ev_mirror(regclass);

-- An index holding more entries than its statistics say: the export, read
-- straight into the BUILD request's segment laid out for the estimate
-- (client.c: gbt_call_build_begin()), outgrows it, moves its entries out
-- and hands them over in a segment of their size; the mirror holds every
-- entry and answers as the index does.
SET gpubtree.build_after_create = off;
CREATE TABLE ev_grown (k int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO ev_grown SELECT g % 700, g FROM generate_series(1, 5000) g;
CREATE INDEX ev_grown_k ON ev_grown USING gpubtree (k) INCLUDE (v);
RESET gpubtree.build_after_create;
VACUUM ev_grown;
UPDATE pg_class SET reltuples = 1 WHERE oid = 'ev_grown_k'::regclass;
SELECT gpubtree_count('ev_grown_k', 100, 599) =
	(SELECT count(*) FROM ev_grown WHERE k BETWEEN 100 AND 599) AS same_count;
SELECT count(*) AS problems FROM gpubtree_verify('ev_grown_k');
SELECT entries = (SELECT count(*) FROM ev_grown) AS every_entry
  FROM gpubtree_mirrors() WHERE index = 'ev_grown_k'::regclass;
DROP TABLE ev_grown;
