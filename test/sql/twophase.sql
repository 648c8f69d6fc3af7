-- Prepared transactions with gpubtree indexes: an index dropped in a
-- prepared transaction, and a mirrored table changed in one, committed and
-- rolled back.  A server without prepared transactions
-- (max_prepared_transactions = 0, the default) refuses each PREPARE: the
-- alternative output, twophase_1.out.
SET client_min_messages = warning;
SET gpubtree.build_wait = '60s';
SET max_parallel_workers_per_gather = 0;
BEGIN;
CREATE TABLE dropped_in_2pc (k int4);
CREATE INDEX dropped_in_2pc_k ON dropped_in_2pc USING gpubtree (k);
DROP TABLE dropped_in_2pc;
PREPARE TRANSACTION 'gbt_drop';
COMMIT PREPARED 'gbt_drop';
SELECT count(*) AS left_behind FROM pg_class WHERE relname LIKE 'dropped_in_2pc%';

CREATE TABLE tp (k int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO tp SELECT g, g FROM generate_series(1, 4000) g;
CREATE INDEX tp_k ON tp USING gpubtree (k) INCLUDE (v);
VACUUM ANALYZE tp;
-- tp_agree(): the node's count and sum (other plans disabled) against the
-- ordinary plan's.
CREATE FUNCTION tp_agree() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT count(*) || '':'' || sum(v) FROM tp WHERE k BETWEEN 1 AND 5000';
	a text;
	b text;
BEGIN
	PERFORM set_config(name, 'off', true) FROM pg_settings
	WHERE name IN ('enable_seqscan', 'enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan');
	EXECUTE q INTO a;
	PERFORM set_config(name, 'on', true) FROM pg_settings
	WHERE name IN ('enable_seqscan', 'enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan');
	PERFORM set_config('gpubtree.device', 'off', true);
	EXECUTE q INTO b;
	PERFORM set_config('gpubtree.device', 'auto', true);
	RETURN CASE WHEN a = b THEN a ELSE a || ' differs from ' || b END;
END $$;
SELECT tp_agree() AS before;
BEGIN;
DELETE FROM tp WHERE k <= 100;
INSERT INTO tp SELECT g, g FROM generate_series(10001, 10100) g;
PREPARE TRANSACTION 'gbt_tp_commit';
SELECT tp_agree() AS prepared;
COMMIT PREPARED 'gbt_tp_commit';
SELECT tp_agree() AS committed;
BEGIN;
DELETE FROM tp WHERE k <= 200;
PREPARE TRANSACTION 'gbt_tp_rollback';
ROLLBACK PREPARED 'gbt_tp_rollback';
SELECT tp_agree() AS rolled_back;
DROP TABLE tp;
DROP FUNCTION tp_agree();
