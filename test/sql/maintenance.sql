-- VACUUM, REINDEX [CONCURRENTLY], CREATE INDEX CONCURRENTLY, CLUSTER,
-- VACUUM FULL, TRUNCATE, column type changes: the index stays right.
CREATE TABLE m (k int8, v int4);
INSERT INTO m SELECT g % 2000, g FROM generate_series(1, 40000) g;
CREATE INDEX m_k ON m USING gpubtree (k) INCLUDE (v);

CREATE FUNCTION m_agree() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	a text;
	b text;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	SELECT string_agg(k || ':' || v, ',' ORDER BY k, v) INTO a FROM m WHERE k BETWEEN 100 AND 400;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SELECT string_agg(k || ':' || v, ',' ORDER BY k, v) INTO b FROM m WHERE k BETWEEN 100 AND 400;
	RETURN a = b;
END $$;

DELETE FROM m WHERE v % 3 = 0;
VACUUM m;
SELECT m_agree() AS after_vacuum;
INSERT INTO m SELECT g % 2000, -g FROM generate_series(1, 10000) g;
SELECT m_agree() AS after_tid_reuse;

SELECT relfilenode AS before_reindex FROM pg_class WHERE relname = 'm_k' \gset
REINDEX INDEX m_k;
SELECT relfilenode <> :before_reindex AS new_storage FROM pg_class WHERE relname = 'm_k';
SELECT m_agree() AS after_reindex;
REINDEX INDEX CONCURRENTLY m_k;
SELECT m_agree() AS after_reindex_concurrently;
REINDEX TABLE CONCURRENTLY m;
SELECT indisvalid FROM pg_index WHERE indexrelid = 'm_k'::regclass;

CREATE INDEX CONCURRENTLY m_v ON m USING gpubtree (v);
SELECT indisvalid, indisready FROM pg_index WHERE indexrelid = 'm_v'::regclass;
SET enable_seqscan = off;
SELECT count(*) FROM m WHERE v BETWEEN -100 AND 100;
RESET enable_seqscan;
DROP INDEX CONCURRENTLY m_v;

-- CLUSTER on a gpubtree index (PostgreSQL uses an index scan, not a sort,
-- for non-btree indexes: see README).
CLUSTER m USING m_k;
SELECT indisclustered FROM pg_index WHERE indexrelid = 'm_k'::regclass;
SELECT bool_and(k >= prev) AS heap_in_key_order
FROM (SELECT k, lag(k, 1, k) OVER (ORDER BY ctid) AS prev FROM m) s;
SELECT m_agree() AS after_cluster;

VACUUM FULL m;
SELECT m_agree() AS after_vacuum_full;

ALTER TABLE m ALTER COLUMN k TYPE int4;
SELECT pg_get_indexdef('m_k'::regclass);
SELECT m_agree() AS after_alter_type;

TRUNCATE m;
INSERT INTO m SELECT g, g FROM generate_series(1, 1000) g;
SELECT m_agree() AS after_truncate;

-- The build reports nbtree's phases to pg_stat_progress_create_index.
SELECT phase, pg_indexam_progress_phasename(a.oid, phase)
FROM pg_am a, generate_series(1, 5) phase
WHERE a.amname = 'gpubtree';

-- A rolled-back CREATE INDEX leaves nothing behind.
BEGIN;
CREATE INDEX m_tmp ON m USING gpubtree (v);
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'm_tmp';

DROP FUNCTION m_agree();
DROP TABLE m;
