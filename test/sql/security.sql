-- Every SQL function of the extension against every kind of relation a
-- regclass can name, every kind of role, a hostile search_path, and other
-- databases' mirrors.  The matrices are generated from the catalogs: a new
-- function of the extension, or a new argument type, shows up here without
-- editing this file (an argument type the generator does not know is
-- reported as such).
CREATE EXTENSION IF NOT EXISTS amcheck;
SET client_min_messages = warning;

-- 'ok', or the error's SQLSTATE and message (numbers masked: OIDs vary).
CREATE FUNCTION gbt_try(query text, as_role name DEFAULT NULL,
						device text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	BEGIN
		IF device IS NOT NULL THEN
			PERFORM set_config('gpubtree.device', device, true);
		END IF;
		IF as_role IS NOT NULL THEN
			EXECUTE format('SET ROLE %I', as_role);
		END IF;
		EXECUTE query;
		RESET ROLE;
		RETURN 'ok';
	EXCEPTION WHEN OTHERS THEN
		RETURN SQLSTATE || ' ' || regexp_replace(SQLERRM, '[0-9]+', 'N', 'g');
	END;
END $$;

-- The extension's functions a user can call (not the access method's
-- handler, the event trigger's function or the capture trigger's).
CREATE VIEW gbt_functions AS
SELECT p.oid, p.proname, p.proargtypes::regtype[] AS argtypes, p.pronargs,
	   p.pronargdefaults
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass
	AND d.refobjid = e.oid AND e.extname = 'gpubtree'
WHERE p.prorettype NOT IN ('index_am_handler'::regtype, 'event_trigger'::regtype,
						   'trigger'::regtype);

