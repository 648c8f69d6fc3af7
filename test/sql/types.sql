-- Every supported key type: index scans return what a sequential scan does,
-- including NULLs, extreme values, NaN, infinities and -0.
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE ty (
	i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
	d date, ts timestamp, tz timestamptz
);
INSERT INTO ty
SELECT (g % 30000)::int2, g * 7919, g::int8 * 1000003,
	   g / 3.0, g / 7.0,
	   date '2000-01-01' + g, timestamp '2000-01-01' + g * interval '1 hour',
	   timestamptz '2000-01-01 00:00+00' + g * interval '1 minute'
FROM generate_series(-500, 500) g;
INSERT INTO ty VALUES
	(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(32767, 2147483647, 9223372036854775807, 'Infinity', 'Infinity', 'infinity', 'infinity', 'infinity'),
	(-32768, -2147483648, -9223372036854775808, '-Infinity', '-Infinity', '-infinity', '-infinity', '-infinity'),
	(0, 0, 0, 'NaN', 'NaN', NULL, NULL, NULL),
	(0, 0, 0, '-0', '-0', NULL, NULL, NULL),
	(0, 0, 0, 'NaN', 'NaN', NULL, NULL, NULL);

CREATE INDEX ty_i2 ON ty USING gpubtree (i2);
CREATE INDEX ty_i4 ON ty USING gpubtree (i4);
CREATE INDEX ty_i8 ON ty USING gpubtree (i8);
CREATE INDEX ty_f4 ON ty USING gpubtree (f4);
CREATE INDEX ty_f8 ON ty USING gpubtree (f8);
CREATE INDEX ty_d ON ty USING gpubtree (d);
CREATE INDEX ty_ts ON ty USING gpubtree (ts);
CREATE INDEX ty_tz ON ty USING gpubtree (tz);

-- The default operator classes, one per type, and the families they are in.
SELECT c.opcname, f.opfname, c.opcintype::regtype, c.opcdefault
FROM pg_opclass c JOIN pg_opfamily f ON f.oid = c.opcfamily
WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'gpubtree')
ORDER BY 2, 1;

-- nbtree's own validator accepts them.
SELECT c.opcname, amvalidate(c.oid)
FROM pg_opclass c
WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'gpubtree')
ORDER BY 1;

-- Each index is used, and ordered output equals a sort of the heap.
EXPLAIN (COSTS OFF) SELECT f8 FROM ty WHERE f8 >= 'NaN';
SELECT f8 FROM ty WHERE f8 >= 'NaN';
SELECT f4 FROM ty WHERE f4 = 'NaN'::float4;
SELECT f8 FROM ty WHERE f8 = 0 ORDER BY f8;
SELECT f8 FROM ty WHERE f8 > 'Infinity';
SELECT f8 FROM ty ORDER BY f8 DESC NULLS LAST LIMIT 4;
SELECT f4 FROM ty ORDER BY f4 LIMIT 2;
SELECT i8 FROM ty WHERE i8 > 9223372036854775806 OR i8 < -9223372036854775807 ORDER BY i8;
SELECT i2 FROM ty WHERE i2 IS NULL;
SELECT d FROM ty WHERE d < date '1998-08-12' ORDER BY d;
SELECT ts FROM ty WHERE ts >= timestamp '2000-01-21 18:00' ORDER BY ts;
SELECT tz FROM ty WHERE tz BETWEEN timestamptz '2000-01-01 08:15+00' AND timestamptz '2000-01-01 08:20+00' ORDER BY tz;

-- Full agreement with a sequential scan, per type, in index order.
CREATE FUNCTION ty_check(col text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	via_index text;
	via_heap text;
BEGIN
	SET LOCAL enable_seqscan = off;
	EXECUTE format('SELECT string_agg(%1$I::text, '','' ORDER BY %1$I) FROM ty WHERE %1$I IS NOT NULL', col)
		INTO via_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	EXECUTE format('SELECT string_agg(x::text, '','' ORDER BY x) FROM (SELECT %1$I AS x FROM ty WHERE %1$I IS NOT NULL OFFSET 0) s', col)
		INTO via_heap;
	RETURN via_index = via_heap;
END $$;
SELECT c, ty_check(c) FROM unnest('{i2,i4,i8,f4,f8,d,ts,tz}'::text[]) c;

-- Cross-type operators inside each family use the index.
EXPLAIN (COSTS OFF) SELECT i4 FROM ty WHERE i4 < 5::int8 AND i4 > (-3)::int2;
SELECT count(*) FROM ty WHERE i2 = 100::int8;
SELECT count(*) FROM ty WHERE i4 < 5::int8 AND i4 > (-20000)::int2;
SELECT count(*) FROM ty WHERE i8 >= 0::int4;
EXPLAIN (COSTS OFF) SELECT f4 FROM ty WHERE f4 > 100.5::float8;
SELECT count(*) FROM ty WHERE f4 > 100.5::float8;
SELECT count(*) FROM ty WHERE f8 < 0::float4;
EXPLAIN (COSTS OFF) SELECT d FROM ty WHERE d >= timestamp '2001-05-01';
SELECT count(*) FROM ty WHERE d >= timestamp '2001-05-01';
SELECT count(*) FROM ty WHERE ts < date '1999-12-31';
SELECT count(*) FROM ty WHERE tz >= date '2000-01-01';

-- A domain over a supported type takes the base type's operator class.
CREATE DOMAIN posint AS int4 CHECK (VALUE > 0);
CREATE TABLE dom (x posint);
INSERT INTO dom SELECT g FROM generate_series(1, 100) g;
CREATE INDEX dom_x ON dom USING gpubtree (x);
SELECT count(*) FROM dom WHERE x BETWEEN 10 AND 19;

DROP TABLE ty, dom;
DROP DOMAIN posint;
DROP FUNCTION ty_check(text);
