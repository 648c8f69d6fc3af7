-- VACUUM takes every dead TID out of the mirror, also those whose index
-- entries nbtree removed by itself before VACUUM came (simple deletion of
-- LP_DEAD items when a leaf fills): nbtree's bulk-delete pass never sees
-- those, so a mirror told only what nbtree removed would keep them, and
-- pair their old keys with the TIDs new rows take after VACUUM
-- (gpubtree_verify() then reports each).  The dead rows here are inserts
-- of a rolled-back savepoint that reached the mirror before the rollback
-- (a service query inside the savepoint sent them).
-- The regression cluster preloads gpubtree, so the service runs.
SET max_parallel_workers_per_gather = 0;

-- vs_check(cond): count and sum of k over the rows of vs WHERE cond through
-- the GpubtreeAggregate node, which trusts the mirror's entries on
-- all-visible pages without the heap, against the ordinary plan
-- (gpubtree.device = off); and whether the service answered.
CREATE FUNCTION vs_check(cond text) RETURNS text LANGUAGE plpgsql
SET enable_seqscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
SET enable_bitmapscan = off AS $$
DECLARE
	q text := 'SELECT count(*) AS n, sum(k) AS s FROM vs WHERE ' || cond;
	plan jsonb;
	g record;
	c record;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, COSTS OFF, SUMMARY OFF) ' || q INTO plan;
	EXECUTE q INTO g;
	PERFORM set_config('gpubtree.device', 'off', true);
	EXECUTE q INTO c;
	PERFORM set_config('gpubtree.device', 'auto', true);
	RETURN format('count=%s sum=%s same_as_plain=%s by_service=%s', g.n, g.s,
		g.n = c.n AND g.s IS NOT DISTINCT FROM c.s,
		coalesce(jsonb_path_query_first(plan, 'strict $.**."Answered by"') = to_jsonb('GPU service'::text), false));
END $$;

CREATE TABLE vs (k int8, v int4) WITH (autovacuum_enabled = off);
INSERT INTO vs SELECT g, g % 10 FROM generate_series(1, 4000) g;
CREATE INDEX vs_k ON vs USING gpubtree (k);
VACUUM vs;
SELECT vs_check('k >= 1') AS mirrored;

-- 400 rows inserted in a savepoint, in the mirror (the query inside sent
-- them), rolled back: dead.  Their TIDs are kept for later.
BEGIN;
SAVEPOINT s;
INSERT INTO vs SELECT 1001 + g % 400, 0 FROM generate_series(0, 399) g;
SELECT vs_check('k >= 1') AS inside_savepoint;
SELECT '{' || string_agg('"' || ctid || '"', ',') || '}' AS dead_tids FROM vs WHERE v = 0 \gset
ROLLBACK TO s;
COMMIT;
SELECT vs_check('k >= 1') AS after_rollback;

-- An index scan over their keys marks their entries LP_DEAD (no snapshot
-- is older than the rollback).
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SELECT count(v) FROM vs WHERE k BETWEEN 1001 AND 1400;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;

-- As many new entries into the same leaves: nbtree makes room by removing
-- the LP_DEAD ones, so the index does not grow.
SELECT pg_relation_size('vs_k') AS size_before \gset
INSERT INTO vs SELECT 1001 + g % 400, 1 FROM generate_series(0, 399) g;
SELECT pg_relation_size('vs_k') = :size_before AS removed_by_nbtree;

-- VACUUM frees the dead rows' line pointers; new rows with other keys take
-- some of them.
VACUUM vs;
INSERT INTO vs SELECT g, 7 FROM generate_series(20001, 20400) g;
SELECT count(*) > 0 AS some_tids_reused FROM vs WHERE ctid = ANY (:'dead_tids'::tid[]) AND k > 20000;
-- Nothing of the dead rows is left in the mirror.
SELECT * FROM gpubtree_verify('vs_k');
VACUUM vs;
SELECT vs_check('k BETWEEN 1001 AND 1400') AS old_keys, vs_check('k > 20000') AS new_keys;
SELECT vs_check('k >= 1') AS all_rows;

DROP TABLE vs;
DROP FUNCTION vs_check(text);
