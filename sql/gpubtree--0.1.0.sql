/* gpubtree--0.1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpubtree" to load this file. \quit

CREATE FUNCTION gpubtree_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;

CREATE ACCESS METHOD gpubtree TYPE INDEX HANDLER gpubtree_handler;
COMMENT ON ACCESS METHOD gpubtree IS 'B-tree with a GPU mirror';

-- What this build and this backend can see of CUDA devices.  One row per
-- device, or one row with NULL device columns and the reason in "status".
CREATE FUNCTION gpubtree_device_info(
	OUT built_with_cuda boolean,
	OUT cuda_version text,
	OUT cuda_archs text,
	OUT device_id integer,
	OUT device_name text,
	OUT device_memory bigint,
	OUT device_sms integer,
	OUT compute_capability text,
	OUT status text)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- Rejects CREATE INDEX ... USING gpubtree on an unsupported key type with an
-- error that names the supported types, before PostgreSQL's generic
-- "no default operator class" message.
CREATE FUNCTION gpubtree_check_create_index() RETURNS event_trigger
	AS 'MODULE_PATHNAME' LANGUAGE C;

-- Fired ALWAYS after UPDATE or DELETE of each row of a table with a gpubtree
-- index (an internal trigger that CREATE INDEX ... USING gpubtree creates):
-- brings deletes and updates to the GPU mirrors at commit.
CREATE FUNCTION gpubtree_capture() RETURNS trigger
	AS 'MODULE_PATHNAME' LANGUAGE C;
REVOKE ALL ON FUNCTION gpubtree_capture() FROM PUBLIC;

CREATE EVENT TRIGGER gpubtree_check_create_index ON ddl_command_start
	WHEN TAG IN ('CREATE INDEX')
	EXECUTE FUNCTION gpubtree_check_create_index();

-- Operator classes: the types the GPU mirror holds as order-preserving 64-bit
-- keys.  Each family carries btree's cross-type operators, so that
-- int4col < 10::int8 or datecol >= now() can use the index as with btree.

-- integer_ops: same operators and support functions as btree's integer_ops
CREATE OPERATOR FAMILY integer_ops USING gpubtree;
CREATE OPERATOR CLASS int2_ops DEFAULT FOR TYPE smallint USING gpubtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint2cmp(smallint,smallint),
	FUNCTION 2 btint2sortsupport(internal),
	FUNCTION 3 in_range(smallint,smallint,smallint,boolean,boolean),
	FUNCTION 4 btequalimage(oid);
CREATE OPERATOR CLASS int4_ops DEFAULT FOR TYPE integer USING gpubtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint4cmp(integer,integer),
	FUNCTION 2 btint4sortsupport(internal),
	FUNCTION 3 in_range(integer,integer,integer,boolean,boolean),
	FUNCTION 4 btequalimage(oid);
CREATE OPERATOR CLASS int8_ops DEFAULT FOR TYPE bigint USING gpubtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint8cmp(bigint,bigint),
	FUNCTION 2 btint8sortsupport(internal),
	FUNCTION 3 in_range(bigint,bigint,bigint,boolean,boolean),
	FUNCTION 4 btequalimage(oid);
ALTER OPERATOR FAMILY integer_ops USING gpubtree ADD
	OPERATOR 1 <(bigint,integer),
	OPERATOR 2 <=(bigint,integer),
	OPERATOR 3 =(bigint,integer),
	OPERATOR 4 >=(bigint,integer),
	OPERATOR 5 >(bigint,integer),
	OPERATOR 1 <(bigint,smallint),
	OPERATOR 2 <=(bigint,smallint),
	OPERATOR 3 =(bigint,smallint),
	OPERATOR 4 >=(bigint,smallint),
	OPERATOR 5 >(bigint,smallint),
	OPERATOR 1 <(integer,bigint),
	OPERATOR 2 <=(integer,bigint),
	OPERATOR 3 =(integer,bigint),
	OPERATOR 4 >=(integer,bigint),
	OPERATOR 5 >(integer,bigint),
	OPERATOR 1 <(integer,smallint),
	OPERATOR 2 <=(integer,smallint),
	OPERATOR 3 =(integer,smallint),
	OPERATOR 4 >=(integer,smallint),
	OPERATOR 5 >(integer,smallint),
	OPERATOR 1 <(smallint,bigint),
	OPERATOR 2 <=(smallint,bigint),
	OPERATOR 3 =(smallint,bigint),
	OPERATOR 4 >=(smallint,bigint),
	OPERATOR 5 >(smallint,bigint),
	OPERATOR 1 <(smallint,integer),
	OPERATOR 2 <=(smallint,integer),
	OPERATOR 3 =(smallint,integer),
	OPERATOR 4 >=(smallint,integer),
	OPERATOR 5 >(smallint,integer),
	FUNCTION 1 (bigint, integer) btint84cmp(bigint,integer),
	FUNCTION 1 (bigint, smallint) btint82cmp(bigint,smallint),
	FUNCTION 1 (integer, bigint) btint48cmp(integer,bigint),
	FUNCTION 3 (integer, bigint) in_range(integer,integer,bigint,boolean,boolean),
	FUNCTION 1 (integer, smallint) btint42cmp(integer,smallint),
	FUNCTION 3 (integer, smallint) in_range(integer,integer,smallint,boolean,boolean),
	FUNCTION 1 (smallint, bigint) btint28cmp(smallint,bigint),
	FUNCTION 3 (smallint, bigint) in_range(smallint,smallint,bigint,boolean,boolean),
	FUNCTION 1 (smallint, integer) btint24cmp(smallint,integer),
	FUNCTION 3 (smallint, integer) in_range(smallint,smallint,integer,boolean,boolean);

-- float_ops: same operators and support functions as btree's float_ops
CREATE OPERATOR FAMILY float_ops USING gpubtree;
CREATE OPERATOR CLASS float4_ops DEFAULT FOR TYPE real USING gpubtree FAMILY float_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btfloat4cmp(real,real),
	FUNCTION 2 btfloat4sortsupport(internal);
CREATE OPERATOR CLASS float8_ops DEFAULT FOR TYPE double precision USING gpubtree FAMILY float_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btfloat8cmp(double precision,double precision),
	FUNCTION 2 btfloat8sortsupport(internal),
	FUNCTION 3 in_range(double precision,double precision,double precision,boolean,boolean);
ALTER OPERATOR FAMILY float_ops USING gpubtree ADD
	OPERATOR 1 <(double precision,real),
	OPERATOR 2 <=(double precision,real),
	OPERATOR 3 =(double precision,real),
	OPERATOR 4 >=(double precision,real),
	OPERATOR 5 >(double precision,real),
	OPERATOR 1 <(real,double precision),
	OPERATOR 2 <=(real,double precision),
	OPERATOR 3 =(real,double precision),
	OPERATOR 4 >=(real,double precision),
	OPERATOR 5 >(real,double precision),
	FUNCTION 1 (double precision, real) btfloat84cmp(double precision,real),
	FUNCTION 1 (real, double precision) btfloat48cmp(real,double precision),
	FUNCTION 3 (real, double precision) in_range(real,real,double precision,boolean,boolean);

-- datetime_ops: same operators and support functions as btree's datetime_ops
CREATE OPERATOR FAMILY datetime_ops USING gpubtree;
CREATE OPERATOR CLASS date_ops DEFAULT FOR TYPE date USING gpubtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 date_cmp(date,date),
	FUNCTION 2 date_sortsupport(internal),
	FUNCTION 4 btequalimage(oid);
CREATE OPERATOR CLASS timestamp_ops DEFAULT FOR TYPE timestamp without time zone USING gpubtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 timestamp_cmp(timestamp without time zone,timestamp without time zone),
	FUNCTION 2 timestamp_sortsupport(internal),
	FUNCTION 4 btequalimage(oid);
CREATE OPERATOR CLASS timestamptz_ops DEFAULT FOR TYPE timestamp with time zone USING gpubtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 timestamptz_cmp(timestamp with time zone,timestamp with time zone),
	FUNCTION 2 timestamp_sortsupport(internal),
	FUNCTION 4 btequalimage(oid);
ALTER OPERATOR FAMILY datetime_ops USING gpubtree ADD
	OPERATOR 1 <(date,timestamp with time zone),
	OPERATOR 2 <=(date,timestamp with time zone),
	OPERATOR 3 =(date,timestamp with time zone),
	OPERATOR 4 >=(date,timestamp with time zone),
	OPERATOR 5 >(date,timestamp with time zone),
	OPERATOR 1 <(date,timestamp without time zone),
	OPERATOR 2 <=(date,timestamp without time zone),
	OPERATOR 3 =(date,timestamp without time zone),
	OPERATOR 4 >=(date,timestamp without time zone),
	OPERATOR 5 >(date,timestamp without time zone),
	OPERATOR 1 <(timestamp with time zone,date),
	OPERATOR 2 <=(timestamp with time zone,date),
	OPERATOR 3 =(timestamp with time zone,date),
	OPERATOR 4 >=(timestamp with time zone,date),
	OPERATOR 5 >(timestamp with time zone,date),
	OPERATOR 1 <(timestamp with time zone,timestamp without time zone),
	OPERATOR 2 <=(timestamp with time zone,timestamp without time zone),
	OPERATOR 3 =(timestamp with time zone,timestamp without time zone),
	OPERATOR 4 >=(timestamp with time zone,timestamp without time zone),
	OPERATOR 5 >(timestamp with time zone,timestamp without time zone),
	OPERATOR 1 <(timestamp without time zone,date),
	OPERATOR 2 <=(timestamp without time zone,date),
	OPERATOR 3 =(timestamp without time zone,date),
	OPERATOR 4 >=(timestamp without time zone,date),
	OPERATOR 5 >(timestamp without time zone,date),
	OPERATOR 1 <(timestamp without time zone,timestamp with time zone),
	OPERATOR 2 <=(timestamp without time zone,timestamp with time zone),
	OPERATOR 3 =(timestamp without time zone,timestamp with time zone),
	OPERATOR 4 >=(timestamp without time zone,timestamp with time zone),
	OPERATOR 5 >(timestamp without time zone,timestamp with time zone),
	FUNCTION 3 (date, interval) in_range(date,date,interval,boolean,boolean),
	FUNCTION 1 (date, timestamp with time zone) date_cmp_timestamptz(date,timestamp with time zone),
	FUNCTION 1 (date, timestamp without time zone) date_cmp_timestamp(date,timestamp without time zone),
	FUNCTION 1 (timestamp with time zone, date) timestamptz_cmp_date(timestamp with time zone,date),
	FUNCTION 3 (timestamp with time zone, interval) in_range(timestamp with time zone,timestamp with time zone,interval,boolean,boolean),
	FUNCTION 1 (timestamp with time zone, timestamp without time zone) timestamptz_cmp_timestamp(timestamp with time zone,timestamp without time zone),
	FUNCTION 1 (timestamp without time zone, date) timestamp_cmp_date(timestamp without time zone,date),
	FUNCTION 3 (timestamp without time zone, interval) in_range(timestamp without time zone,timestamp without time zone,interval,boolean,boolean),
	FUNCTION 1 (timestamp without time zone, timestamp with time zone) timestamp_cmp_timestamptz(timestamp without time zone,timestamp with time zone);

-- time_ops: same operators and support functions as btree's time_ops
CREATE OPERATOR FAMILY time_ops USING gpubtree;
CREATE OPERATOR CLASS time_ops DEFAULT FOR TYPE time without time zone USING gpubtree FAMILY time_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 time_cmp(time without time zone,time without time zone),
	FUNCTION 3 (time without time zone, interval) in_range(time without time zone,time without time zone,interval,boolean,boolean),
	FUNCTION 4 btequalimage(oid);

-- amcheck's B-tree verification on a gpubtree index (needs CREATE EXTENSION
-- amcheck).  amcheck's rule: like its bt_index_check functions, not for
-- PUBLIC; a caller also needs the right to execute amcheck's function, which
-- is found in amcheck's schema, never through the search_path.
CREATE FUNCTION gpubtree_index_check(index regclass,
									 heapallindexed boolean DEFAULT false,
									 parent boolean DEFAULT false)
	RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED
	SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION gpubtree_index_check(regclass, boolean, boolean) FROM PUBLIC;

-- The GPU service (needs shared_preload_libraries = 'gpubtree').
CREATE FUNCTION gpubtree_status(
	OUT running boolean,
	OUT pid integer,
	OUT gpu boolean,
	OUT device_name text,
	OUT mirror_bytes bigint,
	OUT requests bigint,
	OUT mirror_builds bigint,
	OUT fallbacks bigint,
	OUT status text,
	OUT logged_entries bigint,
	OUT invalidations bigint,
	OUT memory_limit bigint,
	OUT memory_limit_source text,
	OUT exports bigint,
	OUT engine_setting text,
	OUT engine text)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- The mirrors the service holds, and the indexes whose mirror is being
-- built, failed to build or was refused for its size (state): those of the
-- current database, or of every database for roles with the privileges of
-- pg_read_all_stats.
CREATE FUNCTION gpubtree_mirrors(
	OUT database oid,
	OUT index oid,
	OUT relfilenode oid,
	OUT engine text,
	OUT entries bigint,
	OUT bytes bigint,
	OUT build_ms double precision,
	OUT hits bigint,
	OUT current boolean,
	OUT delta bigint,
	OUT state text,
	OUT build_done bigint,
	OUT build_total bigint,
	OUT note text,
	OUT stamped bigint,
	OUT decided_by text,
	OUT rebuilds bigint,
	OUT rebuild_copied bigint,
	OUT device_bytes bigint,
	OUT scratch_bytes bigint,
	OUT bytes_per_entry double precision)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- The service's mirror of a gpubtree index against the index, entry by
-- entry: no rows when the mirror holds every entry of the index under the
-- same key, and nothing else but entries of dead rows.  Holds a ShareLock on
-- the table while it reads, so only the table's owner may call it.
CREATE FUNCTION gpubtree_verify(index regclass, OUT problem text, OUT tid tid)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- Range aggregates over a gpubtree index's leading key column, k in
-- [lo, hi], for the rows the current snapshot sees: answered by the GPU
-- service, or by an index scan without it.  Plain SQL aggregates take the
-- same path through the planner; these are for direct use.  They need
-- SELECT on the columns involved and refuse tables with row-level security
-- enabled for the user.
CREATE FUNCTION gpubtree_count(index regclass, lo anyelement, hi anyelement)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE FUNCTION gpubtree_sum(index regclass, col name, lo anyelement, hi anyelement)
	RETURNS numeric
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE FUNCTION gpubtree_avg(index regclass, col name, lo anyelement, hi anyelement)
	RETURNS numeric
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE FUNCTION gpubtree_min(index regclass, col name, lo anyelement, hi anyelement)
	RETURNS numeric
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE FUNCTION gpubtree_max(index regclass, col name, lo anyelement, hi anyelement)
	RETURNS numeric
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL RESTRICTED;
