-- gpubtree 0.1.0 -> 0.2.0 (ALTER EXTENSION gpubtree UPDATE)
\echo Use "ALTER EXTENSION gpubtree UPDATE TO '0.2.0'" to load this file. \quit

-- 0.2.0 changes what the library does, not what the extension's objects
-- are (CHANGELOG.md): the capture trigger known by its function and its
-- DDL refused or followed, queries inside a deleting statement, the SQL
-- functions' privilege checks, float min/max ties, one service_timeout per
-- statement.  One new function, gpubtree_why_not(); nothing else changes
-- in the catalogs: an installation of 0.1.0 with live indexes keeps its
-- indexes, capture triggers and mirrors.

-- Why a query is not answered through the service: plans it (without
-- running it) and returns, per node of the service, the planner's notes.
CREATE FUNCTION gpubtree_why_not(
	query text,
	OUT plan_node text,
	OUT relation regclass,
	OUT reason text)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
