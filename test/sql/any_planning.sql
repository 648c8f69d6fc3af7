-- A large constant = ANY on a gpubtree index gets the service's bitmap path
-- when it is the cheapest, whether or not the table is all-visible (an
-- index-only scan costed at the service's price must not hide it), and
-- below gpubtree.min_gpu_batch it stays on btree's costs.  The columns the
-- query reads are in the index, so the GpubtreeLookup node is cheaper
-- still; without it (gpubtree.enable_lookup = off), the bitmap path.
CREATE TABLE ap (k int8, v int8);
INSERT INTO ap SELECT i, i FROM generate_series(1, 200000) i;
CREATE INDEX ap_k ON ap USING gpubtree (k) INCLUDE (v);
ANALYZE ap;
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION ap_plan(n int, OUT visible text, OUT plan text) RETURNS record
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	plan := '';
	visible := (SELECT CASE WHEN relallvisible = 0 THEN 'none' ELSE 'all' END
				FROM pg_class WHERE oid = 'ap'::regclass);
	FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT k, v FROM ap WHERE k = ANY (%L::int8[])',
							   (SELECT array_agg(i * 7) FROM generate_series(1, n) i))
	LOOP
		IF line ~ 'Scan' AND line !~ ':' THEN
			plan := plan || CASE WHEN plan = '' THEN '' ELSE ' / ' END ||
				regexp_replace(trim(line), '^->\s*', '');
		END IF;
	END LOOP;
END $$;
-- Not all-visible (no VACUUM yet), then all-visible.
SELECT * FROM ap_plan(5000);
SELECT * FROM ap_plan(10);
SET gpubtree.enable_lookup = off;
SELECT * FROM ap_plan(5000);
RESET gpubtree.enable_lookup;
VACUUM ap;
SELECT * FROM ap_plan(5000);
SELECT * FROM ap_plan(10);
SET gpubtree.enable_lookup = off;
SELECT * FROM ap_plan(5000);
RESET gpubtree.enable_lookup;
-- The answer is nbtree's either way.
SELECT count(*), sum(v) FROM ap WHERE k = ANY ((SELECT array_agg(i * 7) FROM generate_series(1, 5000) i)::int8[]);
SET gpubtree.device = off;
SELECT count(*), sum(v) FROM ap WHERE k = ANY ((SELECT array_agg(i * 7) FROM generate_series(1, 5000) i)::int8[]);
SELECT * FROM ap_plan(5000);
RESET gpubtree.device;
DROP TABLE ap;
DROP FUNCTION ap_plan;
