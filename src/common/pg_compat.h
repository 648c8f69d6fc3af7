/*
 * pg_compat.h
 *	  What differs between the PostgreSQL versions gpubtree builds against,
 *	  in one place: 15, 16 and 18 are built and tested (test/pg_version.sh);
 *	  17 follows the same version numbers, without a build here.
 *
 * The .c files use the newest spelling of each interface where PostgreSQL
 * kept one (object_ownercheck(), MyProcNumber ...), and a gbt_/GBT_ name
 * where the call itself changed shape; older versions get them here.  Once
 * the oldest supported version has the new interface, its entry goes.
 *
 * Include it after postgres.h and the PostgreSQL headers of the calls used.
 */
#ifndef GPUBTREE_PG_COMPAT_H
#define GPUBTREE_PG_COMPAT_H

#include "access/genam.h"
#include "catalog/pg_class.h"	/* RelationRelationId, for object_*check() */
#include "catalog/pg_database.h"	/* DatabaseRelationId */
#include "catalog/pg_namespace.h"	/* NamespaceRelationId */
#include "catalog/pg_proc.h"	/* ProcedureRelationId */
#include "commands/explain.h"
#include "commands/trigger.h"
#include "optimizer/cost.h"		/* disable_cost */
#include "miscadmin.h"		/* MyDatabaseId */
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#if PG_VERSION_NUM >= 180000
/* 18 moved ExplainState and the ExplainProperty*() calls out of explain.h */
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif

#if PG_VERSION_NUM < 150000
#error "gpubtree needs PostgreSQL 15 or later"
#endif

/*
 * Ownership and privilege checks: 16 replaced pg_<catalog>_ownercheck() and
 * pg_<catalog>_aclcheck() by object_ownercheck() and object_aclcheck(), which
 * name the catalog.  (pg_class_aclcheck() and pg_attribute_aclcheck() stay.)
 * 15 gets the new calls for the catalogs gpubtree asks about.
 */
#if PG_VERSION_NUM < 160000
static inline bool
object_ownercheck(Oid classid, Oid objectid, Oid roleid)
{
	if (classid == RelationRelationId)
		return pg_class_ownercheck(objectid, roleid);
	if (classid == ProcedureRelationId)
		return pg_proc_ownercheck(objectid, roleid);
	if (classid == DatabaseRelationId)
		return pg_database_ownercheck(objectid, roleid);
	elog(ERROR, "gpubtree: no ownership check for catalog %u", classid);
	return false;
}

static inline AclResult
object_aclcheck(Oid classid, Oid objectid, Oid roleid, AclMode mode)
{
	if (classid == ProcedureRelationId)
		return pg_proc_aclcheck(objectid, roleid, mode);
	if (classid == NamespaceRelationId)
		return pg_namespace_aclcheck(objectid, roleid, mode);
	elog(ERROR, "gpubtree: no privilege check for catalog %u", classid);
	return ACLCHECK_NO_PRIV;
}
#endif

/*
 * Whether this transaction holds a lock on a relation given by OID: 17 made
 * CheckRelationOidLockedByMe() and gave LockHeldByMe() its orstronger
 * argument; only later minor releases of 15 and 16 have the former, so
 * before 17 it is done here by LockHeldByMe() for each mode.
 */
#if PG_VERSION_NUM >= 170000
#define gbt_relation_oid_locked_by_me(relid, mode, orstronger) \
	CheckRelationOidLockedByMe((relid), (mode), (orstronger))
#else
static inline bool
gbt_relation_oid_locked_by_me(Oid relid, LOCKMODE mode, bool orstronger)
{
	LOCKTAG		tag;
	LOCKMODE	m;

	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	for (m = mode; m <= (orstronger ? MaxLockMode : mode); m++)
		if (LockHeldByMe(&tag, m))
			return true;
	return false;
}
#endif

/*
 * A relation's file: 16 renamed RelFileNode (relNode) to RelFileLocator
 * (relNumber), and rd_node and rd_firstRelfilenodeSubid with it.
 */
#if PG_VERSION_NUM >= 160000
#define GBT_REL_FILENUMBER(rel)		((rel)->rd_locator.relNumber)
#define GBT_REL_FIRST_FILE_SUBID(rel)	((rel)->rd_firstRelfilelocatorSubid)
#else
#define GBT_REL_FILENUMBER(rel)		((rel)->rd_node.relNode)
#define GBT_REL_FIRST_FILE_SUBID(rel)	((rel)->rd_firstRelfilenodeSubid)
#endif

/*
 * Is proc a background worker's (not a client's)?  17 replaced the flag by
 * isRegularBackend.
 */
