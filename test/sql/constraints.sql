-- UNIQUE, ON CONFLICT, NULLS NOT DISTINCT, exclusion constraints.
CREATE TABLE u (k int4, v text);
CREATE UNIQUE INDEX u_k ON u USING gpubtree (k);
INSERT INTO u VALUES (1, 'one'), (2, 'two'), (NULL, 'null a'), (NULL, 'null b');
INSERT INTO u VALUES (1, 'again');
-- ON CONFLICT infers the gpubtree unique index as arbiter.
INSERT INTO u VALUES (1, 'uno'), (3, 'tres') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO u VALUES (2, 'dos') ON CONFLICT (k) DO NOTHING;
INSERT INTO u VALUES (2, 'dos') ON CONFLICT ON CONSTRAINT u_k DO NOTHING;
SELECT * FROM u ORDER BY k NULLS LAST, v;
UPDATE u SET k = 2 WHERE k = 3;
-- Uniqueness is checked across the whole index after a bulk update.
UPDATE u SET k = k + 1 WHERE k IS NOT NULL;
SELECT * FROM u ORDER BY k NULLS LAST, v;

-- Unique on several columns with INCLUDE.
CREATE TABLE u2 (a int8, b date, c float8);
CREATE UNIQUE INDEX u2_ab ON u2 USING gpubtree (a, b) INCLUDE (c);
INSERT INTO u2 VALUES (1, '2026-01-01', 1.5), (1, '2026-01-02', 2.5);
INSERT INTO u2 VALUES (1, '2026-01-01', 9);
INSERT INTO u2 VALUES (1, '2026-01-01', 9) ON CONFLICT (a, b) DO UPDATE SET c = u2.c + excluded.c;
SELECT * FROM u2 ORDER BY a, b;

-- NULLS NOT DISTINCT (PostgreSQL 15).
CREATE TABLE u3 (k int4);
CREATE UNIQUE INDEX u3_k ON u3 USING gpubtree (k) NULLS NOT DISTINCT;
INSERT INTO u3 VALUES (NULL);
INSERT INTO u3 VALUES (NULL);

-- A unique index built over duplicates fails as btree does.
CREATE TABLE u4 (k int4);
INSERT INTO u4 VALUES (1), (1);
CREATE UNIQUE INDEX u4_k ON u4 USING gpubtree (k);

-- Deferred uniqueness is not possible for a bare index (as with btree), and
-- a constraint cannot adopt a gpubtree index: see README, Differences.
ALTER TABLE u ADD CONSTRAINT u_k_c UNIQUE USING INDEX u_k;

-- Exclusion constraint using the gpubtree equality operator.
CREATE TABLE ex (k int4, EXCLUDE USING gpubtree (k WITH =));
INSERT INTO ex VALUES (1), (2);
INSERT INTO ex VALUES (2);
SELECT * FROM ex ORDER BY k;

-- Replica identity may use a unique gpubtree index on NOT NULL columns.
CREATE TABLE ri (k int4 NOT NULL, v int4);
CREATE UNIQUE INDEX ri_k ON ri USING gpubtree (k);
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_k;
SELECT relreplident FROM pg_class WHERE relname = 'ri';
SELECT indisreplident FROM pg_index WHERE indexrelid = 'ri_k'::regclass;

DROP TABLE u, u2, u3, u4, ex, ri;

-- ON CONFLICT in a data-modifying CTE, in a prepared statement, and in a
-- subtransaction that fails: the index keeps working afterwards.
CREATE TABLE oc (k int8, n int4);
CREATE UNIQUE INDEX oc_k ON oc USING gpubtree (k);
WITH ins AS (
	INSERT INTO oc SELECT g % 5, 1 FROM generate_series(1, 5) g
	ON CONFLICT (k) DO UPDATE SET n = oc.n + 1 RETURNING k)
SELECT count(*) FROM ins;
PREPARE up(int8) AS INSERT INTO oc VALUES ($1, 1) ON CONFLICT (k) DO UPDATE SET n = oc.n + 1;
EXECUTE up(1); EXECUTE up(1); EXECUTE up(7);
DO $$
BEGIN
	INSERT INTO oc VALUES (2, 1) ON CONFLICT (k) DO UPDATE SET n = 1 / 0;
EXCEPTION WHEN division_by_zero THEN
	RAISE NOTICE 'caught %', SQLERRM;
END $$;
INSERT INTO oc VALUES (2, 1) ON CONFLICT DO NOTHING;
SELECT * FROM oc ORDER BY k;
-- The in-memory btree label is gone after each statement, including the
-- failed one: amcheck, which checks relam, still refuses the index.
CREATE EXTENSION amcheck;
SELECT bt_index_check('oc_k');
DROP EXTENSION amcheck;
DROP TABLE oc;
