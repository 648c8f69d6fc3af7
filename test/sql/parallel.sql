-- Parallel index build and parallel index scans.
-- (Aggregates here test scans: the aggregates test covers the GpubtreeAggregate node.)
SET gpubtree.enable_aggregate = off;
CREATE TABLE p (k int8, v int8);
INSERT INTO p SELECT (g * 7919) % 100000, g FROM generate_series(1, 100000) g;
VACUUM ANALYZE p;

-- PostgreSQL 15 plans build workers only for btree; gpubtree asks the
-- planner itself, on the same terms.
-- (The type-check event trigger is disabled here only because its DEBUG
-- line carries an OID.)
ALTER EVENT TRIGGER gpubtree_check_create_index DISABLE;
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
SET client_min_messages = debug1;
CREATE INDEX p_k ON p USING gpubtree (k) INCLUDE (v);
RESET client_min_messages;
SET max_parallel_maintenance_workers = 0;
SET client_min_messages = debug1;
CREATE INDEX p_k_serial ON p USING gpubtree (k) INCLUDE (v);
RESET client_min_messages;
RESET max_parallel_maintenance_workers;
ALTER EVENT TRIGGER gpubtree_check_create_index ENABLE;
SELECT pg_relation_size('p_k') = pg_relation_size('p_k_serial') AS same_size;
DROP INDEX p_k_serial;

-- A parallel build inside CREATE INDEX CONCURRENTLY and REINDEX, too.
SET max_parallel_maintenance_workers = 2;
CREATE INDEX CONCURRENTLY p_v ON p USING gpubtree (v);
REINDEX INDEX p_v;
RESET max_parallel_maintenance_workers;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM p WHERE k >= 25000;
SELECT count(*), sum(v) FROM p WHERE k >= 25000;
RESET ALL;
SELECT count(*), sum(v) FROM p WHERE k < 50000;
SELECT count(*), sum(v) FROM p WHERE k >= 25000;

DROP TABLE p;
