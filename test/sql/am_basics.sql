-- The access method itself: properties, and the btree features users rely on.
-- (Aggregates here test scans: the aggregates test covers the GpubtreeAggregate node.)
SET gpubtree.enable_aggregate = off;
SELECT amname, amtype FROM pg_am WHERE amname = 'gpubtree';

SELECT p, pg_indexam_has_property(a.oid, p)
FROM pg_am a, unnest(array['can_order', 'can_unique', 'can_multi_col',
						   'can_exclude', 'can_include']) p
WHERE a.amname = 'gpubtree';

CREATE TABLE t (k int8, k2 int4, v int8, note text);
INSERT INTO t
SELECT g % 1000, g % 7, g, 'row ' || g FROM generate_series(1, 20000) g;
INSERT INTO t VALUES (NULL, 1, -1, 'null key'), (NULL, NULL, -2, 'all null');

-- INCLUDE columns, multi-column key, DESC / NULLS FIRST.
CREATE INDEX t_k_incl ON t USING gpubtree (k) INCLUDE (v);
CREATE INDEX t_k2_k ON t USING gpubtree (k2 DESC NULLS FIRST, k);
VACUUM ANALYZE t;

SELECT i.indexrelid::regclass, p,
	   pg_index_column_has_property(i.indexrelid, 1, p)
FROM pg_index i, unnest(array['asc', 'desc', 'nulls_first', 'orderable',
							  'returnable', 'search_array', 'search_nulls']) p
WHERE i.indrelid = 't'::regclass
ORDER BY 1, 2;
SELECT pg_index_column_has_property('t_k_incl', 2, 'returnable') AS include_returnable;
SELECT pg_index_has_property('t_k_incl', 'backward_scan') AS backward,
	   pg_index_has_property('t_k_incl', 'bitmap_scan') AS bitmap,
	   pg_index_has_property('t_k_incl', 'index_scan') AS plain;

SET enable_seqscan = off;

-- Index-only scan returning an INCLUDE column.
EXPLAIN (COSTS OFF) SELECT k, v FROM t WHERE k = 42 ORDER BY v;
SELECT k, v FROM t WHERE k = 42 ORDER BY v LIMIT 5;

-- Plain index scan, forward and backward, with ORDER BY ... LIMIT.
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE k >= 998 ORDER BY k DESC, v DESC LIMIT 3;
EXPLAIN (COSTS OFF) SELECT k, note FROM t ORDER BY k DESC LIMIT 3;
SELECT k, note FROM t WHERE k IS NOT NULL ORDER BY k DESC, v LIMIT 3;
SELECT k, note FROM t ORDER BY k NULLS FIRST, v LIMIT 2;
RESET enable_indexonlyscan;

-- Multi-column: leading column DESC NULLS FIRST matches ORDER BY without a sort.
EXPLAIN (COSTS OFF) SELECT k2, k FROM t ORDER BY k2 DESC NULLS FIRST, k LIMIT 4;
SELECT k2, k FROM t ORDER BY k2 DESC NULLS FIRST, k LIMIT 4;
EXPLAIN (COSTS OFF) SELECT k2, k FROM t ORDER BY k2 NULLS LAST, k DESC LIMIT 4;
SELECT k2, k FROM t ORDER BY k2 NULLS LAST, k DESC LIMIT 4;
SELECT count(*) FROM t WHERE k2 = 3 AND k BETWEEN 100 AND 199;

-- NULL searches.
SELECT count(*) FROM t WHERE k IS NULL;
SELECT count(*) FROM t WHERE k2 IS NULL;
SELECT count(*) FROM t WHERE k IS NOT NULL;

-- Bitmap scans, and = ANY(array) in each scan kind.
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE k BETWEEN 10 AND 20;
SELECT count(*), sum(v) FROM t WHERE k BETWEEN 10 AND 20;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE k = ANY ('{1,2,3,NULL,999999}');
SELECT count(*), sum(v) FROM t WHERE k = ANY ('{1,2,3,NULL,999999}');
SELECT count(*) FROM t WHERE k = ANY ('{}'::int8[]);
RESET enable_indexscan;
RESET enable_indexonlyscan;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k, v FROM t WHERE k = ANY ('{3,1,2}') ORDER BY k, v LIMIT 4;
SELECT k, v FROM t WHERE k = ANY ('{3,1,2}') ORDER BY k, v LIMIT 4;
SELECT count(*) FROM t WHERE k = ANY (ARRAY(SELECT generate_series(0, 999, 3)::int8));