-- A call of function f on relation rel: each argument made from its type.
CREATE FUNCTION gbt_call(f oid, rel text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	p record;
	args text[] := '{}';
	bounds int := 0;
	t regtype;
BEGIN
	SELECT * INTO p FROM gbt_functions WHERE oid = f;
	FOR i IN 1 .. p.pronargs - p.pronargdefaults LOOP
		t := p.argtypes[i - 1];
		IF t = 'regclass'::regtype THEN
			args := args || format('%L::regclass', rel);
		ELSIF t = 'name'::regtype THEN
			args := args || quote_literal('v');
		ELSIF t = 'text'::regtype THEN
			-- a query (gpubtree_why_not()): a range sum on the index's table
			args := args || quote_literal(format(
				'SELECT count(*), sum(k) FROM %s WHERE k BETWEEN 0 AND 1000',
				(SELECT indrelid::regclass FROM pg_index WHERE indexrelid = rel::regclass)));
		ELSIF t = 'anyelement'::regtype THEN
			args := args || (CASE bounds WHEN 0 THEN '0' ELSE '1000' END);
			bounds := bounds + 1;
		ELSE
			RETURN format('no argument generator for type %s of %s', t, p.proname);
		END IF;
	END LOOP;
	RETURN format('SELECT count(*) FROM %I(%s)', p.proname, array_to_string(args, ', '));
END $$;

CREATE FUNCTION gbt_takes_relation(f oid) RETURNS boolean
LANGUAGE sql AS $$
	SELECT 'regclass'::regtype = ANY (argtypes) FROM gbt_functions WHERE oid = f
$$;

--
-- Every function x every kind of relation, with the service and without it.
--
CREATE TABLE sec_t (k int, v int);
INSERT INTO sec_t SELECT g, g FROM generate_series(1, 2000) g;
CREATE INDEX sec_ok ON sec_t USING gpubtree (k) INCLUDE (v);
CREATE INDEX sec_partial ON sec_t USING gpubtree (k) INCLUDE (v) WHERE k > 10;
CREATE INDEX sec_expr ON sec_t USING gpubtree ((k + 1)) INCLUDE (v);
CREATE INDEX sec_btree ON sec_t USING btree (k) INCLUDE (v);
CREATE TABLE sec_p (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE sec_p1 PARTITION OF sec_p FOR VALUES FROM (0) TO (1000000);
INSERT INTO sec_p SELECT g, g FROM generate_series(1, 2000) g;
CREATE INDEX sec_pidx ON sec_p USING gpubtree (k) INCLUDE (v);
CREATE TEMP TABLE sec_tp (k int, v int) PARTITION BY RANGE (k);
CREATE INDEX sec_tpidx ON sec_tp USING gpubtree (k) INCLUDE (v);
CREATE TEMP TABLE sec_temp (k int, v int);
INSERT INTO sec_temp SELECT g, g FROM generate_series(1, 2000) g;
CREATE INDEX sec_tempidx ON sec_temp USING gpubtree (k) INCLUDE (v);
CREATE UNLOGGED TABLE sec_unlogged (k int, v int);
CREATE INDEX sec_unloggedidx ON sec_unlogged USING gpubtree (k) INCLUDE (v);
-- A failed CREATE INDEX CONCURRENTLY leaves an invalid index.
CREATE TABLE sec_dup (k int, v int);
INSERT INTO sec_dup VALUES (1, 1), (1, 2);
CREATE UNIQUE INDEX CONCURRENTLY sec_invalid ON sec_dup USING gpubtree (k) INCLUDE (v);
CREATE INDEX sec_gone ON sec_t USING gpubtree (k);
CREATE TABLE sec_dropped AS SELECT 'sec_gone'::regclass::oid::text AS oid;
DROP INDEX sec_gone;
CREATE VIEW sec_view AS SELECT * FROM sec_t;
CREATE MATERIALIZED VIEW sec_matview AS SELECT * FROM sec_t;
CREATE INDEX sec_matviewidx ON sec_matview USING gpubtree (k) INCLUDE (v);
CREATE SEQUENCE sec_seq;
CREATE TYPE sec_type AS (a int);
CREATE FOREIGN DATA WRAPPER sec_fdw;
CREATE SERVER sec_server FOREIGN DATA WRAPPER sec_fdw;
CREATE FOREIGN TABLE sec_foreign (k int, v int) SERVER sec_server;
CREATE TABLE sec_toasted (k int, t text);
-- Another session's temporary index: a psql in the background creates it
-- and stays connected until terminated below.
SELECT current_database() AS db, current_setting('port') AS port,
	   split_part(current_setting('unix_socket_directories'), ',', 1) AS host \gset
\setenv PGDATABASE :db
\setenv PGPORT :port
\setenv PGHOST :host
\! psql -X -q -c "CREATE TEMP TABLE other_temp (k int, v int)" -c "CREATE INDEX other_tempidx ON other_temp USING gpubtree (k) INCLUDE (v)" -c "SELECT pg_sleep(600) AS sec_other_session" >/dev/null 2>&1 &
DO $$
BEGIN
	FOR i IN 1 .. 600 LOOP
		PERFORM FROM pg_class WHERE relname = 'other_tempidx';
		EXIT WHEN FOUND;
		PERFORM pg_sleep(0.05);
	END LOOP;
END $$;
CREATE TABLE sec_other AS
SELECT oid::text FROM pg_class WHERE relname = 'other_tempidx';

CREATE TABLE sec_targets (kind text, rel text);
INSERT INTO sec_targets VALUES
	('gpubtree index', 'sec_ok'),
	('partial index', 'sec_partial'),
	('expression index', 'sec_expr'),
	('btree index', 'sec_btree'),
	('partitioned index', 'sec_pidx'),
	('index of a partition', (SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
							  WHERE i.inhparent = 'sec_pidx'::regclass)),
	('temp partitioned index', 'sec_tpidx'),
	('temp index', 'sec_tempidx'),
	('unlogged index', 'sec_unloggedidx'),
	('invalid index', 'sec_invalid'),
	('dropped index', (SELECT oid FROM sec_dropped)),
	('table', 'sec_t'),
	('partitioned table', 'sec_p'),
	('view', 'sec_view'),
	('materialized view', 'sec_matview'),
	('index of a materialized view', 'sec_matviewidx'),
	('sequence', 'sec_seq'),
	('composite type', 'sec_type'),
	('foreign table', 'sec_foreign'),
	('toast table', (SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'sec_toasted'::regclass)),
	('toast index', (SELECT indexrelid::regclass::text FROM pg_index
					 WHERE indrelid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'sec_toasted'::regclass))),
	('other session''s temp index', (SELECT oid FROM sec_other));

SELECT f.proname, t.kind, d.device, gbt_try(gbt_call(f.oid, t.rel), NULL, d.device) AS outcome
FROM gbt_functions f, sec_targets t, (VALUES ('auto'), ('off')) d(device)
WHERE gbt_takes_relation(f.oid)
ORDER BY 1, 2, 3;

-- The server is still up, and every function was tried.
SELECT count(*) > 0 AS alive FROM sec_t;
SELECT proname, gbt_takes_relation(oid) AS takes_relation FROM gbt_functions ORDER BY 1;

--
-- Every function x every kind of role.  Another session holds an exclusive
-- lock on the table: a call that is refused must say so at once
-- (42501), not wait for the lock (55P03), since a refused call takes no lock.
--
CREATE ROLE sec_nogrant;
CREATE ROLE sec_select;
CREATE ROLE sec_owner;
CREATE ROLE sec_stats IN ROLE pg_read_all_stats;
CREATE TABLE sec_r (k int, v int);
INSERT INTO sec_r SELECT g, g FROM generate_series(1, 2000) g;
CREATE INDEX sec_ri ON sec_r USING gpubtree (k) INCLUDE (v);
ALTER TABLE sec_r OWNER TO sec_owner;
GRANT SELECT ON sec_r TO sec_select;

CREATE TABLE sec_roles (role text, as_role name);
INSERT INTO sec_roles VALUES ('no grant', 'sec_nogrant'), ('SELECT only', 'sec_select'),
	('owner', 'sec_owner'), ('superuser', NULL);

-- (another session, a psql in the background, holds the lock)
\! psql -X -q -c "BEGIN; LOCK TABLE sec_r IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600) AS sec_hold; COMMIT" >/dev/null 2>&1 &
DO $$
BEGIN
	FOR i IN 1 .. 600 LOOP
		PERFORM FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.relation = 'sec_r'::regclass AND l.mode = 'AccessExclusiveLock' AND l.granted
		  AND a.query LIKE '%sec_hold%';
		EXIT WHEN FOUND;
		PERFORM pg_sleep(0.05);
	END LOOP;
END $$;
SET lock_timeout = '20ms';
SELECT f.proname, r.role, gbt_try(gbt_call(f.oid, 'sec_ri'), r.as_role) AS while_locked
FROM gbt_functions f, sec_roles r
ORDER BY 1, 2;
RESET lock_timeout;
SELECT count(*) AS lock_holders_ended FROM (
	SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity
	WHERE query LIKE '%sec_hold%' AND pid <> pg_backend_pid()) x;

SELECT f.proname, r.role, gbt_try(gbt_call(f.oid, 'sec_ri'), r.as_role) AS outcome
FROM gbt_functions f, sec_roles r
ORDER BY 1, 2;

--
-- Every function that takes a relation needs what a SELECT of the columns
-- it reads needs: USAGE on the schema of the table and of the index (an OID
-- names them without the lookup by name that checks it), and SELECT on the
-- table or on each column (the aggregates read the key and their column,
-- the others every column of the index).  Each role may EXECUTE every
-- function of the extension and of amcheck, and the relations are given by
-- OID.  Without USAGE, or with no SELECT, every function must refuse
-- (42501); the owner, with USAGE, may call every one.
--
CREATE SCHEMA sec_hidden;
CREATE SCHEMA sec_shown;
CREATE ROLE sec_h_owner;
CREATE ROLE sec_h_nogrant;
CREATE ROLE sec_h_select;
CREATE ROLE sec_h_key;
CREATE ROLE sec_h_keyv;
GRANT USAGE ON SCHEMA sec_shown TO sec_h_owner, sec_h_nogrant, sec_h_select, sec_h_key, sec_h_keyv;
CREATE TABLE sec_h_roles (role text, as_role name, ord int);
INSERT INTO sec_h_roles VALUES ('no grant', 'sec_h_nogrant', 1), ('SELECT on k', 'sec_h_key', 2),
	('SELECT on k, v', 'sec_h_keyv', 3), ('SELECT', 'sec_h_select', 4), ('owner', 'sec_h_owner', 5);
CREATE TABLE sec_h_rels (schema text, idx oid);
DO $$
DECLARE
	s text;
	r record;
	f record;
BEGIN
	FOREACH s IN ARRAY '{sec_hidden,sec_shown}'::text[] LOOP
		EXECUTE format('CREATE TABLE %I.h (k int, v int, w int)', s);
		EXECUTE format('INSERT INTO %I.h SELECT g, g, g FROM generate_series(1, 2000) g', s);
		EXECUTE format('CREATE INDEX h_k ON %I.h USING gpubtree (k) INCLUDE (v)', s);
		EXECUTE format('ALTER TABLE %I.h OWNER TO sec_h_owner', s);
		EXECUTE format('GRANT SELECT ON %I.h TO sec_h_select', s);
		EXECUTE format('GRANT SELECT (k) ON %I.h TO sec_h_key', s);
		EXECUTE format('GRANT SELECT (k, v) ON %I.h TO sec_h_keyv', s);
		INSERT INTO sec_h_rels VALUES (s, format('%I.h_k', s)::regclass);
	END LOOP;
	FOR r IN SELECT * FROM sec_h_roles LOOP
		FOR f IN
			SELECT p.oid::regprocedure AS fn
			FROM pg_proc p
			JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
			JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass
				AND d.refobjid = e.oid AND e.extname IN ('gpubtree', 'amcheck')
		LOOP
			EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f.fn, r.as_role);
		END LOOP;
	END LOOP;
