-- Index order used by the planner as btree's is: merge joins, min/max,
-- DISTINCT, GROUP BY, window functions, and cursors scrolling backwards.
CREATE TABLE a (k int4, v int4);
CREATE TABLE b (k int8, w int4);
INSERT INTO a SELECT g, g * 2 FROM generate_series(1, 5000) g;
INSERT INTO b SELECT g / 2, g FROM generate_series(1, 6000) g;
CREATE INDEX a_k ON a USING gpubtree (k);
CREATE INDEX b_k ON b USING gpubtree (k);
VACUUM ANALYZE a;
VACUUM ANALYZE b;

SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_sort = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- Merge join on a cross-type (int4 = int8) key, fed by both indexes in order.
EXPLAIN (COSTS OFF) SELECT count(*), sum(a.v + b.w) FROM a JOIN b ON a.k = b.k;
SELECT count(*), sum(a.v + b.w) FROM a JOIN b ON a.k = b.k;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_sort;
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_mergejoin = off;
SELECT count(*), sum(a.v + b.w) FROM a JOIN b ON a.k = b.k;
RESET enable_mergejoin;

-- explain_filter(q): the lines of EXPLAIN q, the same on every PostgreSQL
-- version: without 18's "Index Searches" and "Disabled" lines and its two
-- decimals of actual rows, and InitPlans as 17 names them.
CREATE FUNCTION explain_filter(q text) RETURNS TABLE ("QUERY PLAN" text)
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	i int;
BEGIN
	FOR line IN EXECUTE q LOOP
		CONTINUE WHEN line ~ '^\s*(Index Searches: \d+|Disabled: true)$';
		line := regexp_replace(line, '(rows=\d+)\.00 ', '\1 ', 'g');
		line := regexp_replace(line, '^(\s*InitPlan \d+) \(returns \$\d+\)$', '\1');
		FOR i IN REVERSE 9..0 LOOP
			line := replace(line, '$' || i, format('(InitPlan %s).col1', i + 1));
		END LOOP;
		"QUERY PLAN" := line;
		RETURN NEXT;
	END LOOP;
END $$;

-- min/max through the index.
SELECT * FROM explain_filter($$EXPLAIN (COSTS OFF) SELECT min(k), max(k) FROM b$$);
SELECT min(k), max(k) FROM b;

-- GROUP BY and DISTINCT from index order.
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM b WHERE k < 4 GROUP BY k;
SELECT k, count(*) FROM b WHERE k < 4 GROUP BY k;
SELECT count(DISTINCT k) FROM b;
RESET enable_hashagg;

-- Window function over index order.
SELECT k, w, row_number() OVER (ORDER BY k, w) FROM b WHERE k BETWEEN 10 AND 11;

-- A scrollable cursor reads the index backwards and forwards.
BEGIN;
SET LOCAL enable_seqscan = off;
DECLARE c SCROLL CURSOR FOR SELECT k FROM a WHERE k BETWEEN 100 AND 105 ORDER BY k;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH PRIOR FROM c;
COMMIT;

-- Mark/restore (merge join inner rescans) over duplicates.
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_seqscan = off;
SET enable_sort = off;
SELECT count(*) FROM b b1 JOIN b b2 ON b1.k = b2.k WHERE b1.k < 100;
RESET ALL;
SELECT count(*) FROM b b1 JOIN b b2 ON b1.k = b2.k WHERE b1.k < 100;

DROP TABLE a, b;
DROP FUNCTION explain_filter(text);
