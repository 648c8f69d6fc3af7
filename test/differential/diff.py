#!/usr/bin/env python3
"""Randomized differential test: gpubtree against btree.

For one seed: twin tables t_g (gpubtree indexes) and t_b (the same indexes
USING btree) get the same random DML (inserts with duplicates and NULLs,
updates of keys and INCLUDE columns, ON CONFLICT upserts, deletes, VACUUM,
committed and rolled-back transactions, savepoints rolled back to), then the
same random queries run on both under each plan shape (index scan,
index-only scan, bitmap scan), and whole-table aggregates (the rows with
NULL keys from an index scan), and every output must equal that of a
sequential scan of t_b; GROUP BY a bucket of a leading index column
(GROUP_BUCKETS' templates, drawn by a generator of their own) runs under
each plan shape and through the GpubtreeAggregate node (every scan
disabled), in a random time zone with DST changes, and at least a third
must be answered by the service.  EXPLAIN checks that most queries really used the
shape on a gpubtree index; EXPLAIN ANALYZE counts the bitmap scans that the
GPU service (not nbtree) answered.  Drives psql only: no driver needed.

--concurrent: after a serial load, 3 writer sessions (--writers) keep
inserting, updating, deleting, rolling back (whole transactions and to
savepoints) and running VACUUM on both tables, each transaction applied to
t_g and t_b alike under REPEATABLE READ, while checks run for --seconds: each
check is one REPEATABLE READ transaction in which the query runs on t_g with
only bitmap scans allowed (under EXPLAIN ANALYZE, as CREATE TEMP TABLE AS,
so that the answer compared is the one whose plan says whether the GPU
service answered it) and then by sequential scans of t_g and t_b; all three
must be equal.  Every --verify-every seconds gpubtree_verify() checks every
current mirror of t_g; writer errors other than write conflicts fail the
seed; at least one check must have been answered by the service.  After the
writers stop: t_g = t_b, every plan shape, gpubtree_verify(), amcheck.  A
seed fixes each session's SQL, not how the sessions interleave.

--mvcc: update- and delete-heavy, on one table m with the gpubtree indexes
(k) INCLUDE (v, i) and UNIQUE (id) and a column w in no index: random
transactions (updates of the INCLUDE columns, of the key, HOT updates,
deletes, inserts, DELETE + INSERT of the same keys, ON CONFLICT upserts,
MERGE; committed, rolled back, savepoints rolled back to) at random
isolation levels, first one session at a time (--mvcc-rounds rounds, each
followed by 4 checks), then --writers sessions for --seconds while checks
run.  A check is one transaction at READ COMMITTED, REPEATABLE READ or
SERIALIZABLE, some with their own uncommitted changes (some in savepoints,
rolled back to or released): count, sum, avg, min, max over a random range
through the GpubtreeAggregate node (a quarter of them GROUP BY a bucket of
k), or rows of many keys or of a key range and a join on the
key through the GpubtreeLookup and GpubtreeJoin nodes, against the same query with
gpubtree.device = off and by a sequential scan in the same transaction (at
READ COMMITTED no writer can commit in between: see MVCC_GATE).  A
REPEATABLE READ snapshot held by a session of its own is checked at the
start, during and after the writes, and its answers must never change.
At least half of all checks must have been answered by the service; the
summary counts those, and those whose node checked entries in the heap
(MVCC_DEBUG=1 lists them on stderr).  Checks discarded after a
serialization failure or deadlock are counted; other writer errors fail the
seed.  gpubtree_verify() checks both mirrors after every tenth serial round
and every --verify-every seconds during the writes (its ShareLock waits
for the writers' open transactions).  Afterwards: checks without writers,
gpubtree_verify(), amcheck.

usage: diff.py SEED [--rounds N] [--queries N]
       diff.py SEED --concurrent [--writers 3] [--seconds 30] [--checks N] [--verify-every 5]
       diff.py SEED --mvcc [--writers 2] [--seconds 20] [--mvcc-rounds 30] [--mvcc-rows 5000] [--verify-every 5]
Environment: PGBIN (psql's directory), GPUBTREE_DEVICE (gpubtree.device: auto
or off; the engine is the cluster's gpubtree.engine).
"""
import argparse
import difflib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