END $$;
CREATE TABLE sec_h_outcome AS
SELECT f.proname, CASE WHEN s.schema = 'sec_hidden' THEN 'no USAGE' ELSE 'USAGE' END AS schema,
	   r.role, r.ord, gbt_try(gbt_call(f.oid, s.idx::text), r.as_role) AS outcome
FROM gbt_functions f, sec_h_rels s, sec_h_roles r
WHERE gbt_takes_relation(f.oid);
SELECT proname, schema, role, outcome FROM sec_h_outcome ORDER BY 1, 2 DESC, ord;
SELECT count(DISTINCT proname) AS functions,
	   bool_and(outcome LIKE '42501 %') FILTER (WHERE schema = 'no USAGE' OR role = 'no grant')
		   AS refused_without_usage_or_select,
	   bool_and(outcome = 'ok') FILTER (WHERE schema = 'USAGE' AND role = 'owner') AS owner_may
FROM sec_h_outcome;
DROP SCHEMA sec_hidden, sec_shown CASCADE;
DROP OWNED BY sec_h_owner, sec_h_nogrant, sec_h_select, sec_h_key, sec_h_keyv;
DROP ROLE sec_h_owner, sec_h_nogrant, sec_h_select, sec_h_key, sec_h_keyv;

--
-- A hostile schema first on search_path: a function of the same name as
-- any of amcheck's must never run.  amcheck lives in a schema of its own.
--
DROP EXTENSION amcheck;
CREATE SCHEMA sec_amcheck_home;
CREATE EXTENSION amcheck SCHEMA sec_amcheck_home;
CREATE SCHEMA sec_hostile;
DO $$
DECLARE
	p record;