-- Index answers agree with the heap for every scan kind.
CREATE FUNCTION t_sum(lo int8, hi int8) RETURNS TABLE (kind text, n bigint, s numeric)
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_indexonlyscan = on;
	RETURN QUERY SELECT 'index only', count(*), sum(v) FROM t WHERE k BETWEEN lo AND hi;
	SET LOCAL enable_indexonlyscan = off;
	RETURN QUERY SELECT 'index', count(*), sum(v) FROM t WHERE k BETWEEN lo AND hi;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_bitmapscan = on;
	RETURN QUERY SELECT 'bitmap', count(*), sum(v) FROM t WHERE k BETWEEN lo AND hi;
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_seqscan = on;
	RETURN QUERY SELECT 'seq', count(*), sum(v) FROM t WHERE k BETWEEN lo AND hi;
END $$;
SELECT * FROM t_sum(100, 350);
SELECT count(DISTINCT (n, s)) AS distinct_answers FROM t_sum(-5, 5000);

-- DML keeps the index in step.
UPDATE t SET k = k + 5000 WHERE k < 10;
DELETE FROM t WHERE k BETWEEN 500 AND 509;
SELECT count(DISTINCT (n, s)) AS distinct_answers FROM t_sum(0, 10000);
SELECT * FROM t_sum(5000, 5009);

-- Index reloptions are nbtree's.
CREATE INDEX t_ff ON t USING gpubtree (k) WITH (fillfactor = 60, deduplicate_items = off);
SELECT reloptions FROM pg_class WHERE relname = 't_ff';
ALTER INDEX t_ff SET (fillfactor = 90);
ALTER INDEX t_ff RESET (deduplicate_items);
SELECT reloptions FROM pg_class WHERE relname = 't_ff';
SELECT pg_relation_size('t_ff') > pg_relation_size('t_k_incl') AS lower_fill_is_larger;

-- Deduplication: on by default for integers, so duplicates take less room.
CREATE TABLE dup (k int4);
INSERT INTO dup SELECT g % 10 FROM generate_series(1, 50000) g;
CREATE INDEX dup_dedup ON dup USING gpubtree (k);
CREATE INDEX dup_nodedup ON dup USING gpubtree (k) WITH (deduplicate_items = off);
SELECT pg_relation_size('dup_dedup') < pg_relation_size('dup_nodedup') / 2 AS deduplicated;

-- Unlogged and temporary tables.
CREATE UNLOGGED TABLE ul (k int4);
CREATE INDEX ul_k ON ul USING gpubtree (k);
INSERT INTO ul SELECT generate_series(1, 100);
CREATE TEMP TABLE tt (k int4);
CREATE INDEX tt_k ON tt USING gpubtree (k);
INSERT INTO tt SELECT generate_series(1, 100);
SELECT (SELECT count(*) FROM ul WHERE k > 90), (SELECT count(*) FROM tt WHERE k > 90);
-- Indexes dropped at every stage of a transaction's end (ON COMMIT DROP
-- runs after pre-commit), in rolled-back transactions (prepared ones: the
-- twophase test).
BEGIN;
CREATE TEMP TABLE ocd (k int4) ON COMMIT DROP;
CREATE INDEX ocd_k ON ocd USING gpubtree (k);
COMMIT;
BEGIN;
DROP INDEX ul_k;
ROLLBACK;
SELECT count(*) FROM ul WHERE k > 90;
BEGIN;
CREATE TEMP TABLE oc (k int4) ON COMMIT DROP;
CREATE INDEX oc_k ON oc USING gpubtree (k);
INSERT INTO oc SELECT generate_series(1, 100);
SELECT count(*) FROM oc WHERE k > 90;
COMMIT;
BEGIN;
CREATE TEMP TABLE oc2 (k int4, t text);
INSERT INTO oc2 SELECT g, repeat('x', g) FROM generate_series(1, 50) g;
DROP TABLE oc2;
COMMIT;
SELECT to_regclass('oc') IS NULL AS dropped_at_commit;

-- pg_get_indexdef (what pg_dump emits) round-trips.
SELECT pg_get_indexdef('t_k2_k'::regclass);
SELECT pg_get_indexdef('t_k_incl'::regclass);
SELECT pg_get_indexdef('t_ff'::regclass);

DROP FUNCTION t_sum(int8, int8);
DROP TABLE t, dup, ul, tt;