#if PG_VERSION_NUM >= 170000
#define GBT_PROC_IS_BGWORKER(proc)	(!(proc)->isRegularBackend)
#else
#define GBT_PROC_IS_BGWORKER(proc)	((proc)->isBackgroundWorker)
#endif

/*
 * This backend's PGPROC: 17 dropped PGPROC.pgprocno for MyProcNumber, and
 * moved the local transaction ID into MyProc->vxid.
 */
#if PG_VERSION_NUM < 170000
#define MyProcNumber				(MyProc->pgprocno)
#define GBT_MY_LXID					(MyProc->lxid)
#else
#define GBT_MY_LXID					(MyProc->vxid.lxid)
#endif

/*
 * Index scans: 18 added the instrumentation that EXPLAIN ANALYZE's "Index
 * Searches" reads; gpubtree's own nodes pass none.
 */
#if PG_VERSION_NUM >= 180000
#define gbt_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#define gbt_index_beginscan_bitmap(index, snapshot, nkeys) \
	index_beginscan_bitmap((index), (snapshot), NULL, (nkeys))
#else
#define gbt_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#define gbt_index_beginscan_bitmap(index, snapshot, nkeys) \
	index_beginscan_bitmap((index), (snapshot), (nkeys))
#endif

/*
 * ALTER TABLE ... ENABLE TRIGGER on one table: 16 added the parent trigger
 * and the recursion into partitions (neither used here).
 */
#if PG_VERSION_NUM >= 160000
#define gbt_EnableDisableTrigger(rel, tgname, fires_when, skip_system, lockmode) \
	EnableDisableTrigger((rel), (tgname), InvalidOid, (fires_when), (skip_system), \
						 false, (lockmode))
#else
#define gbt_EnableDisableTrigger(rel, tgname, fires_when, skip_system, lockmode) \
	EnableDisableTrigger((rel), (tgname), (fires_when), (skip_system), (lockmode))
#endif

/*
 * EXPLAIN's planning of one query (standard_ExplainOneQuery(), which
 * explain.c repeats to see the plan): 17 added the MEMORY option, whose
 * planner memory ExplainOnePlan() reports.
 */
#if PG_VERSION_NUM >= 170000
#define GBT_EXPLAIN_MEMORY(es)		((es)->memory)
#define gbt_ExplainOnePlan(plan, into, es, query, params, env, planduration, bufusage, memcounters) \
	ExplainOnePlan((plan), (into), (es), (query), (params), (env), (planduration), \
				   (bufusage), (memcounters))
#else
#define GBT_EXPLAIN_MEMORY(es)		false
#define MemoryContextMemConsumed(context, counters) \
	memset((counters), 0, sizeof(MemoryContextCounters))
#define gbt_ExplainOnePlan(plan, into, es, query, params, env, planduration, bufusage, memcounters) \
	ExplainOnePlan((plan), (into), (es), (query), (params), (env), (planduration), \
				   (bufusage))
#endif

/*
 * Disabled plan types (enable_seqscan = off ...): up to 17 a disabled path's
 * cost has disable_cost added; 18 counts disabled nodes apart
 * (Path.disabled_nodes, Plan.disabled_nodes, compared before the costs) and
 * leaves the cost alone.  GBT_PATH_COST() and GBT_PLAN_COST() are the costs
 * as 15 has them, disable_cost included; GBT_DISABLE_COST_CHARGED says
 * whether the planner added it to the path just made.
 */
#if PG_VERSION_NUM >= 180000
#define GBT_PATH_COST(path)			((path)->total_cost + (path)->disabled_nodes * disable_cost)
#define GBT_PLAN_COST(plan)			((plan)->total_cost + (plan)->disabled_nodes * disable_cost)
#define GBT_DISABLE_COST_CHARGED	false
#else
#define GBT_PATH_COST(path)			((path)->total_cost)
#define GBT_PLAN_COST(plan)			((plan)->total_cost)
#define GBT_DISABLE_COST_CHARGED	true
#endif

/* 16 dropped c.h's Abs() */
#ifndef Abs
#define Abs(x)						((x) >= 0 ? (x) : -(x))
#endif

/* The permissions a plan's relations need, checked as ExecutorStart does. */
#if PG_VERSION_NUM >= 160000
#define gbt_check_plan_permissions(stmt) \
	ExecCheckPermissions((stmt)->rtable, (stmt)->permInfos, true)
#else
#define gbt_check_plan_permissions(stmt) ExecCheckRTPerms((stmt)->rtable, true)
#endif

#endif							/* GPUBTREE_PG_COMPAT_H */
