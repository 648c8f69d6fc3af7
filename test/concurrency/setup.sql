CREATE EXTENSION gpubtree;
CREATE TABLE g (k int8, v int8);
INSERT INTO g SELECT (g * 7919) % 200000, g FROM generate_series(1, 200000) g;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX g_k ON g USING gpubtree (k);
CREATE INDEX b_k ON b (k);
VACUUM ANALYZE g;
VACUUM ANALYZE b;

-- Both answers in one statement, so under one snapshot.
CREATE FUNCTION check_range(lo int8, hi int8) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	SELECT (SELECT count(*) || ':' || coalesce(sum(v), 0) FROM g WHERE k BETWEEN lo AND hi) AS a,
		   (SELECT count(*) || ':' || coalesce(sum(v), 0) FROM b WHERE k BETWEEN lo AND hi) AS b
	INTO r;
	IF r.a <> r.b THEN
		RAISE EXCEPTION 'range [%, %]: gpubtree % btree %', lo, hi, r.a, r.b;
	END IF;
END $$;

CREATE FUNCTION check_any(seed int8, n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	keys int8[] := ARRAY(SELECT (seed + g * 7919) % 200000 FROM generate_series(1, n) g);
	r record;
BEGIN
	SELECT (SELECT count(*) || ':' || coalesce(sum(v), 0) FROM g WHERE k = ANY (keys)) AS a,
		   (SELECT count(*) || ':' || coalesce(sum(v), 0) FROM b WHERE k = ANY (keys)) AS b
	INTO r;
	IF r.a <> r.b THEN
		RAISE EXCEPTION '= ANY seed %: gpubtree % btree %', seed, r.a, r.b;
	END IF;
END $$;
