-- Partitioned tables: the index cascades to partitions and is used per
-- partition, with pruning.
CREATE TABLE pt (k int8, d date, v int4) PARTITION BY RANGE (d);
CREATE TABLE pt_2025 PARTITION OF pt FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE pt_2026 PARTITION OF pt FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE INDEX pt_k ON pt USING gpubtree (k) INCLUDE (v);
INSERT INTO pt SELECT g, date '2025-01-01' + (g % 700), g FROM generate_series(1, 20000) g;
VACUUM ANALYZE pt;

SELECT c.relname, a.amname
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_am a ON a.oid = c.relam
WHERE i.inhparent = 'pt_k'::regclass ORDER BY 1;

SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT k, v FROM pt WHERE k BETWEEN 465 AND 470 AND d >= '2026-01-01' ORDER BY k;
SELECT k, v FROM pt WHERE k BETWEEN 465 AND 470 AND d >= '2026-01-01' ORDER BY k;
EXPLAIN (COSTS OFF) SELECT k FROM pt ORDER BY k DESC LIMIT 3;
SELECT k FROM pt ORDER BY k DESC LIMIT 3;
RESET enable_seqscan;

-- A new partition gets the index; an attached table with a matching gpubtree
-- index has it adopted.
CREATE TABLE pt_2027 PARTITION OF pt FOR VALUES FROM ('2027-01-01') TO ('2028-01-01');
CREATE TABLE pt_2028 (k int8, d date, v int4);
CREATE INDEX pt_2028_k ON pt_2028 USING gpubtree (k) INCLUDE (v);
ALTER TABLE pt ATTACH PARTITION pt_2028 FOR VALUES FROM ('2028-01-01') TO ('2029-01-01');
SELECT c.relname
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'pt_k'::regclass ORDER BY 1;
-- A btree index on the new partition does not match a gpubtree parent index.
CREATE TABLE pt_2029 (k int8, d date, v int4);
CREATE INDEX pt_2029_k ON pt_2029 USING btree (k) INCLUDE (v);
ALTER TABLE pt ATTACH PARTITION pt_2029 FOR VALUES FROM ('2029-01-01') TO ('2030-01-01');
SELECT count(*) FROM pg_indexes WHERE tablename = 'pt_2029';

-- A partition's own unique gpubtree index works with ON CONFLICT through
-- the parent, which routes the row.
CREATE UNIQUE INDEX pt_2027_k ON pt_2027 USING gpubtree (k);
INSERT INTO pt VALUES (1, '2027-05-05', 1) ON CONFLICT DO NOTHING;
INSERT INTO pt VALUES (1, '2027-05-05', 2) ON CONFLICT DO NOTHING;
SELECT * FROM pt_2027;

-- Unique gpubtree indexes on a partitioned table are refused by PostgreSQL
-- 15, which matches partition keys to btree or hash only (see README).
CREATE UNIQUE INDEX pt_uk ON pt USING gpubtree (k, d);

DROP TABLE pt;