BEGIN
	FOR p IN
		SELECT pr.proname, pg_get_function_identity_arguments(pr.oid) AS args,
			   pg_get_function_result(pr.oid) AS result
		FROM pg_proc pr
		JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = pr.oid
		JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass
			AND d.refobjid = e.oid AND e.extname = 'amcheck'
	LOOP
		EXECUTE format('CREATE FUNCTION sec_hostile.%I(%s) RETURNS %s LANGUAGE plpgsql '
					   'AS $f$ BEGIN RAISE EXCEPTION ''hijacked: %s''; END $f$',
					   p.proname, p.args, p.result, p.proname);
	END LOOP;
END $$;
SELECT count(*) > 0 AS hostile_functions FROM pg_proc WHERE pronamespace = 'sec_hostile'::regnamespace;
SET search_path = sec_hostile, public;
SELECT f.proname, gbt_try(gbt_call(f.oid, 'sec_ok')) AS outcome
FROM gbt_functions f
ORDER BY 1;
SELECT gbt_try('SELECT gpubtree_index_check(''sec_ok'', true, true)') AS parent_check;
RESET search_path;
DROP EXTENSION amcheck;
DROP SCHEMA sec_amcheck_home;

--
-- Other databases' mirrors are shown only to roles with the privileges of
-- pg_read_all_stats.
--
SELECT count(pg_terminate_backend(pid)) AS other_session_ended FROM pg_stat_activity
WHERE query LIKE '%sec_other_session%' AND pid <> pg_backend_pid();
SELECT current_database() AS regress_db \gset
CREATE DATABASE sec_otherdb;
\c sec_otherdb
CREATE EXTENSION gpubtree;
CREATE TABLE o (k int, v int);
INSERT INTO o SELECT g, g FROM generate_series(1, 2000) g;
CREATE INDEX o_k ON o USING gpubtree (k) INCLUDE (v);
SELECT gpubtree_count('o_k', 0, 1000);
SELECT count(*) > 0 AS mirror_here FROM gpubtree_mirrors()
WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database());
\c :regress_db
SELECT gpubtree_count('sec_ok', 0, 1000);
CREATE VIEW sec_seen AS
SELECT count(*) FILTER (WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS here,
	   count(*) FILTER (WHERE database = (SELECT oid FROM pg_database WHERE datname = 'sec_otherdb')) AS elsewhere,
	   (SELECT mirror_bytes FROM gpubtree_status()) = coalesce(sum(bytes), 0) AS bytes_match
FROM gpubtree_mirrors();
GRANT SELECT ON sec_seen TO sec_nogrant, sec_stats;
SELECT here > 0 AS here, elsewhere > 0 AS elsewhere FROM sec_seen;
-- Without pg_read_all_stats: this database's mirrors, and only their bytes.
SET ROLE sec_nogrant;
SELECT here > 0 AS here, elsewhere > 0 AS elsewhere, bytes_match FROM sec_seen;
RESET ROLE;
SET ROLE sec_stats;
SELECT here > 0 AS here, elsewhere > 0 AS elsewhere FROM sec_seen;
RESET ROLE;
DROP DATABASE sec_otherdb;

DROP OWNED BY sec_nogrant, sec_select, sec_owner, sec_stats;
DROP ROLE sec_nogrant, sec_select, sec_owner, sec_stats;
DROP FOREIGN TABLE sec_foreign;
DROP SERVER sec_server;
DROP FOREIGN DATA WRAPPER sec_fdw;
