-- gpubtree.build_after_create: by default (wait) CREATE INDEX builds the
-- mirror before it returns; under background CREATE INDEX and REINDEX have
-- it built by a background job once they commit, with no query on the
-- table asking for it.  Nothing here reads the tables after their indexes
-- are built: only gpubtree_mirrors() is polled.
SHOW gpubtree.build_after_create;
SET gpubtree.build_after_create = background;

-- Polls until idx has a current mirror of its present storage: true, or
-- false after about 30 s.
CREATE FUNCTION bac_wait_current(idx regclass) RETURNS bool
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..600 LOOP
		IF EXISTS (SELECT FROM gpubtree_mirrors()
				   WHERE index = idx AND relfilenode = pg_relation_filenode(idx) AND current
					 AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
		THEN
			RETURN true;
		END IF;
		PERFORM pg_sleep(0.05);
	END LOOP;
	RETURN false;
END $$;

-- Polls until no build of this database is starting, queued or running:
-- true, or false after about 30 s.
CREATE FUNCTION bac_builds_ended() RETURNS bool
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..600 LOOP
		IF NOT EXISTS (SELECT FROM gpubtree_mirrors()
					   WHERE state IN ('build starting', 'build waiting for a lock',
									   'building', 'build queued')
						 AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
		THEN
			RETURN true;
		END IF;
		PERFORM pg_sleep(0.05);
	END LOOP;
	RETURN false;
END $$;

-- Polls until none of the indexes idxs has a mirror (the service drops an
-- invalidated one in its next round): true, or false after about 30 s.
CREATE FUNCTION bac_dropped(idxs oid[]) RETURNS bool
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..600 LOOP
		IF NOT EXISTS (SELECT FROM gpubtree_mirrors() WHERE index = ANY (idxs)) THEN
			RETURN true;
		END IF;
		PERFORM pg_sleep(0.05);
	END LOOP;
	RETURN false;
END $$;

CREATE TABLE bac (k int8, v int8);
INSERT INTO bac SELECT g, g % 100 FROM generate_series(1, 20000) g;

-- CREATE INDEX: the mirror comes without a query.
CREATE INDEX bac_k ON bac USING gpubtree (k) INCLUDE (v);
SELECT bac_wait_current('bac_k') AS created_current;
SELECT entries FROM gpubtree_mirrors()
WHERE index = 'bac_k'::regclass AND relfilenode = pg_relation_filenode('bac_k');

-- Where the build's time went (note): from the commit that asked for it to
-- its chunk sums, each phase in ms, the phases adding up to the whole
-- (rounding aside).  The chunk sums are made in the service's next round
-- of maintenance at the latest: polled.
DO $$
BEGIN
	FOR i IN 1..600 LOOP
		EXIT WHEN (SELECT note LIKE 'at full speed %' FROM gpubtree_mirrors()
				   WHERE index = 'bac_k'::regclass);
		PERFORM pg_sleep(0.05);
	END LOOP;
END $$;
SELECT note ~ '^at full speed [0-9]+ ms after it was asked for \(ms: worker start [0-9]+, index read [0-9]+, heap read [0-9]+, hand-over [0-9]+, service busy [0-9]+, build [0-9]+, chunk sums [0-9]+\)$' AS phases_shown,
	   abs(substring(note FROM 'at full speed ([0-9]+)')::int -
		   (SELECT sum(m[1]::int) FROM regexp_matches(note, '[:,] [a-z -]+ ([0-9]+)', 'g') m)) <= 7
		   AS phases_add_up
FROM gpubtree_mirrors() WHERE index = 'bac_k'::regclass;

-- REINDEX INDEX: new storage, and its mirror.
SELECT pg_relation_filenode('bac_k') AS before_reindex \gset
REINDEX INDEX bac_k;
SELECT pg_relation_filenode('bac_k') <> :before_reindex AS new_storage;
SELECT bac_wait_current('bac_k') AS reindexed_current;

-- REINDEX ... CONCURRENTLY: a new index (OID and storage) takes the name;
-- its mirror comes once the command's last transaction commits.
SELECT 'bac_k'::regclass::oid AS before_concurrently \gset
REINDEX INDEX CONCURRENTLY bac_k;
SELECT 'bac_k'::regclass::oid <> :before_concurrently AS new_index;
SELECT bac_wait_current('bac_k') AS reindexed_concurrently_current;

-- CREATE INDEX CONCURRENTLY.
CREATE INDEX CONCURRENTLY bac_v ON bac USING gpubtree (v);
SELECT bac_wait_current('bac_v') AS created_concurrently_current;

-- REINDEX TABLE: each of its indexes.
SELECT pg_relation_filenode('bac_k') AS k_before, pg_relation_filenode('bac_v') AS v_before \gset
REINDEX TABLE bac;
SELECT pg_relation_filenode('bac_k') <> :k_before AND
	   pg_relation_filenode('bac_v') <> :v_before AS new_storage;
SELECT bac_wait_current('bac_k') AND bac_wait_current('bac_v') AS table_reindexed_current;

-- More indexes at once than builds may run (two): the others queue and
-- follow.
BEGIN;
CREATE INDEX bac_q1 ON bac USING gpubtree (k);
CREATE INDEX bac_q2 ON bac USING gpubtree (v, k);
CREATE INDEX bac_q3 ON bac USING gpubtree (k DESC);
CREATE INDEX bac_q4 ON bac USING gpubtree (v DESC);
CREATE INDEX bac_q5 ON bac USING gpubtree (k) INCLUDE (v);
COMMIT;
SELECT bac_wait_current('bac_q1') AND bac_wait_current('bac_q2') AND bac_wait_current('bac_q3')
	   AND bac_wait_current('bac_q4') AND bac_wait_current('bac_q5') AS queued_current;
DROP INDEX bac_q1, bac_q2, bac_q3, bac_q4, bac_q5;

-- A transaction that rolls back starts no build: once the builds under way
-- have ended, there is no trace of its index.
BEGIN;
CREATE INDEX bac_rb ON bac USING gpubtree (v) INCLUDE (k);
SELECT 'bac_rb'::regclass::oid AS rolled_back \gset
ROLLBACK;
SELECT bac_builds_ended() AS builds_ended;
SELECT count(*) AS rolled_back_rows FROM gpubtree_mirrors() WHERE index = :rolled_back;

-- Nor does a savepoint rolled back: its index, or a REINDEX's new storage.
BEGIN;
SAVEPOINT s;
CREATE INDEX bac_sp ON bac USING gpubtree (v) INCLUDE (k);
SELECT 'bac_sp'::regclass::oid AS sp_index \gset
ROLLBACK TO s;
SAVEPOINT t;
REINDEX INDEX bac_v;
SELECT pg_relation_filenode('bac_v') AS sp_storage \gset
ROLLBACK TO t;
COMMIT;
SELECT bac_builds_ended() AS builds_ended;
SELECT count(*) AS savepoint_rows FROM gpubtree_mirrors()
WHERE index = :sp_index OR relfilenode = :sp_storage;

-- off: nothing until a query asks (the job would be there at once).
SET gpubtree.build_after_create = off;
CREATE INDEX bac_off ON bac USING gpubtree (v, k);
SELECT count(*) AS off_rows FROM gpubtree_mirrors() WHERE index = 'bac_off'::regclass;
-- wait: built inside CREATE INDEX, current when it returns.
SET gpubtree.build_after_create = wait;
CREATE INDEX bac_wait ON bac USING gpubtree (v DESC);
SELECT current FROM gpubtree_mirrors() WHERE index = 'bac_wait'::regclass;
-- REINDEX forbids reading the index it rebuilds: built as in background.
REINDEX INDEX bac_off;
SELECT bac_wait_current('bac_off') AS reindex_wait_current;
-- A rollback, of the transaction or of a savepoint, takes the mirrors
-- built inside its CREATE INDEX with it; one built before the savepoint
-- stays.
BEGIN;
CREATE INDEX bac_wrb ON bac USING gpubtree (k DESC) INCLUDE (v);
SELECT 'bac_wrb'::regclass::oid AS wait_rolled_back \gset
SELECT count(*) AS built_before_rollback FROM gpubtree_mirrors() WHERE index = :wait_rolled_back;
ROLLBACK;
BEGIN;
CREATE INDEX bac_wkept ON bac USING gpubtree (k DESC, v);
SAVEPOINT s;
CREATE INDEX bac_wsp ON bac USING gpubtree (v) INCLUDE (k);
SELECT 'bac_wsp'::regclass::oid AS wait_sp \gset
ROLLBACK TO s;
COMMIT;
SELECT bac_dropped(ARRAY[:wait_rolled_back, :wait_sp]::oid[]) AS rolled_back_dropped;
SELECT current AS kept_current FROM gpubtree_mirrors() WHERE index = 'bac_wkept'::regclass;
DROP INDEX bac_wkept;
-- wait, where this CREATE INDEX installs the table's capture trigger (its
-- first gpubtree index) in a transaction that wrote nothing before, as
-- pg_restore's do: built inside it too, and on a table never vacuumed
-- since its load the stamps decide; a second index, the trigger there
-- already, as well.  (t/018_build_in_create.pl tries every statement
-- before and after.)
CREATE TABLE bac_fresh (k int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO bac_fresh SELECT g, g FROM generate_series(1, 5000) g;
CREATE INDEX bac_fresh_k ON bac_fresh USING gpubtree (k);
SELECT current AS first_index_current FROM gpubtree_mirrors() WHERE index = 'bac_fresh_k'::regclass;
CREATE INDEX bac_fresh_v ON bac_fresh USING gpubtree (v);
SELECT index::regclass, current, decided_by FROM gpubtree_mirrors()
WHERE index IN ('bac_fresh_k'::regclass, 'bac_fresh_v'::regclass) ORDER BY 1;
DROP TABLE bac_fresh;
-- Where the transaction wrote before: built by the job after the commit.
CREATE TABLE bac_fresh (k int8, v int8) WITH (autovacuum_enabled = off);
INSERT INTO bac_fresh SELECT g, g FROM generate_series(1, 5000) g;
BEGIN;
DELETE FROM bac_fresh WHERE k % 10 = 0;
CREATE INDEX bac_fresh_k ON bac_fresh USING gpubtree (k);
SELECT count(*) AS wrote_before_rows FROM gpubtree_mirrors() WHERE index = 'bac_fresh_k'::regclass;
COMMIT;
SELECT bac_wait_current('bac_fresh_k') AS wrote_before_current;
SELECT decided_by AS wrote_before_decided_by FROM gpubtree_mirrors() WHERE index = 'bac_fresh_k'::regclass;
DROP TABLE bac_fresh;
-- The former bool's values stay valid: on is wait.
SET gpubtree.build_after_create = on;
SHOW gpubtree.build_after_create;
SET gpubtree.build_after_create = false;
SHOW gpubtree.build_after_create;
SET gpubtree.build_after_create = sometimes;
RESET gpubtree.build_after_create;

DROP TABLE bac;
DROP FUNCTION bac_wait_current(regclass);
DROP FUNCTION bac_builds_ended();
DROP FUNCTION bac_dropped(oid[]);
