-- Every DDL a table owner or a superuser can run on the capture trigger
-- either is refused or leaves the table's mirrors unused until they are
-- exported afresh: never are deletes that the trigger did not see counted.
--
-- Generated: each form of cd_forms (a statement that could stop the
-- trigger's capture, and one that would bring it back) runs as the table's
-- owner and as a superuser, with the rows deleted and updated in between,
-- once in three transactions and once in one.  After each step the query
-- through the GpubtreeAggregate node is compared with the ordinary plan's
-- under the same snapshot (cd_check), and at the end gpubtree_verify()
-- compares the mirror with the heap.  A new form is a row of cd_forms.
-- Mirrors here are built by the first query that asks (the outputs say
-- when), not after CREATE INDEX: that is build_after_create.sql's subject.
SET gpubtree.build_after_create = off;
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET gpubtree.build_wait = '60s';

CREATE ROLE regress_cd_owner;
GRANT CREATE ON SCHEMA public TO regress_cd_owner;
CREATE TABLE cd_results (ord serial, kase text, step text, outcome text, same boolean, service boolean);

-- %T: the capture trigger's name now (found by its function); %O: its name
-- when the table was made; %R: the table.
CREATE TABLE cd_forms (form text PRIMARY KEY, off_sql text, on_sql text);
INSERT INTO cd_forms VALUES
('rename', 'ALTER TRIGGER %T ON %R RENAME TO x', 'ALTER TRIGGER %T ON %R RENAME TO %O'),
('drop trigger', 'DROP TRIGGER %T ON %R', 'CREATE INDEX ON %R USING gpubtree (w)'),
('drop trigger cascade', 'DROP TRIGGER %T ON %R CASCADE', 'CREATE INDEX ON %R USING gpubtree (w)'),
('drop function', 'DROP FUNCTION gpubtree_capture() CASCADE', 'CREATE INDEX ON %R USING gpubtree (w)'),
('disable', 'ALTER TABLE %R DISABLE TRIGGER %T', 'ALTER TABLE %R ENABLE ALWAYS TRIGGER %T'),
('disable all', 'ALTER TABLE %R DISABLE TRIGGER ALL', 'ALTER TABLE %R ENABLE TRIGGER ALL'),
('disable user', 'ALTER TABLE %R DISABLE TRIGGER USER', 'ALTER TABLE %R ENABLE TRIGGER USER'),
('enable origin', 'ALTER TABLE %R ENABLE TRIGGER %T', 'ALTER TABLE %R ENABLE ALWAYS TRIGGER %T'),
('enable replica', 'ALTER TABLE %R ENABLE REPLICA TRIGGER %T', 'ALTER TABLE %R ENABLE ALWAYS TRIGGER %T'),
('enable always', 'ALTER TABLE %R ENABLE ALWAYS TRIGGER %T', 'ALTER TABLE %R ENABLE ALWAYS TRIGGER %T'),
('replication role', 'SET session_replication_role = replica', 'RESET session_replication_role'),
('depends on extension', 'ALTER TRIGGER %T ON %R DEPENDS ON EXTENSION gpubtree', 'ALTER TRIGGER %T ON %R NO DEPENDS ON EXTENSION gpubtree'),
('drop last index', 'DROP INDEX cd_k', 'CREATE INDEX cd_k ON %R USING gpubtree (k) INCLUDE (v)'),
('reindex', 'REINDEX INDEX cd_k', 'REINDEX TABLE %R'),
('truncate', 'TRUNCATE %R', 'INSERT INTO %R SELECT g, g, g FROM generate_series(1, 4000) g');

-- cd_run(kase, step, sql): run one statement of a case, 'ok' or its SQLSTATE.
CREATE FUNCTION cd_run(kase text, step text, sql text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	outcome text := 'ok';
	cur text;
	orig text;
BEGIN
	SELECT tgname INTO cur FROM pg_trigger
	WHERE tgrelid = 'cd'::regclass AND tgfoid = 'gpubtree_capture()'::regprocedure;
	SELECT v INTO orig FROM cd_state WHERE k = 'trigger';
	sql := replace(replace(replace(sql, '%T', quote_ident(coalesce(cur, orig))),
						   '%O', quote_ident(orig)), '%R', 'cd');
	BEGIN
		EXECUTE sql;
	EXCEPTION WHEN OTHERS THEN
		outcome := SQLSTATE;
	END;
	INSERT INTO cd_results (kase, step, outcome) VALUES (kase, step, outcome);
END $$;

-- cd_check(kase, step): count, sums, min and max through the node (the
-- other plans disabled) against the ordinary plan, in one snapshot (the
-- caller's transaction is REPEATABLE READ where it spans steps).
CREATE FUNCTION cd_check(kase text, step text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT count(*) AS n, count(v) AS nv, sum(v) AS s, min(v) AS mn, max(k) AS mx FROM cd WHERE k BETWEEN 1 AND 20000';
	plan jsonb;
	got jsonb;
	ord jsonb;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q INTO plan;
	EXECUTE format('SELECT to_jsonb(r) FROM (%s) r', q) INTO got;
	RESET enable_seqscan;
	RESET enable_indexscan;
	RESET enable_indexonlyscan;
	RESET enable_bitmapscan;
	SET LOCAL gpubtree.device = off;
	EXECUTE format('SELECT to_jsonb(r) FROM (%s) r', q) INTO ord;
	RESET gpubtree.device;
	INSERT INTO cd_results (kase, step, same, service)
	VALUES (kase, step, got = ord,
			coalesce(jsonb_path_query_first(plan, 'strict $.**."Answered by"') #>> '{}' = 'GPU service', false));
END $$;

CREATE TABLE cd_state (k text PRIMARY KEY, v text);
GRANT ALL ON cd_results, cd_state TO regress_cd_owner;
GRANT ALL ON SEQUENCE cd_results_ord_seq TO regress_cd_owner;

-- The statements of every case, run in order by \gexec.  Each case: a
-- fresh table owned by regress_cd_owner, vacuumed, its mirror built and
-- checked (stamps trusted); then as `who` the form's first statement, the
-- changes, a check, the second statement, a check, and after VACUUM a
-- last check and the verifier's count of problems.
CREATE FUNCTION cd_case_sql(form text, who text, one_xact boolean, off_sql text, on_sql text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	kase text := format('%s / %s / %s', form, who, CASE WHEN one_xact THEN 'one transaction' ELSE 'three' END);
	role_sql text := CASE WHEN who = 'owner' THEN 'SET ROLE regress_cd_owner' ELSE 'RESET ROLE' END;
BEGIN
	RETURN NEXT 'RESET ROLE';
	RETURN NEXT 'DROP TABLE IF EXISTS cd';
	RETURN NEXT 'CREATE TABLE cd (k int8, v int8, w int8) WITH (autovacuum_enabled = off)';
	RETURN NEXT 'ALTER TABLE cd OWNER TO regress_cd_owner';
	RETURN NEXT 'INSERT INTO cd SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE g END, g FROM generate_series(1, 4000) g';
	RETURN NEXT 'SET ROLE regress_cd_owner';
	RETURN NEXT 'CREATE INDEX cd_k ON cd USING gpubtree (k) INCLUDE (v)';
	RETURN NEXT 'RESET ROLE';
	RETURN NEXT 'VACUUM ANALYZE cd';
	RETURN NEXT 'DELETE FROM cd_state';
	RETURN NEXT $q$INSERT INTO cd_state SELECT 'trigger', tgname FROM pg_trigger WHERE tgrelid = 'cd'::regclass$q$;
	RETURN NEXT format('SELECT cd_check(%L, %L)', kase, '1 before');
	RETURN NEXT role_sql;
	IF one_xact THEN
		RETURN NEXT 'BEGIN ISOLATION LEVEL READ COMMITTED';
	END IF;
	RETURN NEXT format('SELECT cd_run(%L, %L, %L)', kase, '2 off', off_sql);
	RETURN NEXT 'DELETE FROM cd WHERE k <= 1500';
	RETURN NEXT 'UPDATE cd SET k = k + 10000 WHERE k % 10 = 0';
	RETURN NEXT 'UPDATE cd SET w = w + 1 WHERE k % 10 = 3';
	RETURN NEXT format('SELECT cd_check(%L, %L)', kase, '3 changed');
	RETURN NEXT format('SELECT cd_run(%L, %L, %L)', kase, '4 on', on_sql);
	RETURN NEXT format('SELECT cd_check(%L, %L)', kase, '5 on again');
	IF one_xact THEN
		RETURN NEXT 'COMMIT';
	END IF;
	RETURN NEXT 'RESET ROLE';
	RETURN NEXT 'RESET session_replication_role';
	RETURN NEXT format('SELECT cd_check(%L, %L)', kase, '6 committed');
	RETURN NEXT 'VACUUM cd';
	RETURN NEXT format('SELECT cd_check(%L, %L)', kase, '7 vacuumed');
	RETURN NEXT format($q$INSERT INTO cd_results (kase, step, outcome)
		SELECT %L, '8 verify', CASE WHEN to_regclass('cd_k') IS NULL THEN 'no index'
			ELSE (SELECT count(*) FROM gpubtree_verify('cd_k'))::text || ' problems' END$q$, kase);
	RETURN NEXT format($q$INSERT INTO cd_results (kase, step, outcome)
		SELECT %L, '9 trigger', coalesce(string_agg(tgenabled::text, ','), 'none') FROM pg_trigger
		WHERE tgrelid = 'cd'::regclass AND tgfoid = 'gpubtree_capture()'::regprocedure$q$, kase);
END $$;

-- (their command tags are not shown; an error would be)
\o /dev/null
SELECT s FROM cd_forms f, unnest(ARRAY['owner', 'superuser']) who, unnest(ARRAY[false, true]) one_xact,
	LATERAL cd_case_sql(f.form, who, one_xact, f.off_sql, f.on_sql) WITH ORDINALITY AS x(s, i)
ORDER BY f.form, who, one_xact, i \gexec
\o
RESET ROLE;

-- Every check: the same answer as the ordinary plan's.
SELECT kase, step FROM cd_results WHERE same IS NOT NULL AND NOT same ORDER BY ord;
-- The mirror was used before each change (stamps trusted), and the
-- verifier found nothing wrong after it.
SELECT kase FROM cd_results WHERE step = '1 before' AND NOT service ORDER BY ord;
SELECT DISTINCT outcome FROM cd_results WHERE step = '8 verify';
-- What each form was allowed to do, as the owner and as a superuser (the
-- same in one transaction and in three).
SELECT f.form,
	   string_agg(DISTINCT CASE WHEN r.kase LIKE '%/ owner /%' THEN r.step || ': ' || r.outcome END, ', ') AS owner,
	   string_agg(DISTINCT CASE WHEN r.kase LIKE '%/ superuser /%' THEN r.step || ': ' || r.outcome END, ', ') AS superuser
FROM cd_forms f JOIN cd_results r ON r.kase LIKE f.form || ' /%' AND r.step IN ('2 off', '4 on')
GROUP BY f.form ORDER BY f.form;
-- The capture trigger at the end: one, firing ALWAYS (ENABLE [ORIGIN] of
-- it is taken as ENABLE ALWAYS).
SELECT DISTINCT outcome FROM cd_results WHERE step = '9 trigger';
-- Which cases the service answered after the change, within the
-- transaction and after it (a mirror that may have missed deletes is not
-- used until exported afresh; one that saw them all is).
SELECT kase, string_agg(step, ', ' ORDER BY step) AS answered_by_service
FROM cd_results WHERE service AND step <> '1 before' GROUP BY kase ORDER BY kase;

-- A table whose last gpubtree index is dropped loses its capture trigger;
-- one that keeps another keeps it.
CREATE TABLE cd2 (k int8, w int8);
CREATE INDEX cd2_k ON cd2 USING gpubtree (k);
CREATE INDEX cd2_w ON cd2 USING gpubtree (w);
CREATE INDEX cd2_b ON cd2 (k);
DROP INDEX cd2_k;
SELECT count(*) AS triggers_with_one_left FROM pg_trigger WHERE tgrelid = 'cd2'::regclass;
BEGIN;
DROP INDEX cd2_w;
SELECT count(*) AS triggers_with_none_left FROM pg_trigger WHERE tgrelid = 'cd2'::regclass;
ROLLBACK;
SELECT count(*) AS triggers_after_rollback FROM pg_trigger WHERE tgrelid = 'cd2'::regclass;
ALTER TABLE cd2 DROP COLUMN w;
SELECT count(*) AS triggers_after_drop_column FROM pg_trigger WHERE tgrelid = 'cd2'::regclass;
DROP TABLE cd2;

-- A table owner without USAGE on the extension's schema creates a
-- gpubtree index: no name in the statement is in that schema.
CREATE SCHEMA regress_cd_ext;
ALTER EXTENSION gpubtree SET SCHEMA regress_cd_ext;
CREATE TABLE cd3 (k int8, v int8);
ALTER TABLE cd3 OWNER TO regress_cd_owner;
SET ROLE regress_cd_owner;
CREATE INDEX cd3_k ON cd3 USING gpubtree (k) INCLUDE (v);
RESET ROLE;
SELECT count(*) AS capture_triggers FROM pg_trigger
WHERE tgrelid = 'cd3'::regclass AND tgfoid = 'regress_cd_ext.gpubtree_capture()'::regprocedure;
DROP TABLE cd3;
ALTER EXTENSION gpubtree SET SCHEMA public;
DROP SCHEMA regress_cd_ext;

DROP TABLE cd, cd_results, cd_forms, cd_state;
DROP FUNCTION cd_run(text, text, text), cd_check(text, text),
	cd_case_sql(text, text, boolean, text, text);
REVOKE CREATE ON SCHEMA public FROM regress_cd_owner;
DROP ROLE regress_cd_owner;
