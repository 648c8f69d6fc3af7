-- Bad input gets clear errors with SQLSTATEs.
CREATE TABLE e (t text, n numeric, u uuid, a int4[], i4 int4, b bool, j jsonb);

-- Unsupported key types name the type and the supported ones.
CREATE INDEX ON e USING gpubtree (t);
CREATE INDEX ON e USING gpubtree (i4, n);
CREATE INDEX ON e USING gpubtree (u);
CREATE INDEX ON e USING gpubtree (a);
CREATE INDEX ON e USING gpubtree (b);
-- Expressions are checked by PostgreSQL itself.
CREATE INDEX ON e USING gpubtree ((t || 'x'));
-- An explicit operator class must fit the column.
CREATE INDEX ON e USING gpubtree (t int4_ops);
CREATE INDEX ON e USING gpubtree (i4 no_such_ops);
-- The SQLSTATEs: feature_not_supported, undefined_object, datatype_mismatch.
\set VERBOSITY sqlstate
CREATE INDEX ON e USING gpubtree (t);
CREATE INDEX ON e USING gpubtree ((t || 'x'));
CREATE INDEX ON e USING gpubtree (t int4_ops);
\set VERBOSITY default

-- Any type is fine as an INCLUDE column.
CREATE INDEX e_ok ON e USING gpubtree (i4) INCLUDE (t, n, u, a, j);
INSERT INTO e VALUES ('x', 1.5, '00000000-0000-0000-0000-000000000001', '{1,2}', 7, true, '{}');
SET enable_seqscan = off;
SELECT i4, t, n, a FROM e WHERE i4 = 7;
RESET enable_seqscan;

-- Reloptions are validated as for btree.
CREATE INDEX ON e USING gpubtree (i4) WITH (fillfactor = 5);
CREATE INDEX ON e USING gpubtree (i4) WITH (fillfactor = 101);
CREATE INDEX ON e USING gpubtree (i4) WITH (deduplicate_items = maybe);
CREATE INDEX ON e USING gpubtree (i4) WITH (pages_per_range = 4);
-- Options of other access methods are refused.
CREATE INDEX ON e USING gpubtree (i4) WITH (buffering = on);

-- A missing table is reported by PostgreSQL, not by the type check.
CREATE INDEX ON no_such_table USING gpubtree (x);
-- The type check does not fire for other access methods.
CREATE INDEX e_t_btree ON e USING btree (t);
-- The event trigger function refuses direct calls.
SELECT gpubtree_check_create_index();

DROP TABLE e;
