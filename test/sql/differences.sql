-- What differs from btree, because PostgreSQL 15 checks for BTREE_AM_OID.
-- Each case here is listed in the README under "Differences from btree".
CREATE TABLE d (k int4 NOT NULL, k2 int4, v int4);
INSERT INTO d SELECT g, g % 10, g FROM generate_series(1, 1000) g;
CREATE UNIQUE INDEX d_k ON d USING gpubtree (k);
CREATE INDEX d_k2_k ON d USING gpubtree (k2, k);
VACUUM ANALYZE d;
SET enable_seqscan = off;

-- 1. Row comparisons are not index conditions (match_rowcompare_to_indexcol).
EXPLAIN (COSTS OFF) SELECT * FROM d WHERE (k2, k) > (8, 990);
SELECT count(*) FROM d WHERE (k2, k) > (8, 990);
RESET enable_seqscan;

-- 2. A foreign key cannot reference a column whose unique index is gpubtree.
CREATE TABLE d_ref (k int4 REFERENCES d (k));

-- 3. A constraint cannot adopt a gpubtree index (UNIQUE / PRIMARY KEY USING INDEX).
ALTER TABLE d ADD PRIMARY KEY USING INDEX d_k;

-- 4. amcheck and pageinspect's btree functions accept only btree indexes;
-- gpubtree_index_check() runs amcheck's verification on a gpubtree index.
SELECT gpubtree_index_check('d_k');
CREATE EXTENSION amcheck;
SELECT bt_index_check('d_k');
SELECT gpubtree_index_check('d_k');
SELECT gpubtree_index_check('d_k2_k', heapallindexed => true);
SELECT gpubtree_index_check('d_k', true, parent => true);
CREATE INDEX d_v_btree ON d USING btree (v);
SELECT gpubtree_index_check('d_v_btree');
SELECT gpubtree_index_check('d');
-- Like amcheck's functions, not for PUBLIC; and only those who may run
-- amcheck may run it through gpubtree.
CREATE ROLE regress_gpubtree_nobody;
GRANT SELECT ON d TO regress_gpubtree_nobody;
SET ROLE regress_gpubtree_nobody;
SELECT gpubtree_index_check('d_k');
RESET ROLE;
GRANT EXECUTE ON FUNCTION gpubtree_index_check(regclass, boolean, boolean) TO regress_gpubtree_nobody;
SET ROLE regress_gpubtree_nobody;
SELECT gpubtree_index_check('d_k');
RESET ROLE;
GRANT EXECUTE ON FUNCTION bt_index_check(regclass, boolean) TO regress_gpubtree_nobody;
SET ROLE regress_gpubtree_nobody;
SELECT gpubtree_index_check('d_k');
RESET ROLE;
REVOKE ALL ON FUNCTION bt_index_check(regclass, boolean) FROM regress_gpubtree_nobody;
REVOKE ALL ON FUNCTION gpubtree_index_check(regclass, boolean, boolean) FROM regress_gpubtree_nobody;
REVOKE SELECT ON d FROM regress_gpubtree_nobody;
DROP ROLE regress_gpubtree_nobody;
-- The label is gone after the check: amcheck itself still refuses.
SELECT bt_index_check('d_k');
DROP EXTENSION amcheck;
CREATE EXTENSION pageinspect;
SELECT * FROM bt_metap('d_k');
DROP EXTENSION pageinspect;

-- 5. REFRESH MATERIALIZED VIEW CONCURRENTLY needs a unique btree index.
CREATE MATERIALIZED VIEW d_mv AS SELECT k, v FROM d;
CREATE UNIQUE INDEX d_mv_k ON d_mv USING gpubtree (k);
REFRESH MATERIALIZED VIEW CONCURRENTLY d_mv;
REFRESH MATERIALIZED VIEW d_mv;
DROP MATERIALIZED VIEW d_mv;

-- 6. ON CONFLICT (col opclass) names btree operator classes only.
INSERT INTO d VALUES (1, 1, 1) ON CONFLICT (k) DO NOTHING;
INSERT INTO d VALUES (1, 1, 1) ON CONFLICT (k int4_ops) DO NOTHING;

-- 7. The planner's cost estimate is btree's, tree height included.
SET enable_seqscan = off;
EXPLAIN SELECT * FROM d WHERE k = 5;
CREATE INDEX d_k_btree ON d USING btree (k);
EXPLAIN SELECT * FROM d WHERE k = 5;
DROP INDEX d_k_btree;
RESET enable_seqscan;

-- What stays the same: the same operators, so btree-only planner features
-- that look at operators (not at the index) still apply.
-- Merge-joinable and hashable equality, and btree ordering operators:
SELECT oprname, oprcanmerge, oprcanhash FROM pg_operator
WHERE oid = (SELECT amopopr FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
			 JOIN pg_am a ON a.oid = f.opfmethod
			 WHERE a.amname = 'gpubtree' AND f.opfname = 'integer_ops'
			   AND amoplefttype = 'int4'::regtype AND amoprighttype = 'int4'::regtype
			   AND amopstrategy = 3);

DROP TABLE d CASCADE;
