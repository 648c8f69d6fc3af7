-- gpubtree_why_not(query): for each node of the service (the aggregate,
-- the lookup, the join, the service-costed bitmap scan), one query per
-- reason its planner gives for not offering it, and the offers and plan
-- nodes it reports.  Each case names the node, the query, what the node's
-- note must say (a part of it) and the table it is about, and the settings
-- it is planned under; why_check() prints ok, or the node's actual notes.
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET gpubtree.build_after_create = off;

CREATE TABLE wn (k int, v int8, w text);
INSERT INTO wn SELECT g, g, 'w' || g FROM generate_series(1, 20000) g;
CREATE INDEX wn_k ON wn USING gpubtree (k) INCLUDE (v);
-- The other side of the joins: every seventh key.
CREATE TABLE wn_o (x int, y int);
INSERT INTO wn_o SELECT g * 7, g FROM generate_series(1, 2000) g;
CREATE TABLE wn_partial (k int, v int);
INSERT INTO wn_partial SELECT g, g FROM generate_series(1, 2000) g;
CREATE INDEX ON wn_partial USING gpubtree (k) WHERE k > 0;
CREATE TABLE wn_rls (k int, v int);
INSERT INTO wn_rls SELECT g, g FROM generate_series(1, 2000) g;
CREATE INDEX ON wn_rls USING gpubtree (k) INCLUDE (v);
ALTER TABLE wn_rls ENABLE ROW LEVEL SECURITY;
CREATE TABLE wn_parted (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE wn_parted_1 PARTITION OF wn_parted FOR VALUES FROM (0) TO (10000);
CREATE TABLE wn_parted_2 PARTITION OF wn_parted FOR VALUES FROM (10000) TO (20001);
INSERT INTO wn_parted SELECT g, g FROM generate_series(1, 20000) g;
CREATE INDEX ON wn_parted USING gpubtree (k) INCLUDE (v);
-- An index whose mirror nobody has asked for (build_after_create is off).
CREATE TABLE wn_nomirror (k int, v int);
INSERT INTO wn_nomirror SELECT g, g FROM generate_series(1, 20000) g;
CREATE INDEX wn_nomirror_k ON wn_nomirror USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE wn, wn_o, wn_partial, wn_rls, wn_parted, wn_nomirror;

-- why_check(node, query, expect, tbl, settings): ok if one of node's notes
-- for the query contains expect and is about tbl (NULL: the notes of a
-- node in the plan, which name no table), with each 'name=value' of
-- settings set while it is planned; else node's notes as they are.
CREATE FUNCTION why_check(node text, query text, expect text, tbl regclass,
						  settings text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s text;
	saved text[] := '{}';
	hit bool;
	notes text;
	i int;
BEGIN
	FOREACH s IN ARRAY settings LOOP
		saved := saved || ARRAY[split_part(s, '=', 1), current_setting(split_part(s, '=', 1))];
		PERFORM set_config(split_part(s, '=', 1), split_part(s, '=', 2), false);
	END LOOP;
	SELECT bool_or(w.reason LIKE '%' || expect || '%' AND w.relation IS NOT DISTINCT FROM tbl),
		   string_agg(coalesce(w.relation::text, '-') || ': ' || w.reason, E'\n')
	  INTO hit, notes
	  FROM gpubtree_why_not(query) w
	 WHERE w.plan_node = node;
	FOR i IN 1 .. coalesce(array_length(saved, 1), 0) / 2 LOOP
		PERFORM set_config(saved[2 * i - 1], saved[2 * i], false);
	END LOOP;
	RETURN CASE WHEN hit THEN 'ok' ELSE coalesce(notes, 'no note of ' || node) END;
END $$;

-- The cases.  big: a constant array longer than gpubtree.min_gpu_batch;
-- run: one known only when the plan runs.
CREATE TABLE why_cases (id serial, node text, query text, expect text, tbl regclass,
						settings text[] DEFAULT '{}');
CREATE FUNCTION big() RETURNS text LANGUAGE sql AS
$$ SELECT quote_literal(array_agg(g)::text) FROM generate_series(1, 3000) g $$;
CREATE FUNCTION run() RETURNS text LANGUAGE sql AS
$$ SELECT 'ARRAY(SELECT generate_series(1, 3000))' $$;

-- GpubtreeLookup: k = ANY(array).
INSERT INTO why_cases (node, query, expect, tbl, settings) VALUES
('GpubtreeLookup', 'SELECT v FROM wn WHERE k = ANY(' || run() || ')',
 'in the plan', NULL, '{}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE k = ANY(' || run() || ')',
 'offered on index wn_k for an array known only when the plan runs', 'wn', '{}'),
('GpubtreeLookup', 'SELECT k, v FROM wn WHERE k = ANY(' || big() || ')',
 'offered on index wn_k for 3000 keys', 'wn', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE k = ANY(''{1,2,3}'')',
 '= ANY array of 3 elements, fewer than gpubtree.min_gpu_batch (1024)', 'wn', '{}'),
('GpubtreeLookup', 'SELECT k, v FROM wn WHERE k = ANY(' || big() || ')',
 'fewer than gpubtree.min_gpu_batch (5000)', 'wn', '{gpubtree.min_gpu_batch=5000}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE k = ANY(NULL::int[])',
 '= ANY(NULL)', 'wn', '{}'),
('GpubtreeLookup', 'SELECT w FROM wn WHERE k = ANY(' || big() || ')',
 'columns that index wn_k does not hold (w)', 'wn', '{}'),
('GpubtreeLookup', 'SELECT ctid FROM wn WHERE k = ANY(' || run() || ')',
 'a system column or the whole row', 'wn', '{}'),
('GpubtreeLookup', 'SELECT wn FROM wn WHERE k = ANY(' || run() || ')',
 'a system column or the whole row', 'wn', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE k < 10',
 'a key range of 9 rows (estimated), fewer than', 'wn', '{}'),
('GpubtreeLookup', 'SELECT k, v FROM wn WHERE k > 100',
 'offered on index wn_k for the rows of a key range', 'wn', '{}'),
('GpubtreeLookup', 'SELECT w FROM wn WHERE k > 100',
 'columns that index wn_k does not hold (w): rows of a key range', 'wn', '{}'),
('GpubtreeLookup', 'SELECT sum(v) FROM wn WHERE k > 100',
 'for an aggregate or GROUP BY: left to GpubtreeAggregate', 'wn', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE v = ANY(' || run() || ')',
 'no WHERE condition is = ANY(array) or a range on the key of index wn_k', 'wn', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE k = ANY(' || run() || ')',
 'does not probe index wn_k with it', 'wn', '{enable_indexscan=off,enable_bitmapscan=off}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE k = ANY(' || run() || ') FOR UPDATE',
 'FOR UPDATE', 'wn', '{}'),
('GpubtreeLookup', 'UPDATE wn SET v = v WHERE k = ANY(' || run() || ')',
 'not a SELECT', 'wn', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn TABLESAMPLE SYSTEM (50) WHERE k = ANY(' || run() || ')',
 'TABLESAMPLE', 'wn', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn_rls WHERE k = ANY(' || run() || ')',
 'row-level security', 'wn_rls', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn_parted WHERE k = ANY(' || run() || ')',
 'a partition or inheritance child', 'wn_parted_1', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn_partial WHERE k = ANY(' || run() || ')',
 'partial or on an expression', 'wn_partial', '{}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE k = ANY(' || run() || ')',
 'gpubtree.enable_lookup is off', 'wn', '{gpubtree.enable_lookup=off}'),
('GpubtreeLookup', 'SELECT v FROM wn WHERE k = ANY(' || run() || ')',
 'gpubtree.device is off', 'wn', '{gpubtree.device=off}');

-- GpubtreeJoin: an inner join on the key.
INSERT INTO why_cases (node, query, expect, tbl, settings) VALUES
('GpubtreeJoin', 'SELECT o.y, wn.v FROM wn_o o JOIN wn ON wn.k = o.x',
 'in the plan', NULL, '{}'),
('GpubtreeJoin', 'SELECT o.y, wn.v FROM wn_o o JOIN wn ON wn.k = o.x',
 'joined to o: offered on index wn_k', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y, wn.v FROM wn_o o LEFT JOIN wn ON wn.k = o.x',
 'joined to o: a left join', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y FROM wn_o o WHERE EXISTS (SELECT FROM wn WHERE wn.k = o.x)',
 'joined to o: a semi-join', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y FROM wn_o o WHERE NOT EXISTS (SELECT FROM wn WHERE wn.k = o.x)',
 'joined to o: an anti-join', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y, wn.w FROM wn_o o JOIN wn ON wn.k = o.x',
 'joined to o: the join needs columns that index wn_k does not hold (w)', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y, wn FROM wn_o o JOIN wn ON wn.k = o.x',
 'joined to o: the join needs a system column or the whole row', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y, wn.v FROM wn_o o JOIN wn ON wn.v = o.x',
 'joined to o: no join condition is the key of index wn_k', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y, wn.v FROM wn_o o JOIN wn ON wn.k < o.x',
 'joined to o: no join condition is the key of index wn_k', 'wn', '{}'),
('GpubtreeJoin', 'SELECT wn.v, s.one FROM (wn_o o LEFT JOIN (SELECT x, 1 AS one FROM wn_o) s ON s.x = o.y) JOIN wn ON wn.k = o.x',
 'the join''s columns include a placeholder', 'wn', '{}'),
('GpubtreeJoin', 'SELECT wn.v FROM wn_o o, LATERAL (SELECT * FROM wn_o l WHERE l.x = o.y OFFSET 0) l JOIN wn ON wn.k = l.x',
 'joined to l: its rows depend on another table (LATERAL)', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y, wn.v FROM wn_o o JOIN wn ON wn.k = o.x FOR UPDATE',
 'FOR UPDATE', 'wn', '{}'),
('GpubtreeJoin', 'SELECT o.y, n.v FROM wn_o o JOIN wn_nomirror n ON n.k = o.x',
 'index wn_nomirror_k: no current mirror', 'wn_nomirror', '{gpubtree.build_on_scan=off}'),
('GpubtreeJoin', 'SELECT o.y, wn.v FROM wn_o o JOIN wn ON wn.k = o.x',
 'gpubtree.enable_lookup is off', 'wn', '{gpubtree.enable_lookup=off}');

-- The service-costed bitmap scan of a large constant = ANY (costing.c).
INSERT INTO why_cases (node, query, expect, tbl, settings) VALUES
('gpubtree index scan', 'SELECT * FROM wn WHERE k = ANY(' || big() || ')',
 'in the plan: a bitmap scan of index wn_k', 'wn', '{enable_seqscan=off,enable_indexscan=off}'),
('gpubtree index scan', 'SELECT * FROM wn WHERE k = ANY(' || big() || ')',
 'offered a bitmap scan of index wn_k', 'wn', '{}'),
('gpubtree index scan', 'SELECT * FROM wn WHERE k = ANY(''{1,2,3}'')',
 'the longest constant = ANY array has 3 elements, fewer than gpubtree.min_gpu_batch (1024)', 'wn', '{}'),
('gpubtree index scan', 'SELECT * FROM wn WHERE k < 10',
 'no WHERE condition is = ANY of a constant array', 'wn', '{}'),
('gpubtree index scan', 'SELECT * FROM wn WHERE k = ANY(' || run() || ')',
 'no WHERE condition is = ANY of a constant array', 'wn', '{}'),
('gpubtree index scan', 'SELECT * FROM wn WHERE v = ANY(' || big() || ')',
 'no bitmap path of a gpubtree index has the large = ANY on its leading column', 'wn', '{}'),
('gpubtree index scan', 'SELECT * FROM wn WHERE k = ANY(' || big() || ')',
 'enable_bitmapscan is off', 'wn', '{enable_bitmapscan=off}'),
('gpubtree index scan', 'SELECT * FROM wn WHERE k = ANY(' || big() || ')',
 'gpubtree.device is off', 'wn', '{gpubtree.device=off}'),
('gpubtree index scan', 'SELECT * FROM wn_parted WHERE k = ANY(' || big() || ')',
 'a partition or inheritance child', 'wn_parted_1', '{}');

-- GpubtreeAggregate (agg_plan.c).
INSERT INTO why_cases (node, query, expect, tbl, settings) VALUES
('GpubtreeAggregate', 'SELECT count(*), sum(v) FROM wn WHERE k < 15000',
 'offered on index wn_k', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT k % 10, count(*) FROM wn GROUP BY 1',
 'GROUP BY (k % 10)', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT sum(v) FROM wn WHERE v % 5 = 0',
 'a condition other than comparisons, IN, IS NULL, AND, OR and NOT', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT count(DISTINCT v) FROM wn',
 'count(DISTINCT v) is not an aggregate the service answers', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT sum(v) FROM wn WHERE k < 100',
 'gpubtree.enable_aggregate is off', 'wn', '{gpubtree.enable_aggregate=off}'),
('GpubtreeAggregate', 'SELECT sum(v) FROM wn WHERE k < 100',
 'gpubtree.device is off', 'wn', '{gpubtree.device=off}'),
('GpubtreeAggregate', 'SELECT count(*) FROM wn JOIN wn_o ON wn.k = wn_o.x',
 'over a join', NULL, '{}'),
('GpubtreeAggregate', 'SELECT sum(v), rank() OVER () FROM wn',
 'window functions', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT k, count(*) FROM wn GROUP BY ROLLUP (k)',
 'GROUPING SETS', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT count(*) FROM wn_rls',
 'not a plain table', 'wn_rls', '{}'),
('GpubtreeAggregate', 'SELECT count(*) FROM wn_partial WHERE k > 5',
 'partial or on an expression', 'wn_partial', '{}');

-- A subquery's value in what a note shows (deparsed while planning, where
-- PostgreSQL 17 and later look for the plan that sets it): the note, no crash.
INSERT INTO why_cases (node, query, expect, tbl, settings) VALUES
('GpubtreeAggregate', 'SELECT k / (SELECT max(y) FROM wn_o) b, count(*) FROM wn GROUP BY 1',
 'GROUP BY (k / $', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT sum(v) FROM wn WHERE v < (SELECT max(x) FROM wn_o)',
 'WHERE (v < $', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT sum(v) FILTER (WHERE v < (SELECT max(x) FROM wn_o)) FROM wn WHERE k > 5',
 'FILTER (WHERE (v < $', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT sum(v + (SELECT max(x) FROM wn_o)) FROM wn',
 'sum((v + $', 'wn', '{}'),
('GpubtreeAggregate', 'SELECT count(*) FROM wn WHERE v > ALL (SELECT x FROM wn_o WHERE wn_o.y = wn.k)',
 'a condition other than comparisons, IN, IS NULL, AND, OR and NOT', 'wn', '{}');

SELECT id, node, expect, why_check(node, query, expect, tbl, settings) AS result
FROM why_cases ORDER BY id;

-- No table with a gpubtree index: one row that says so.
SELECT plan_node, relation, reason FROM gpubtree_why_not('SELECT * FROM wn_o');
-- The settings are as they were.
SELECT current_setting('gpubtree.enable_lookup') AS enable_lookup,
	   current_setting('gpubtree.device') AS device,
	   current_setting('enable_bitmapscan') AS enable_bitmapscan;

DROP TABLE why_cases, wn, wn_o, wn_partial, wn_rls, wn_parted, wn_nomirror;
DROP FUNCTION why_check(text, text, text, regclass, text[]), big(), run();