PSQL = [os.path.join(os.environ.get("PGBIN", ""), "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]

COLUMNS = "id int4, k int8, k2 int4, f float8, ts timestamptz, d date, v int8"
INDEXES = {  # name: definition after USING <am>
    "k": "(k) INCLUDE (v)",
    "k2k": "(k2 DESC NULLS FIRST, k)",
    "f": "(f)",
    "ts": "(ts)",
    "dk2": "(d, k2)",
    "id": "(id)",  # UNIQUE
}

OFF = "SET enable_seqscan=off; SET enable_indexscan=off; SET enable_indexonlyscan=off; SET enable_bitmapscan=off;"
SHAPES = {  # shape: (settings, EXPLAIN node that must appear on a t_g index)
    "index": (OFF + "SET enable_indexscan=on; SET gpubtree.enable_lookup=off;", r"Index Scan (Backward )?using t_g_"),
    "index-only": (OFF + "SET enable_indexscan=on; SET enable_indexonlyscan=on; SET gpubtree.enable_lookup=off;", r"Index Only Scan (Backward )?using t_g_"),
    "bitmap": (OFF + "SET enable_bitmapscan=on; SET gpubtree.enable_lookup=off;", r"Bitmap Index Scan on t_g_"),
}
SEQSCAN = OFF + "SET enable_seqscan=on; SET gpubtree.enable_lookup=off;"
PARALLEL = ("SET parallel_setup_cost=0; SET parallel_tuple_cost=0; SET min_parallel_table_scan_size=0;"
            "SET min_parallel_index_scan_size=0; SET max_parallel_workers_per_gather=2;")
T0 = "'2026-01-01 00:00+00'::timestamptz"


def psql(sql):
    r = subprocess.run(PSQL, input=sql, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("psql failed: %s" % r.stderr.strip()[-1500:])
    # min()/max() of a float column holding both 0 and -0 return whichever
    # the scan met first (they compare equal), so plans may differ there.
    return re.sub(r"(?m)(?<![^|\n])-0(?![^|\n])", "0", r.stdout)


class Gen:
    """Random SQL; '{t}' stands for the table name in every statement."""

    def __init__(self, rng, base_id=1):
        self.r = rng
        self.base = base_id  # ON CONFLICT picks existing ids from base_id on
        self.next_id = base_id

    def chance(self, p):
        return self.r.random() < p

    # values, as SQL literals
    def k(self):
        if self.chance(0.06):
            return "NULL"
        if self.chance(0.02):
            return self.r.choice(["9223372036854775807", "-9223372036854775808"])
        return str(self.r.randint(-50, 250))  # many duplicates

    def k2(self):
        return "NULL" if self.chance(0.08) else str(self.r.randint(0, 9))

    def f(self):
        if self.chance(0.05):
            return "NULL"
        if self.chance(0.15):
            return "'%s'::float8" % self.r.choice(["NaN", "Infinity", "-Infinity", "-0", "0"])
        return repr(round(self.r.uniform(-100, 100), self.r.choice([0, 1, 3])))

    def ts(self):
        return "NULL" if self.chance(0.05) else "%s + interval '%d min'" % (T0, self.r.randint(-3000, 3000) * 20)

    def d(self):
        return "NULL" if self.chance(0.05) else "'2026-01-01'::date + %d" % self.r.randint(-40, 40)

    def row(self):
        self.next_id += 1
        return "(%d, %s, %s, %s, %s, %s, %d)" % (self.next_id, self.k(), self.k2(), self.f(), self.ts(), self.d(),
                                                 self.r.randint(-1000, 1000))

    def bulk(self):
        """Many rows from generate_series, with duplicates and NULLs."""
        n, a, b = self.r.randint(100, 1500), self.r.choice([7, 13, 31, 101]), self.r.randint(0, 99)
        sql = ("INSERT INTO {t} SELECT %d + g, CASE WHEN g %% 19 = 0 THEN NULL ELSE (g * %d + %d) %% 300 - 50 END, "
               "CASE WHEN g %% 11 = 0 THEN NULL ELSE g %% 10 END, "
               "CASE g %% 23 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN '-Infinity' WHEN 3 THEN NULL "
               "ELSE ((g * %d) %% 2000 - 1000) / 10.0 END, "
               "%s + (g * %d %% 6000 - 3000) * interval '20 min', '2026-01-01'::date + (g * %d %% 81 - 40), g %% 1000 "
               "FROM generate_series(1, %d) g;") % (self.next_id, a, b, a, T0, a, a, n)
        self.next_id += n
        return sql

    def span(self, width):
        lo = self.r.randint(-60, 250)
        return lo, lo + self.r.randint(0, width)

    def dml(self):
        c = self.r.random()
        if c < 0.2:
            return "INSERT INTO {t} VALUES %s;" % ", ".join(self.row() for _ in range(self.r.randint(1, 40)))
        if c < 0.35:
            return self.bulk()
        if c < 0.47:
            return "UPDATE {t} SET k = k + %d WHERE k BETWEEN %d AND %d;" % ((self.r.randint(-5, 5),) + self.span(20))
        if c < 0.55:
            return "UPDATE {t} SET v = v + 1, f = %s WHERE k BETWEEN %d AND %d;" % ((self.f(),) + self.span(30))
        if c < 0.62:
            m = self.r.randint(5, 40)
            return "UPDATE {t} SET k2 = %s, d = d + %d WHERE id %% %d = %d;" % (
                self.k2(), self.r.randint(-3, 3), m, self.r.randrange(m))
        if c < 0.67:
            m = self.r.randint(10, 60)
            return "UPDATE {t} SET k = NULL, ts = ts + interval '1 hour' WHERE id %% %d = %d;" % (m, self.r.randrange(m))
        if c < 0.74:
            ids = self.r.sample(range(self.base, self.next_id + 1), min(20, self.next_id - self.base + 1))  # existing ids
            rows = ", ".join("(%d, %s, %s, %s, %s, %s, 1)" % (i, self.k(), self.k2(), self.f(), self.ts(), self.d())
                             for i in ids)
            return "INSERT INTO {t} VALUES %s ON CONFLICT (id) DO UPDATE SET k = EXCLUDED.k, v = {t}.v + 1;" % rows
        if c < 0.88:
            return "DELETE FROM {t} WHERE k BETWEEN %d AND %d;" % self.span(8)
        if c < 0.94:
            m = self.r.randint(8, 60)
            return "DELETE FROM {t} WHERE id %% %d = %d;" % (m, self.r.randrange(m))
        return "DELETE FROM {t} WHERE f %s %s;" % (self.r.choice(["<", ">", "="]), self.f())

    def transaction(self):
        """A few statements in one of several transaction shapes."""
        body = [self.dml() for _ in range(self.r.randint(1, 4))]
        c = self.r.random()
        if c < 0.3:
            return "\n".join(body)  # autocommit
        if c < 0.6:
            return "BEGIN;\n%s\nCOMMIT;" % "\n".join(body)
        if c < 0.75:
            return "BEGIN;\n%s\nROLLBACK;" % "\n".join(body)
        undone = [self.dml() for _ in range(self.r.randint(1, 3))]
        return "BEGIN;\n%s\nSAVEPOINT a;\n%s\nSAVEPOINT b;\n%s\nROLLBACK TO SAVEPOINT a;\n%s\nCOMMIT;" % (
            body[0], undone[0], "\n".join(undone[1:]), "\n".join(body[1:]))

    # queries: outputs are ordered by every selected column, so deterministic
    def cmp(self):
        return self.r.choice(["<", "<=", "=", ">=", ">"])

    def int_array(self, typ, lo, hi):
        elems = [str(self.r.randint(lo, hi)) for _ in range(self.r.randint(1, 40))]
        if self.chance(0.3):
            elems.insert(self.r.randrange(len(elems) + 1), "NULL")
        return "'{%s}'::%s[]" % (",".join(elems), typ)

    def query(self):
        c = self.r.randrange(22)
        lo, hi = self.span(60)
        n = self.r.randint(1, 40)
        fc = self.r.choice(["'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "0", str(round(self.r.uniform(-100, 100), 1))])
        return [
            "SELECT k, v FROM {t} WHERE k %s %d AND k %s %d ORDER BY k, v" % (
                self.r.choice([">", ">="]), lo, self.r.choice(["<", "<="]), hi),
            "SELECT k, v FROM {t} WHERE k = %d ORDER BY v" % lo,
            "SELECT k, v FROM {t} WHERE k = ANY (%s) ORDER BY k, v" % self.int_array(self.r.choice(["int8", "int4"]), -60, 260),
            "SELECT count(*), sum(v), min(k), max(k) FROM {t} WHERE k %s %d" % (self.cmp(), lo),
            "SELECT count(*), sum(v), min(k), max(k) FROM {t} WHERE k < %d::int4 AND k >= %d::int2" % (hi, lo),
            "SELECT k, v FROM {t} WHERE k > %d::int4 ORDER BY k, v LIMIT %d" % (lo, n),
            "SELECT count(*), sum(v) FROM {t} WHERE k IS NULL",
            "SELECT k, v FROM {t} WHERE k IS NOT NULL ORDER BY k %s, v %s LIMIT %d" % (2 * (self.r.choice(["ASC", "DESC"]),) + (n,)),
            "SELECT k, v FROM {t} WHERE k IN (%d, %d) OR k IS NULL ORDER BY k, v" % (lo, hi),
            "SELECT k2, k FROM {t} WHERE k2 = %d AND k BETWEEN %d AND %d ORDER BY k2, k" % (self.r.randint(0, 9), lo, hi),
            "SELECT k2, k FROM {t} WHERE k2 %s %d ORDER BY k2 DESC NULLS FIRST, k LIMIT %d" % (self.cmp(), self.r.randint(0, 9), n),
            "SELECT k2, k FROM {t} WHERE k2 IS NULL ORDER BY k2, k",
            "SELECT k2, k FROM {t} WHERE k2 = ANY (%s) AND k > %d ORDER BY k2, k" % (self.int_array("int8", -1, 10), lo),
            "SELECT k2, k FROM {t} WHERE k2 >= %d::int8 ORDER BY k2 %s, k %s LIMIT %d" % (
                (self.r.randint(0, 9),) + self.r.choice([("DESC NULLS FIRST", "ASC"), ("ASC NULLS LAST", "DESC")]) + (n,)),
            "SELECT f FROM {t} WHERE f %s %s ORDER BY f, f::text" % (self.cmp(), fc),
            "SELECT f FROM {t} WHERE f %s %s::float4 AND f IS NOT NULL ORDER BY f, f::text" % (self.cmp(), fc),
            "SELECT f FROM {t} WHERE f = ANY ('{NaN,-0,Infinity,-Infinity,%s,NULL}'::float8[]) ORDER BY f, f::text" % fc.strip("'"),
            "SELECT ts FROM {t} WHERE ts >= %s + interval '%d hours' AND ts < %s + interval '%d hours' ORDER BY ts" % (T0, lo, T0, hi),
            "SELECT count(*), min(ts), max(ts) FROM {t} WHERE ts %s '2026-01-%02d'::date" % (self.cmp(), self.r.randint(1, 28)),
            "SELECT d, k2 FROM {t} WHERE d BETWEEN '2026-01-01'::date + %d AND '2026-01-01'::date + %d ORDER BY d, k2" % (
                lo // 5 - 10, hi // 5 - 10),
            "SELECT d, k2 FROM {t} WHERE d %s '2026-01-%02d 12:00'::timestamp ORDER BY d DESC, k2 LIMIT %d" % (
                self.cmp(), self.r.randint(1, 28), n),
            "SELECT id FROM {t} WHERE id = ANY (%s) ORDER BY id" % self.int_array("int4", 1, self.next_id),
        ][c]


# Whole-table aggregates (no WHERE) answered from each index, whose leading
# columns all hold NULLs: the GpubtreeAggregate node adds the rows with NULL
# keys, which the mirror does not hold, from an index scan.  A fixed list,
# run in every serial phase, so that the random sequence stays as it was.
WHOLE_TABLE_AGGS = [
    "SELECT count(*) AS n, count(k) AS nk, sum(v) AS sv, avg(v) AS av, min(v) AS minv, max(v) AS maxv, "
    "sum(k) AS sk, min(k) AS mink, max(k) AS maxk FROM {t}",
    "SELECT count(*), sum(k), min(k2), max(k2) FROM {t}",
    "SELECT count(f), min(f), max(f) FROM {t}",
    "SELECT count(ts), min(ts), max(ts) FROM {t}",
    "SELECT count(*), min(d), max(d), sum(k2), avg(k2) FROM {t}",
    "SELECT count(*) AS n, count(id) AS nid, min(id), max(id) FROM {t}",
]


# GROUP BY a bucket of the key: templates per leading index column, each
# with constants drawn at random ({c}, {d}: divisors, {lo} {hi} {n}:
# width_bucket's bounds and count, {u}: a date_trunc unit, {m}: minutes).
# A template added here is drawn in the serial and MVCC modes.
GROUP_BUCKETS = {
    "k": ["k", "k / {c}", "(k + {c}) / {d}", "k * -2", "{c} - k", "width_bucket(k, {lo}, {hi}, {n})",
          "width_bucket(k::numeric, {lo}, {hi}, {n})", "k::float8", "floor(k / {c}.0)", "(k / {c}) * {c}",
          "round(k::numeric, -1)"],
    "k2": ["k2", "k2 / {d}", "width_bucket(k2, 0, 10, {n})"],
    "f": ["floor(f)", "trunc(f / {c})", "width_bucket(f, {lo}, {hi}, {n})", "round(f::numeric, -1)"],
    "ts": ["date_trunc('{u}', ts)", "date_bin('{m} minutes', ts, %s)" % T0, "ts::date",
           "date_trunc('day', ts, 'America/New_York')", "date_trunc('hour', ts::timestamp)"],
    "d": ["d", "d + {c}", "date_trunc('week', d)", "(d - '2026-01-01'::date) / {d}"],
    "id": ["id / {c}0"],
}
# Each key's aggregates over its index's columns (t_g_k includes v), and a
# range of it.
GROUP_AGGS = {"k": ["count(*)", "sum(v)", "min(v)", "max(v)", "avg(v)", "count(k)", "min(k)", "sum(k)"],
              "k2": ["count(*)", "min(k2)", "max(k2)", "count(k2)"], "f": ["count(*)", "min(f)", "max(f)"],
              "ts": ["count(*)", "min(ts)", "max(ts)"], "d": ["count(*)", "min(d)", "count(d)"],
              "id": ["count(*)", "min(id)", "max(id)", "sum(id)"]}
# Templates that overflow at k's extremes (the data holds both int8 limits),
# and every f template (width_bucket refuses NaN): drawn with a range only.
GROUP_NEEDS_RANGE = {"(k + {c}) / {d}", "k * -2", "{c} - k", "width_bucket(f, {lo}, {hi}, {n})"}
GROUP_RANGES = {"k": ("k BETWEEN {a} AND {b}", -60, 260), "k2": ("k2 BETWEEN {a} AND {a} + 3", 0, 9),
                "f": ("f BETWEEN {a} AND {b}", -100, 100),
                "ts": ("ts BETWEEN %s + interval '{a} hours' AND %s + interval '{b} hours'" % (T0, T0), -1000, 1000),
                "d": ("d BETWEEN '2026-01-01'::date + {a} AND '2026-01-01'::date + {b}", -40, 40),
                "id": ("id BETWEEN {a} AND {b} * 20", 1, 500)}


def group_query(r, columns=None):
    """A random GROUP BY bucket query on {t} (its output ordered by the
    bucket, columns aliased c0, c1, ...); r: a random.Random of its own."""
    col = r.choice(sorted(columns or GROUP_BUCKETS))
    lo = r.randint(-100, 100)
    template = r.choice(GROUP_BUCKETS[col])
    expr = template.format(
        c=r.choice([2, 3, 7, 10, 25]), d=r.choice([3, 5, -4]), lo=lo, hi=lo + r.randint(1, 300), n=r.randint(1, 12),
        u=r.choice(["hour", "day", "week", "month"]), m=r.choice([15, 90, 600]))
    aggs = [GROUP_AGGS[col][0]] + r.sample(GROUP_AGGS[col][1:], r.randint(0, len(GROUP_AGGS[col]) - 1))
    cond, a_min, a_max = GROUP_RANGES[col]
    a = r.randint(a_min, a_max)
    where = {0: "", 1: " WHERE " + cond.format(a=a, b=a + r.randint(0, a_max - a_min)),
             2: " WHERE %s IS NOT NULL" % col}[1 if template in GROUP_NEEDS_RANGE else r.randrange(3)]
    having = " HAVING count(*) > %d" % r.randint(1, 4) if r.random() < 0.2 else ""
    return "SELECT %s FROM {t}%s GROUP BY 1%s ORDER BY 1" % (
        ", ".join("%s AS c%d" % (e, n) for n, e in enumerate([expr] + aggs)), where, having)


def agg_query(gen):
    """Concurrent mode only (the serial mode's random sequence stays as it
    was): range aggregates on the leading column of each index, the
    multi-column ones included, which the GpubtreeAggregate node may answer
    from the mirror, = ANY of InitPlan arrays, and whole-table ones."""
    lo, hi = gen.span(60)
    if gen.chance(0.2):
        return gen.r.choice(WHOLE_TABLE_AGGS)
    # a random set of k's aggregates: with and without min and max (the
    # service adds a range's ends by sums where none is asked)
    k_aggs = ", ".join("%s AS a%d" % (e, n) for n, e in enumerate(
        [GROUP_AGGS["k"][0]] + gen.r.sample(GROUP_AGGS["k"][1:], gen.r.randint(0, 4))))
    return gen.r.choice([
        "SELECT %s FROM {t} WHERE k BETWEEN %d AND %d" % (k_aggs, lo, hi),
        "SELECT count(*), min(k2), max(k2) FROM {t} WHERE d BETWEEN '2026-01-01'::date + %d AND '2026-01-01'::date + %d" % (
            lo // 5 - 10, hi // 5 - 10),
        "SELECT count(*), sum(k), min(k), max(k) FROM {t} WHERE k2 BETWEEN %d AND %d" % (lo % 10, lo % 10 + gen.r.randint(0, 4)),
        "SELECT count(*), min(f), max(f) FROM {t} WHERE f BETWEEN %d AND %d" % (lo - 100, hi - 100),
        "SELECT count(*), min(ts), max(ts) FROM {t} WHERE ts BETWEEN %s + interval '%d hours' AND %s + interval '%d hours'" % (
            T0, lo * 10, T0, hi * 10),
        "SELECT count(*), min(id), max(id) FROM {t} WHERE id BETWEEN %d AND %d" % (lo * 20, hi * 40),
        # Arrays known only when the plan runs (InitPlans): the node decides then.
        "SELECT %s FROM {t} WHERE k = ANY ((SELECT array_agg(x) FROM generate_series(%d, %d, %d) x)::int8[])" % (
            k_aggs, lo, hi, gen.r.randint(1, 3)),
        "SELECT count(*), sum(k) FROM {t} WHERE k2 = ANY (ARRAY(SELECT generate_series(%d, %d)))" % (lo % 10, lo % 10 + gen.r.randint(0, 4)),
        # Rows of many keys or a key range, and a join on the key: GpubtreeLookup, GpubtreeJoin.
        "SELECT k, v FROM {t} WHERE k = ANY (ARRAY(SELECT generate_series(%d, %d))) ORDER BY k, v" % (lo, hi),
        "SELECT k, v FROM {t} WHERE k > %d AND k <= %d ORDER BY k, v" % (lo, hi),
        "SELECT p.x, t.k, t.v FROM generate_series(%d, %d) p(x) JOIN {t} t ON t.k = p.x ORDER BY 1, 2, 3" % (lo, hi),
    ])


def run_queries(qs, settings, table, prefix):
    """Run the queries in one session; returns each query's output."""
    sql = [settings, prefix.replace("{t}", table)]
    for q in qs:
        sql += ["\\echo @@", q.replace("{t}", table) + ";"]
    return psql("\n".join(sql)).split("@@\n")[1:]


def compare_shapes(qs, settings, prefix, label, failures, used):
    """Run the queries under every plan shape on both tables; compare with a seqscan of t_b."""
    expected = run_queries(qs, settings + SEQSCAN, "t_b", prefix)
    for shape, (shape_settings, node) in SHAPES.items():
        for table in ("t_g", "t_b"):
            got = run_queries(qs, settings + shape_settings, table, prefix)
            for i, (g, e) in enumerate(zip(got, expected)):
                if g != e:
                    d = difflib.unified_diff(e.splitlines(), g.splitlines(), "seqscan t_b", "%s %s" % (shape, table), lineterm="", n=1)
                    failures.append("%s, %s scan of %s: %s;\n    %s" % (
                        label, shape, table, qs[i].replace("{t}", table), "\n    ".join(list(d)[:12])))
        explain = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " if shape == "bitmap" else "EXPLAIN (COSTS OFF) "
        plans = run_queries([explain + q for q in qs], settings + shape_settings, "t_g", prefix)
        used[shape] += sum(1 for p in plans if re.search(node, p))
        used["service"] += sum(1 for p in plans if re.search(r"Service: [1-9]", p))
        used["aggregate"] += sum(1 for p in plans if re.search(r"Answered by: GPU service", p))


def compare_node(qs, settings, prefix, label, failures, used):
    """Run the queries on t_g with every scan disabled, so that the
    GpubtreeAggregate node is taken wherever it is offered; compare with a
    seqscan of t_b, and count the node's answers by the service."""
    expected = run_queries(qs, settings + SEQSCAN, "t_b", prefix)
    got = run_queries(qs, settings + OFF, "t_g", prefix)
    for q, g, e in zip(qs, got, expected):
        if g != e:
            d = difflib.unified_diff(e.splitlines(), g.splitlines(), "seqscan t_b", "the node on t_g", lineterm="", n=1)
            failures.append("%s, through the node: %s;\n    %s" % (label, q.replace("{t}", "t_g"), "\n    ".join(list(d)[:12])))
    plans = run_queries(["EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + q for q in qs], settings + OFF,
                        "t_g", prefix)
    used["node"] = used.get("node", 0) + sum(1 for p in plans if re.search(r"Answered by: GPU service", p))


# ---- concurrent mode ---------------------------------------------------------
# Writers change t_g and t_b while the checks run.  Each writer transaction
# is REPEATABLE READ and applies every statement to t_g and then to t_b, so
# that every snapshot sees the twins equal (a write conflict aborts the whole
# transaction, on both tables).  Each check is one REPEATABLE READ
# transaction: the query on t_g with only bitmap scans allowed, run under
# EXPLAIN ANALYZE as CREATE TEMP TABLE AS (so that the answer checked is the
# one whose plan says whether the service answered it), then the same query
# by sequential scans of t_g and of t_b: all three must be equal.

LOCAL_OFF = OFF.replace("SET ", "SET LOCAL ")
LOCAL_BITMAP = LOCAL_OFF + "SET LOCAL enable_bitmapscan=on;"
LOCAL_SEQSCAN = LOCAL_OFF + ("SET LOCAL enable_seqscan=on; SET LOCAL gpubtree.enable_aggregate=off; "
                             "SET LOCAL gpubtree.enable_lookup=off;")
EXPECTED_ERRORS = re.compile(r"could not serialize access|deadlock detected|current transaction is aborted")
PSQL_WRITER = [x for x in PSQL if x not in ("-v", "ON_ERROR_STOP=1")]


class PsqlWriter(threading.Thread):
    """A writer session in psql: next_sql() until told to stop, each
    statement batch acknowledged before the next."""

    def __init__(self, n, settings, errfile):
        threading.Thread.__init__(self, daemon=True)
        self.n = n
        self.settings = settings
        self.errfile = errfile
        self.stop = threading.Event()
        self.txns = 0
        self.died = None

    def next_sql(self):
        raise NotImplementedError

    def run(self):
        p = subprocess.Popen(PSQL_WRITER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=self.errfile, text=True, bufsize=1)
        p.stdin.write("\\set SHOW_CONTEXT never\n%s\n" % self.settings)
        try:
            while not self.stop.is_set():
                sql = self.next_sql()
                self.txns += 1
                p.stdin.write("\\warn @@txn %d.%d\n%s\n\\echo @@done\n" % (self.n, self.txns, sql))
                p.stdin.flush()
                while True:
                    line = p.stdout.readline()
                    if line == "":
                        self.died = "writer %d: psql ended (server crash?)" % self.n
                        return
                    if line.strip() == "@@done":
                        break
        except (BrokenPipeError, OSError) as e:
            self.died = "writer %d: %s" % (self.n, e)
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass
            p.wait()


class Writer(PsqlWriter):
    """One session: random twin transactions (committed, rolled back, with
    savepoints rolled back to), some with bitmap scans forced (so that
    UPDATE and DELETE find their rows through the GPU service), and now and
    then VACUUM, until told to stop."""

    def __init__(self, n, seed, base_id, settings, errfile):
        PsqlWriter.__init__(self, n, settings, errfile)
        self.gen = Gen(random.Random(seed * 7919 + n + 1), base_id)
        self.vacuums = self.forced = self.rollbacks = 0

    def twin(self, txn):
        lines = txn.split("\n")
        explicit = lines[0] == "BEGIN;"
        out = ["BEGIN ISOLATION LEVEL REPEATABLE READ;"]
        if self.gen.chance(0.5):
            out.append(LOCAL_BITMAP)
            self.forced += 1
        for line in lines[1:] if explicit else lines:
            if "{t}" in line:
                out += [line.replace("{t}", "t_g"), line.replace("{t}", "t_b")]
            else:
                out.append(line)
        if not explicit:
            out.append("COMMIT;")
        if "ROLLBACK;" in lines:
            self.rollbacks += 1
        return "\n".join(out)

    def next_sql(self):
        if self.gen.chance(0.04):
            self.vacuums += 1
            return self.gen.r.choice(["VACUUM t_g; VACUUM t_b;", "VACUUM ANALYZE t_g; VACUUM ANALYZE t_b;"])
        return self.twin(self.gen.transaction())


def writer_errors(writers, errfiles, expected, failures):
    """Count the writers' expected errors; a writer that died, or the first
    unexpected error of a transaction (at most 5), is a failure."""
    errors, unexpected = 0, []
    for w, f in zip(writers, errfiles):
        if w.died:
            failures.append(w.died)
        f.seek(0)
        txn, failed = "?", False
        for line in f:
            if line.startswith("@@txn"):
                txn, failed = line.split()[1], False
            elif "ERROR:" in line and not failed:
                # The first error of a transaction must be an expected one;
                # what follows it in the same transaction is its consequence.
                failed = True
                if expected.search(line):
                    errors += 1
                else:
                    unexpected.append("writer transaction %s: %s" % (txn, line.strip()))
        f.close()
    failures += unexpected[:5]
    return errors


def checks_sql(qs):
    sql = []
    for q in qs:
        sql += ["BEGIN ISOLATION LEVEL REPEATABLE READ;", LOCAL_BITMAP,
                "\\echo @@",
                "EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) "
                "CREATE TEMP TABLE gbt_check ON COMMIT DROP AS %s;" % q.replace("{t}", "t_g"),
                "\\echo @@", "TABLE gbt_check;",
                LOCAL_SEQSCAN, "\\echo @@", q.replace("{t}", "t_g") + ";",
                "\\echo @@", q.replace("{t}", "t_b") + ";",
                "COMMIT;"]
    return "\n".join(sql)


def service_use(explain_json):
    """(bitmap scans by the service, by nbtree instead, aggregate nodes by the service, gpubtree bitmap scan?)"""
    doc = json.loads(explain_json)
    served = fallbacks = aggs = 0
    bitmap = False
    stack = list(doc)
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            served += x.get("Service Scans", 0) if isinstance(x.get("Service Scans"), int) else 0
            fallbacks += x.get("Answered by nbtree", 0) if isinstance(x.get("Answered by nbtree"), int) else 0
            if x.get("Answered by") == "GPU service":
                aggs += 1
            if x.get("Node Type") == "Bitmap Index Scan" and x.get("Index Name", "").startswith("t_g_"):
                bitmap = True
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return served, fallbacks, aggs, bitmap


def verify_mirrors(prefix="t_g_"):
    """gpubtree_verify() of every index named prefix... with a current mirror: (mirrors checked, problems)."""
    like = prefix.replace("_", "\\_") + "%"
    out = psql("SELECT i.relname || '|' || coalesce(v.problem, '') || '|' || coalesce(v.tid::text, '') "
               "FROM pg_class i CROSS JOIN LATERAL gpubtree_verify(i.oid) v "
               "WHERE i.oid IN (SELECT index FROM gpubtree_mirrors() WHERE current) AND i.relname LIKE '%s';"
               "SELECT '#' || count(*) FROM gpubtree_mirrors() m JOIN pg_class i ON i.oid = m.index "
               "WHERE m.current AND i.relname LIKE '%s';" % (like, like))
    checked, problems = 0, []
    for line in out.splitlines():
        if line.startswith("#"):
            checked = int(line[1:])
        elif line and line.split("|")[1] not in ("no current mirror", "no GPU service answered"):
            problems.append(line)
    return checked, problems


def tree_rebuilds(prefix):
    """New trees the service made with the delta folded in, over the current mirrors of indexes named prefix..."""
    like = prefix.replace("_", "\\_") + "%"
    return int(psql("SELECT coalesce(sum(m.rebuilds), 0) FROM gpubtree_mirrors() m JOIN pg_class i "
                    "ON i.oid = m.index WHERE i.relname LIKE '%s';" % like).strip() or 0)


def concurrent(args, gen, common):
    """Checks under one snapshot while writers change the tables."""
    failures = []
    txns = [gen.transaction() for _ in range(args.rounds)]
    psql("\n".join(x.replace("{t}", t) for x in txns for t in ("t_g", "t_b")))
    psql("VACUUM ANALYZE t_g; VACUUM ANALYZE t_b;")
    errfiles = [tempfile.TemporaryFile("w+") for _ in range(args.writers)]
    writers = [Writer(n, args.seed, gen.next_id + (n + 1) * 100000000, common, errfiles[n])
               for n in range(args.writers)]
    for w in writers:
        w.start()

    t0 = time.time()
    nchecks = served = fallbacks = aggs = bitmaps = verifies = mirrors_verified = 0
    last_verify = t0
    try:
        while nchecks < args.checks and time.time() - t0 < args.seconds:
            qs = [agg_query(gen) if gen.chance(0.3) else gen.query() for _ in range(min(8, args.checks - nchecks))]
            parts = psql(common + "\n" + checks_sql(qs)).split("@@\n")[1:]
            if len(parts) != 4 * len(qs):
                raise RuntimeError("unexpected output of %d checks: %d parts" % (len(qs), len(parts)))
            for i, q in enumerate(qs):
                plan, got, seq_g, seq_b = parts[4 * i: 4 * i + 4]
                s, f, a, b = service_use(plan)
                served += s > 0
                fallbacks += f
                aggs += a > 0
                bitmaps += b
                for ok, ref, other, what in ((got == seq_g, "seqscan of t_g", got, "the gpubtree plan (%s)" % (
                        "service" if s else ("aggregate by the service" if a else "nbtree"))),
                                             (seq_g == seq_b, "seqscan of t_g", seq_b, "seqscan of t_b (twins differ)")):
                    if not ok:
                        d = difflib.unified_diff(seq_g.splitlines(), other.splitlines(), ref, what, lineterm="", n=1)
                        failures.append("check %d, %s: %s;\n    %s" % (
                            nchecks + i + 1, what, q.replace("{t}", "t_g"), "\n    ".join(list(d)[:12])))
            nchecks += len(qs)
            if time.time() - last_verify > args.verify_every:
                c, problems = verify_mirrors()
                verifies += 1
                mirrors_verified += c
                failures += ["gpubtree_verify during the writes: %s" % p for p in problems[:5]]
                last_verify = time.time()
            if any(w.died for w in writers):
                break
    finally:
        for w in writers:
            w.stop.set()
        for w in writers:
            w.join(60)
    elapsed = time.time() - t0

    errors = writer_errors(writers, errfiles, EXPECTED_ERRORS, failures)

    # Quiet again: the twins must be equal, every plan shape must agree, and
    # the mirrors and indexes must check out.
    if psql("SELECT * FROM t_g ORDER BY id") != psql("SELECT * FROM t_b ORDER BY id"):
        failures.append("after the writers: t_g and t_b differ")
    used = {s: 0 for s in SHAPES}
    used["service"] = used["aggregate"] = 0
    final_qs = [gen.query() for _ in range(args.queries)]
    compare_shapes(final_qs, common, "", "after the writers", failures, used)
    c, problems = verify_mirrors()
    mirrors_verified += c
    failures += ["gpubtree_verify after the writers: %s" % p for p in problems[:5]]
    psql("CREATE EXTENSION IF NOT EXISTS amcheck;" + "".join(
        "SELECT gpubtree_index_check('t_g_%s', true, true);" % name for name in INDEXES))
    if served == 0:
        failures.append("no check was answered by the GPU service")
    rebuilds = tree_rebuilds("t_g_")
    if os.environ.get("GBT_SMALL_LAYOUT") == "1" and rebuilds == 0:
        failures.append("GBT_SMALL_LAYOUT=1 but no mirror was rebuilt: is the installed build the small one?")

    kinds = {}
    for f in failures:
        m = re.match(r"check \d+, ([^:]+):", f) or re.match(r"(gpubtree_verify [^:]+: t_g_\w+\|[^|]+)", f)
        kind = m.group(1) if m else f.split(":")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    rows = psql("SELECT count(*) FROM t_g").strip()
    summary = ("concurrent, %d writers, %.0f s: %d checks under one snapshot, %d with a gpubtree bitmap scan, "
               "%d answered by the service (+%d aggregates), %d bitmap scans by nbtree instead; writers: %d "
               "transactions (%d rolled back on purpose, %d write conflicts, %d with bitmap scans forced), "
               "%d VACUUMs; gpubtree_verify: %d mirrors, %d times during the writes; %d tree rebuilds; then %d "
               "queries x %d plan shapes, %s rows") % (
        args.writers, elapsed, nchecks, bitmaps, served, aggs, fallbacks, sum(w.txns for w in writers),
        sum(w.rollbacks for w in writers), errors, sum(w.forced for w in writers), sum(w.vacuums for w in writers),
        mirrors_verified, verifies, rebuilds, len(final_qs), len(SHAPES), rows)
    if kinds:
        summary += "; differences by kind: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items()))
    return failures, summary


# ---- MVCC mode ---------------------------------------------------------------
# Update- and delete-heavy rounds on one table m, with the gpubtree indexes
# (k) INCLUDE (v, i) and UNIQUE (id), and a column w in no index (updates of
# only w are HOT: fillfactor 70).  Each check is one transaction at READ
# COMMITTED, REPEATABLE READ or SERIALIZABLE, maybe with its own uncommitted
# changes (in savepoints too): a range aggregate through the
# GpubtreeAggregate node (the other scans disabled, under EXPLAIN ANALYZE as
# CREATE TEMP TABLE AS: the answer compared is the one whose plan says what
# answered it), then the same query with gpubtree.device = off (the ordinary
# plan) and by a sequential scan; all three must be equal.  Under READ
# COMMITTED each statement takes a new snapshot: the check holds an advisory
# lock in exclusive mode, and every writer takes it in shared mode just
# before COMMIT, so that no writer commits between the three queries while
# writers may still be under way (uncommitted) during them.  A REPEATABLE
# READ snapshot held by its own session is checked at the start, again and
# again while writers commit, and at the end: its answers must not change.

MVCC_GATE = 4242
MVCC_COLUMNS = "id int8, k int8, v int8, i int4, w int4"
MVCC_INDEXES = ["CREATE UNIQUE INDEX m_id ON m USING gpubtree (id);",
                "CREATE INDEX m_k ON m USING gpubtree (k) INCLUDE (v, i);"]
NODE_LOCAL = LOCAL_OFF  # only the node's plan: the scans below it disabled
ORDINARY_LOCAL = ("SET LOCAL enable_seqscan=on; SET LOCAL enable_indexscan=on; SET LOCAL enable_indexonlyscan=on; "
                  "SET LOCAL enable_bitmapscan=on; SET LOCAL gpubtree.device=off;")
SEQ_LOCAL = LOCAL_OFF + ("SET LOCAL enable_seqscan=on; SET LOCAL gpubtree.enable_aggregate=off; "
                         "SET LOCAL gpubtree.enable_lookup=off;")
ISOLATION = ["READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"]
ISO_SHORT = {"READ COMMITTED": "RC", "REPEATABLE READ": "RR", "SERIALIZABLE": "SER"}
MVCC_ERRORS = re.compile(r"could not serialize access|deadlock detected|current transaction is aborted")


class MvccGen:
    """Random SQL on m: updates of the INCLUDE columns, of the key, HOT
    updates, deletes, inserts, DELETE + INSERT of the same keys, ON CONFLICT
    upserts and MERGE.  New rows take ids from the sequence m_ids, so that
    only ON CONFLICT inserts a chosen id (the speculative insertion makes
    that safe between sessions)."""

    def __init__(self, rng, nrows):
        self.r = rng
        self.nrows = nrows
        # GROUP BY bucket queries: a generator of their own, seeded from rng's
        # state without drawing from it (the other sequences stay as they were)
        self.group_rng = random.Random(repr(rng.getstate()[1][:8]))

    def chance(self, p):
        return self.r.random() < p

    def span(self, width):
        lo = self.r.randint(-20, 1000)
        return lo, lo + self.r.randint(0, width)

    def v(self):
        return "NULL" if self.chance(0.05) else str(self.r.randint(-500, 500))

    def rows(self, n, ids=None):
        return ", ".join("(%s, %d, %s, %d, 0)" % (
            "nextval('m_ids')" if ids is None else ids[j], self.r.randint(0, 999), self.v(), self.r.randint(0, 96))
            for j in range(n))

    def dml(self):
        c = self.r.random()
        if c < 0.16:  # INCLUDE columns
            return "UPDATE m SET v = v + %d, i = i + 1 WHERE k BETWEEN %d AND %d;" % ((self.r.randint(-9, 9),) + self.span(40))
        if c < 0.22:
            m = self.r.randint(7, 50)
            return "UPDATE m SET v = %s WHERE id %% %d = %d;" % (self.v(), m, self.r.randrange(m))
        if c < 0.34:  # the key
            return "UPDATE m SET k = k + %d WHERE k BETWEEN %d AND %d;" % ((self.r.choice([-7, -1, 1, 3, 50, 400]),) + self.span(30))
        if c < 0.38:
            m = self.r.randint(20, 80)
            return self.r.choice(["UPDATE m SET k = NULL WHERE id %% %d = %d;" % (m, self.r.randrange(m)),
                                  "UPDATE m SET k = id %% 1000 WHERE k IS NULL AND id %% 3 = %d;" % self.r.randrange(3)])
        if c < 0.48:  # HOT: w is in no index
            return "UPDATE m SET w = w + 1 WHERE k BETWEEN %d AND %d;" % self.span(60)
        if c < 0.60:
            return self.r.choice(["DELETE FROM m WHERE k BETWEEN %d AND %d;" % self.span(12),
                                  "DELETE FROM m WHERE id %% %d = %d;" % (lambda m: (m, self.r.randrange(m)))(self.r.randint(15, 80))])
        if c < 0.72:
            if self.chance(0.5):
                return "INSERT INTO m VALUES %s;" % self.rows(self.r.randint(1, 30))
            return ("INSERT INTO m SELECT nextval('m_ids'), (g * %d + %d) %% 1000, CASE WHEN g %% 17 = 0 THEN NULL "
                    "ELSE g %% 1000 - 500 END, g %% 97, 0 FROM generate_series(1, %d) g;") % (
                self.r.choice([7, 13, 31]), self.r.randint(0, 999), self.r.randint(20, 300))
        if c < 0.80:  # DELETE + INSERT of the same keys (and values), new ids
            lo, hi = self.span(10)
            return ("WITH d AS (DELETE FROM m WHERE k BETWEEN %d AND %d RETURNING k, v, i, w) "
                    "INSERT INTO m SELECT nextval('m_ids'), k, v %s, i, w FROM d;") % (lo, hi, self.r.choice(["", "+ 1"]))
        if c < 0.90:
            ids = [str(self.r.randint(1, self.nrows)) for _ in range(self.r.randint(1, 15))]
            ids = sorted(set(ids), key=int)
            return ("INSERT INTO m VALUES %s ON CONFLICT (id) DO UPDATE SET %s;" % (
                self.rows(len(ids), ids), self.r.choice(["v = m.v + 1", "k = EXCLUDED.k, v = m.v - 1", "i = EXCLUDED.i"])))
        src = ", ".join("(%d, %d, %d)" % (self.r.randint(1, self.nrows), self.r.randint(0, 999), self.r.randint(-50, 50))
                        for _ in range(self.r.randint(1, 12)))
        return ("MERGE INTO m USING (SELECT DISTINCT ON (id) * FROM (VALUES %s) s0(id, k, v)) s ON m.id = s.id "
                "WHEN MATCHED AND s.v %% 4 = 0 THEN DELETE "
                "WHEN MATCHED AND s.v %% 4 = 1 THEN UPDATE SET k = s.k "
                "WHEN MATCHED THEN UPDATE SET v = m.v + s.v "
                "WHEN NOT MATCHED THEN INSERT VALUES (nextval('m_ids'), s.k, s.v, 0, 0);") % src

    def transaction(self):
        """(statements without BEGIN/COMMIT, how it ends: 'commit' or 'rollback', savepoints rolled back)"""
        body = [self.dml() for _ in range(self.r.randint(1, 4))]
        c = self.r.random()
        if c < 0.55:
            return body, "commit", 0
        if c < 0.7:
            return body, "rollback", 0
        undone = [self.dml() for _ in range(self.r.randint(1, 3))]
        if c < 0.85:
            return [body[0], "SAVEPOINT a;"] + undone + ["ROLLBACK TO SAVEPOINT a;"] + body[1:], "commit", 1
        # nested: b rolled back inside a, a released
        return ([body[0], "SAVEPOINT a;", undone[0], "SAVEPOINT b;"] + undone[1:] + body[1:] +
                ["ROLLBACK TO SAVEPOINT b;", "RELEASE SAVEPOINT a;"], "commit", 1)

    def own_changes(self, anywhere):
        """The checking transaction's own changes, never committed.  anywhere:
        any rows (no concurrent writers); otherwise only rows with id < 0,
        which the check inserts itself, so that it never waits for a writer."""
        if anywhere:
            stmts = [self.dml() for _ in range(self.r.randint(1, 3))]
        else:
            n = self.r.randint(1, 200)
            stmts = ["INSERT INTO m SELECT -g, (g * %d + %d) %% 1000, g %% 1000 - 500, g %% 97, 0 FROM generate_series(1, %d) g;" % (
                self.r.choice([7, 13, 31]), self.r.randint(0, 999), n),
                     "UPDATE m SET v = v + 1, k = k + %d WHERE id < 0 AND id %% 3 = 0;" % self.r.randint(-5, 5),
                     "DELETE FROM m WHERE id < 0 AND id % 5 = 0;",
                     "UPDATE m SET w = w + 1 WHERE id < 0 AND id % 7 = 0;"][:self.r.randint(1, 4)]
        c = self.r.random()
        if c < 0.5:
            return " ".join(stmts)
        if c < 0.7:  # rolled back: the check must not see these
            return "SAVEPOINT own; %s ROLLBACK TO SAVEPOINT own;" % " ".join(stmts)
        if c < 0.85:
            return "SAVEPOINT own; %s RELEASE SAVEPOINT own;" % " ".join(stmts)
        if len(stmts) == 1:
            return "SAVEPOINT own; %s ROLLBACK TO SAVEPOINT own; %s" % (stmts[0], stmts[0])
        return "%s SAVEPOINT own; %s ROLLBACK TO SAVEPOINT own;" % (stmts[0], " ".join(stmts[1:]))

    def query(self):
        if self.group_rng.random() < 0.25:  # GROUP BY a bucket of k (m_k includes v and i)
            return group_query(self.group_rng, ["k"]).replace("{t}", "m")
        lo, hi = self.span(self.r.choice([20, 150, 500]))
        a = self.r.randint(1, self.nrows)
        keys = ",".join(str(self.r.randint(-5, 1005)) for _ in range(self.r.randint(3, 60)))
        return mvcc_aliased(self.r.choice([
            "SELECT count(*), count(v), sum(v), avg(v), min(v), max(v) FROM m WHERE k BETWEEN %d AND %d" % (lo, hi),
            "SELECT count(*), sum(i), avg(i), min(i), max(i), sum(k), min(k), max(k) FROM m WHERE k >= %d" % lo,
            "SELECT count(*), count(v), sum(v), min(v), max(v) FROM m WHERE k < %d" % hi,
            "SELECT count(*), sum(v), max(i) FROM m WHERE k > %d AND k <= %d" % (lo, hi),
            "SELECT count(*), count(k), count(v), sum(v), avg(v), min(v), max(v), sum(i) FROM m",
            "SELECT count(*), min(id), max(id), sum(id) FROM m WHERE id BETWEEN %d AND %d" % (a, a + self.r.randint(0, 3000)),
            "SELECT count(*), count(v), sum(v), min(v), max(v) FROM m WHERE k = ANY ('{%s}'::int8[])" % keys,
            # The GpubtreeLookup node: rows of many keys, a join on the key.
            "SELECT k, v, i FROM m WHERE k = ANY (ARRAY(SELECT generate_series(%d, %d))) ORDER BY k, v, i" % (lo, hi),
            # ... and rows of a key range.
            "SELECT k, v, i FROM m WHERE k BETWEEN %d AND %d ORDER BY k, v, i" % (lo, hi),
            "SELECT count(*), sum(t.v), min(t.i), max(p.x) FROM generate_series(%d, %d) p(x) JOIN m t ON t.k = p.x" % (lo, hi),
        ]))


def mvcc_aliased(q):
    """Names for the output columns (CREATE TABLE AS needs them distinct)."""
    head, rest = q[len("SELECT "):].split(" FROM ", 1)
    return "SELECT %s FROM %s" % (", ".join("%s AS c%d" % (e, n) for n, e in enumerate(head.split(", "))), rest)


def mvcc_check_sql(q, begin, own, end):
    """One check: the node's answer and plan, the ordinary plan's, a seqscan's.
    begin/end: BEGIN ... / ROLLBACK, or SAVEPOINT / ROLLBACK TO in a held
    transaction (SET LOCAL and the temporary table end with either)."""
    return "\n".join([begin, own, NODE_LOCAL, "\\echo @@",
                      "EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) "
                      "CREATE TEMP TABLE gbt_check ON COMMIT DROP AS %s;" % q,
                      "\\echo @@", "TABLE gbt_check;",
                      ORDINARY_LOCAL, "\\echo @@", q + ";",
                      SEQ_LOCAL, "\\echo @@", q + ";", end])


def mvcc_begin(iso):
    s = "BEGIN ISOLATION LEVEL %s;" % iso
    if iso == "READ COMMITTED":  # no writer commits until this check ends
        s += " DO $$BEGIN PERFORM pg_advisory_xact_lock(%d); END$$;" % MVCC_GATE
    return s


def agg_plan_info(explain_json):
    """(answered by the service?, entries checked in heap) of the GpubtreeAggregate, -Lookup or -Join node."""
    answered, checked = False, 0
    stack = list(json.loads(explain_json))
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x.get("Custom Plan Provider") in ("GpubtreeAggregate", "GpubtreeLookup", "GpubtreeJoin") and \
                    x.get("Answered by") == "GPU service":
                answered = True
                checked += x.get("Entries Checked in Heap", 0)
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return answered, checked


class MvccStats:
    def __init__(self):
        self.checks = self.served = self.heap = self.own = self.own_served = self.own_heap = self.discarded = 0
        self.grouped = self.grouped_served = 0
        self.by_iso = {v: 0 for v in ISO_SHORT.values()}

    def add(self, parts, qs, label, failures):
        """parts: 4 per check.  Returns the node's answers."""
        answers = []
        for n, (q, iso, own) in enumerate(qs):
            plan, got, ordinary, seq = parts[4 * n: 4 * n + 4]
            served, heap = agg_plan_info(plan)
            self.checks += 1
            self.by_iso[iso] += 1
            if " GROUP BY " in q:
                self.grouped += 1
                self.grouped_served += served
            self.served += served
            self.heap += heap > 0
            if heap and os.environ.get("MVCC_DEBUG"):
                sys.stderr.write("heap %d: %s %s own=[%s] %s\n" % (heap, label, iso, own, q))
            if own:
                self.own += 1
                self.own_served += served
                self.own_heap += heap > 0
            for other, what in ((ordinary, "gpubtree.device = off"), (seq, "a seqscan")):
                if got != other:
                    d = difflib.unified_diff(other.splitlines(), got.splitlines(), what, "the node (%s)" % (
                        "answered by the service" if served else "not answered by the service"), lineterm="", n=1)
                    failures.append("%s, %s%s: %s;\n    %s" % (label, iso, " with own changes [%s]" % own if own else "",
                                                             q, "\n    ".join(list(d)[:12])))
            answers.append(got)
        return answers


def psql_try(sql):
    r = subprocess.run(PSQL, input=sql, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def mvcc_checks(gen, common, n, stats, label, failures, own_anywhere, own_p=0.25):
    qs = []
    for _ in range(n):
        iso = gen.r.choice(ISOLATION)
        qs.append((gen.query(), ISO_SHORT[iso], gen.own_changes(own_anywhere) if gen.chance(own_p) else "", iso))
    sql = common + "\n" + "\n".join(mvcc_check_sql(q, mvcc_begin(iso), own, "ROLLBACK;") for q, _, own, iso in qs)
    rc, out, err = psql_try(sql)
    if rc != 0:
        if not own_anywhere and MVCC_ERRORS.search(err):
            stats.discarded += n  # a serialization failure or deadlock: the batch is discarded
            return
        raise RuntimeError("%s: psql failed: %s" % (label, err.strip()[-1500:]))
    parts = out.split("@@\n")[1:]
    if len(parts) != 4 * n:
        raise RuntimeError("%s: unexpected output of %d checks: %d parts" % (label, n, len(parts)))
    stats.add(parts, [(q, iso, own) for q, iso, own, _ in qs], label, failures)


class HeldSnapshot:
    """A session that holds one REPEATABLE READ snapshot and checks a fixed
    set of queries in it (each check in a savepoint rolled back to)."""

    def __init__(self, common, qs):
        self.qs = qs
        self.first = None
        self.rounds = 0
        self.p = subprocess.Popen(PSQL, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.p.stdin.write(common + "\nBEGIN ISOLATION LEVEL REPEATABLE READ;\n")

    def check(self, stats, label, failures):
        sql = "\n".join(mvcc_check_sql(q, "SAVEPOINT held;", "", "ROLLBACK TO SAVEPOINT held;") for q in self.qs)
        self.p.stdin.write(sql + "\n\\echo @@@end\n")
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if line == "":
                raise RuntimeError("%s: the held snapshot's session ended: %s" % (label, self.p.stderr.read()[-1500:]))
            if line == "@@@end\n":
                break
            lines.append(line)
        parts = "".join(lines).split("@@\n")[1:]
        if len(parts) != 4 * len(self.qs):
            raise RuntimeError("%s: unexpected output of the held snapshot's checks" % label)
        answers = stats.add(parts, [(q, "RR", "") for q in self.qs], label, failures)
        if self.first is None:
            self.first = answers
        else:
            for q, a, b in zip(self.qs, self.first, answers):
                if a != b:
                    failures.append("%s: the held snapshot's answer changed: %s: %r, then %r" % (label, q, a, b))
        self.rounds += 1

    def close(self):
        self.p.stdin.write("COMMIT;\n")
        self.p.stdin.close()
        self.p.wait()


class MvccWriter(PsqlWriter):
    """One writer session: random transactions on m at random isolation
    levels (committed through the gate, rolled back, savepoints rolled back
    to), now and then VACUUM, until told to stop."""

    def __init__(self, n, seed, nrows, common, errfile):
        PsqlWriter.__init__(self, n, common, errfile)
        self.gen = MvccGen(random.Random(seed * 7907 + n + 1), nrows)
        self.vacuums = self.rollbacks = self.savepoints = 0

    def next_sql(self):
        if self.gen.chance(0.02):
            self.vacuums += 1
            return "VACUUM m;"
        body, end, sp = self.gen.transaction()
        self.rollbacks += end == "rollback"
        self.savepoints += sp
        return "\n".join(["BEGIN ISOLATION LEVEL %s;" % self.gen.r.choice(ISOLATION)] + body + [
            "ROLLBACK;" if end == "rollback" else
            "DO $$BEGIN PERFORM pg_advisory_xact_lock_shared(%d); END$$;\nCOMMIT;" % MVCC_GATE])


def mvcc(args, common):
    """Update- and delete-heavy rounds: serial, then with concurrent writers."""
    rng = random.Random(args.seed)
    nrows = args.mvcc_rows
    gen = MvccGen(rng, nrows)
    failures = []
    psql("DROP TABLE IF EXISTS m; DROP SEQUENCE IF EXISTS m_ids; CREATE SEQUENCE m_ids;"
         "CREATE TABLE m (%s) WITH (autovacuum_enabled = off, fillfactor = 70);%s"
         "INSERT INTO m SELECT nextval('m_ids'), CASE WHEN g %% 41 = 0 THEN NULL ELSE (g * 7919) %% 1000 END, "
         "CASE WHEN g %% 23 = 0 THEN NULL ELSE g %% 1000 - 500 END, g %% 97, 0 FROM generate_series(1, %d) g;"
         "VACUUM ANALYZE m;" % (MVCC_COLUMNS, "".join(MVCC_INDEXES), nrows))
    # Both mirrors built now, from all-visible pages, before the first changes.
    psql(common + "BEGIN;" + NODE_LOCAL + "SELECT count(*) FROM m WHERE k >= 0; SELECT count(*) FROM m WHERE id > 0; COMMIT;")
    stats = MvccStats()
    held_stats = MvccStats()
    held = HeldSnapshot(common, [gen.query() for _ in range(6)])
    held.check(held_stats, "held snapshot, at the start", failures)

    # Serial rounds: a few committed, rolled-back and savepoint transactions
    # of other sessions, then checks (own changes may touch any row).
    txns = rollbacks = savepoints = serial_verified = 0
    t0 = time.time()
    for rnd in range(args.mvcc_rounds):
        sql = []
        for _ in range(gen.r.randint(1, 3)):
            body, end, sp = gen.transaction()
            txns += 1
            rollbacks += end == "rollback"
            savepoints += sp
            sql.append("\n".join(["BEGIN ISOLATION LEVEL %s;" % gen.r.choice(ISOLATION)] + body +
                                 ["ROLLBACK;" if end == "rollback" else "COMMIT;"]))
        psql("\n".join(sql))
        mvcc_checks(gen, common, 4, stats, "serial round %d" % (rnd + 1), failures, own_anywhere=True)
        if rnd % 10 == 9:
            held.check(held_stats, "held snapshot, serial round %d" % (rnd + 1), failures)
            c, problems = verify_mirrors("m_")
            serial_verified += c
            failures += ["gpubtree_verify, serial round %d: %s" % (rnd + 1, p) for p in problems[:5]]
    serial_s = time.time() - t0

    # Concurrent writers; the held snapshot stays the same.
    errfiles = [tempfile.TemporaryFile("w+") for _ in range(args.writers)]
    writers = [MvccWriter(n, args.seed, nrows, common, errfiles[n]) for n in range(args.writers)]
    for w in writers:
        w.start()
    t0 = time.time()
    last_held = last_verify = t0
    verifies = 0
    mirrors_verified = serial_verified
    try:
        while time.time() - t0 < args.seconds:
            mvcc_checks(gen, common, 4, stats, "concurrent", failures, own_anywhere=False)
            if time.time() - last_held > args.seconds / 4:
                held.check(held_stats, "held snapshot, during the writes", failures)
                last_held = time.time()
            if time.time() - last_verify > args.verify_every:
                c, problems = verify_mirrors("m_")
                verifies += 1
                mirrors_verified += c
                failures += ["gpubtree_verify during the writes: %s" % p for p in problems[:5]]
                last_verify = time.time()
            if any(w.died for w in writers):
                break
    finally:
        for w in writers:
            w.stop.set()
        for w in writers:
            w.join(60)
    conc_s = time.time() - t0
    held.check(held_stats, "held snapshot, after the writes", failures)
    held.close()

    errors = writer_errors(writers, errfiles, MVCC_ERRORS, failures)

    # Quiet again: checks at every level, the mirrors and the indexes.
    for n in range(3):
        mvcc_checks(gen, common, 6, stats, "after the writers", failures, own_anywhere=True)
    c, problems = verify_mirrors("m_")
    mirrors_verified += c
    failures += ["gpubtree_verify after the writers: %s" % p for p in problems[:5]]
    psql("CREATE EXTENSION IF NOT EXISTS amcheck; SELECT gpubtree_index_check('m_id', true, true);"
         "SELECT gpubtree_index_check('m_k', true, true);")
    total = stats.checks + held_stats.checks
    served = stats.served + held_stats.served
    device_off = os.environ.get("GPUBTREE_DEVICE") == "off"
    if served * 2 < total and not device_off:
        failures.append("only %d of %d checks were answered by the GPU service" % (served, total))
    if held_stats.served == 0 and not device_off:
        failures.append("no check of the held snapshot was answered by the GPU service")

    kinds = {}
    for f in failures:
        m = re.match(r"([^,:]+)", f)
        kinds[m.group(1)] = kinds.get(m.group(1), 0) + 1
    rows = psql("SELECT count(*) FROM m").strip()
    summary = ("mvcc: %d serial rounds (%d transactions, %d rolled back, %d with savepoints rolled back to; %.0f s), "
               "%d writers for %.0f s (%d transactions, %d rolled back, %d with savepoints rolled back to, "
               "%d write conflicts, %d VACUUMs); %d checks (%s; %d discarded after a serialization failure), "
               "%d answered by the service, %d with heap checks (%d without own changes); %d GROUP BY buckets, %d of them "
               "answered by the service; %d with own changes: "
               "%d answered by the service, %d with heap checks; held REPEATABLE READ snapshot: %d x %d checks, %d answered by the service, "
               "%d with heap checks; gpubtree_verify: %d mirrors, %d times during the writes; %d tree rebuilds; %s rows") % (
        args.mvcc_rounds, txns, rollbacks, savepoints, serial_s, args.writers, conc_s, sum(w.txns for w in writers),
        sum(w.rollbacks for w in writers), sum(w.savepoints for w in writers), errors, sum(w.vacuums for w in writers),
        stats.checks, ", ".join("%s %d" % kv for kv in stats.by_iso.items()), stats.discarded, stats.served, stats.heap,
        stats.heap - stats.own_heap, stats.grouped, stats.grouped_served, stats.own, stats.own_served, stats.own_heap, held.rounds, len(held.qs), held_stats.served, held_stats.heap,
        mirrors_verified, verifies, tree_rebuilds("m_"), rows)
    if kinds:
        summary += "; differences by kind: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items()))
    return failures, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seed", type=int)
    ap.add_argument("--rounds", type=int, default=40, help="DML transactions per phase")
    ap.add_argument("--queries", type=int, default=60, help="queries per phase")
    ap.add_argument("--concurrent", action="store_true", help="checks under one snapshot while writers run")
    ap.add_argument("--writers", type=int, default=None, help="concurrent mode: writer sessions (3; --mvcc: 2)")
    ap.add_argument("--checks", type=int, default=2000, help="concurrent mode: at most this many checks")
    ap.add_argument("--seconds", type=float, default=None, help="concurrent mode: at most this long (30; --mvcc: 20)")
    ap.add_argument("--verify-every", type=float, default=5, help="concurrent and mvcc modes: gpubtree_verify interval during the writes (s)")
    ap.add_argument("--mvcc", action="store_true",
                    help="update- and delete-heavy rounds, then concurrent writers (--writers, --seconds)")
    ap.add_argument("--mvcc-rounds", type=int, default=30, help="mvcc mode: serial rounds")
    ap.add_argument("--mvcc-rows", type=int, default=5000, help="mvcc mode: rows loaded")
    args = ap.parse_args()
    if args.writers is None:
        args.writers = 2 if args.mvcc else 3
    if args.seconds is None:
        args.seconds = 20 if args.mvcc else 30
    gen = Gen(random.Random(args.seed))
    # = ANY arrays go to the GPU service from this many elements on.
    common = "SET TimeZone = 'UTC'; SET gpubtree.min_gpu_batch = %d;" % gen.r.choice([1, 2, 5])
    if os.environ.get("GPUBTREE_DEVICE"):
        common += "SET gpubtree.device = %s;" % os.environ["GPUBTREE_DEVICE"]

    if args.mvcc:
        failures, summary = mvcc(args, common)
        return report(args.seed, failures, summary)

    ddl = ["DROP TABLE IF EXISTS t_g, t_b;"]
    for t, am in (("t_g", "gpubtree"), ("t_b", "btree")):
        ddl.append("CREATE TABLE %s (%s) WITH (autovacuum_enabled = off);" % (t, COLUMNS))
        for name, definition in INDEXES.items():
            ddl.append("CREATE %sINDEX %s_%s ON %s USING %s %s;" % (
                "UNIQUE " if name == "id" else "", t, name, t, am, definition))
    psql("\n".join(ddl))

    if args.concurrent:
        failures, summary = concurrent(args, gen, common)
        return report(args.seed, failures, summary)

    failures, nq = [], 0
    used = {s: 0 for s in SHAPES}
    used["service"] = used["aggregate"] = 0
    whole = dict(used)
    grouped = dict(used)
    # GROUP BY buckets: drawn from their own generator, so that the random
    # sequence of the other queries stays as it was; in a time zone with DST.
    group_rng = random.Random(args.seed * 104729 + 11)
    group_tz = group_rng.choice(["UTC", "America/New_York", "Australia/Lord_Howe"])
    ngroup = 0
    phases = ["", "vacuum", "parallel", "in-transaction"]
    for phase in phases:
        txns = [gen.transaction() for _ in range(args.rounds)]
        psql("\n".join(x.replace("{t}", t) for x in txns for t in ("t_g", "t_b")))
        psql("VACUUM ANALYZE t_g; VACUUM ANALYZE t_b;" if phase == "vacuum" else "ANALYZE t_g; ANALYZE t_b;")
        qs = [gen.query() for _ in range(args.queries)]
        settings = common + (PARALLEL if phase == "parallel" else "")
        # Uncommitted changes that the queries must see, rolled back at the end.
        prefix = "BEGIN; %s %s" % (gen.dml(), gen.dml()) if phase == "in-transaction" else ""
        nq += len(qs)
        compare_shapes(qs, settings, prefix, "phase %r" % (phase or "first"), failures, used)
        compare_shapes(WHOLE_TABLE_AGGS, settings, prefix, "phase %r, whole table" % (phase or "first"),
                       failures, whole)
        gqs = [group_query(group_rng) for _ in range(max(1, args.queries // 4))]
        ngroup += len(gqs)
        gsettings = settings + "SET TimeZone = '%s';" % group_tz
        glabel = "phase %r, GROUP BY buckets" % (phase or "first")
        compare_shapes(gqs, gsettings, prefix, glabel, failures, grouped)
        compare_node(gqs, gsettings, prefix, glabel, failures, grouped)
    psql("CREATE EXTENSION IF NOT EXISTS amcheck;" + "".join(
        "SELECT gpubtree_index_check('t_g_%s', true, true);" % name for name in INDEXES))

    if grouped.get("node", 0) * 3 < ngroup and os.environ.get("GPUBTREE_DEVICE") != "off":
        failures.append("only %d of %d GROUP BY bucket queries were answered by the service through the node" % (
            grouped.get("node", 0), ngroup))
    for shape in SHAPES:
        if used[shape] * 2 < nq:
            failures.append("only %d of %d queries used a %s scan on a gpubtree index" % (used[shape], nq, shape))
    rows = psql("SELECT count(*) FROM t_g").strip()
    summary = ("%d queries x %d plan shapes, %s rows; used on gpubtree: %s; bitmap scans answered by the service: %d; "
               "whole-table aggregates answered by the service: %d of %d; GROUP BY buckets (%s): %d queries x %d "
               "plan shapes and the node forced, %d answered by the service then") % (
        nq, len(SHAPES), rows, ", ".join("%s %d" % (s, used[s]) for s in SHAPES), used["service"],
        whole["aggregate"], len(WHOLE_TABLE_AGGS) * len(phases), group_tz, ngroup, len(SHAPES),
        grouped.get("node", 0))
    return report(args.seed, failures, summary)


def report(seed, failures, summary):
    if failures:
        print("seed %d: FAILED (%d differences; %s)" % (seed, len(failures), summary))
        for f in failures[:6]:
            print("  " + f)
        return 1
    print("seed %d: ok (%s)" % (seed, summary))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print("seed %s: FAILED (%s)" % (sys.argv[1] if len(sys.argv) > 1 else "?", e))
        sys.exit(1)
