-- gpubtree 0.2.0 -> 0.3.0 (ALTER EXTENSION gpubtree UPDATE)
\echo Use "ALTER EXTENSION gpubtree UPDATE TO '0.3.0'" to load this file. \quit

-- 0.3.0 places mirrors on several devices (gpubtree.devices,
-- gpubtree.simulated_devices): gpubtree_mirrors() gains three last
-- columns, device, the device each mirror lives on (NULL on the CPU engine
-- alone), and part_devices and part_entries, the devices and tree entries
-- of the parts of a mirror split across several (NULL when not split).
-- A function's result columns cannot change in place: it is made anew,
-- with the same arguments, volatility and privileges as before.  The
-- library answers the 0.2.0 function too (without the column) until the
-- update runs.

DROP FUNCTION gpubtree_mirrors();

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
	OUT bytes_per_entry double precision,
	OUT device integer,
	OUT part_devices integer[],
	OUT part_entries bigint[])
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
