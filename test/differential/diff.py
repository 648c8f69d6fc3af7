#!/usr/bin/env python3
"""Randomized differential test: gpubtree against btree.

For one seed: twin tables t_g (gpubtree indexes) and t_b (the same indexes
USING btree) get the same random DML (inserts with duplicates and NULLs,
updates of keys and INCLUDE columns, ON CONFLICT upserts, deletes, VACUUM,
committed and rolled-back transactions, savepoints rolled back to), then the
same random queries run on both under each plan shape (index scan,
index-only scan, bitmap scan), and whole-table aggregates (the rows with
NULL keys from an index scan), and every output must equal that of a
sequential scan of t_b.  EXPLAIN checks that most queries really used the
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

usage: diff.py SEED [--rounds N] [--queries N]
       diff.py SEED --concurrent [--writers 3] [--seconds 30] [--checks N] [--verify-every 5]
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
    "index": (OFF + "SET enable_indexscan=on;", r"Index Scan (Backward )?using t_g_"),
    "index-only": (OFF + "SET enable_indexscan=on; SET enable_indexonlyscan=on;", r"Index Only Scan (Backward )?using t_g_"),
    "bitmap": (OFF + "SET enable_bitmapscan=on;", r"Bitmap Index Scan on t_g_"),
}
SEQSCAN = OFF + "SET enable_seqscan=on;"
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


def agg_query(gen):
    """Concurrent mode only (the serial mode's random sequence stays as it
    was): range aggregates on the leading column of each index, the
    multi-column ones included, which the GpubtreeAggregate node may answer
    from the mirror, = ANY of InitPlan arrays, and whole-table ones."""
    lo, hi = gen.span(60)
    if gen.chance(0.2):
        return gen.r.choice(WHOLE_TABLE_AGGS)
    return gen.r.choice([
        "SELECT count(*), sum(v), min(k), max(k) FROM {t} WHERE k BETWEEN %d AND %d" % (lo, hi),
        "SELECT count(*), min(k2), max(k2) FROM {t} WHERE d BETWEEN '2026-01-01'::date + %d AND '2026-01-01'::date + %d" % (
            lo // 5 - 10, hi // 5 - 10),
        "SELECT count(*), sum(k), min(k), max(k) FROM {t} WHERE k2 BETWEEN %d AND %d" % (lo % 10, lo % 10 + gen.r.randint(0, 4)),
        "SELECT count(*), min(f), max(f) FROM {t} WHERE f BETWEEN %d AND %d" % (lo - 100, hi - 100),
        "SELECT count(*), min(ts), max(ts) FROM {t} WHERE ts BETWEEN %s + interval '%d hours' AND %s + interval '%d hours'" % (
            T0, lo * 10, T0, hi * 10),
        "SELECT count(*), min(id), max(id) FROM {t} WHERE id BETWEEN %d AND %d" % (lo * 20, hi * 40),
        # Arrays known only when the plan runs (InitPlans): the node decides then.
        "SELECT count(*), sum(v), min(k), max(k) FROM {t} WHERE k = ANY ((SELECT array_agg(x) FROM generate_series(%d, %d, %d) x)::int8[])" % (
            lo, hi, gen.r.randint(1, 3)),
        "SELECT count(*), sum(k) FROM {t} WHERE k2 = ANY (ARRAY(SELECT generate_series(%d, %d)))" % (lo % 10, lo % 10 + gen.r.randint(0, 4)),
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
LOCAL_SEQSCAN = LOCAL_OFF + "SET LOCAL enable_seqscan=on; SET LOCAL gpubtree.enable_aggregate=off;"
EXPECTED_ERRORS = re.compile(r"could not serialize access|deadlock detected|current transaction is aborted")
PSQL_WRITER = [x for x in PSQL if x not in ("-v", "ON_ERROR_STOP=1")]


class Writer(threading.Thread):
    """One session: random twin transactions (committed, rolled back, with
    savepoints rolled back to), some with bitmap scans forced (so that
    UPDATE and DELETE find their rows through the GPU service), and now and
    then VACUUM, until told to stop."""

    def __init__(self, n, seed, base_id, settings, errfile):
        threading.Thread.__init__(self, daemon=True)
        self.n = n
        self.gen = Gen(random.Random(seed * 7919 + n + 1), base_id)
        self.settings = settings
        self.errfile = errfile
        self.stop = threading.Event()
        self.txns = self.vacuums = self.forced = self.rollbacks = 0
        self.died = None

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

    def run(self):
        p = subprocess.Popen(PSQL_WRITER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=self.errfile, text=True, bufsize=1)
        p.stdin.write("\\set SHOW_CONTEXT never\n%s\n" % self.settings)
        try:
            while not self.stop.is_set():
                if self.gen.chance(0.04):
                    sql = self.gen.r.choice(["VACUUM t_g; VACUUM t_b;", "VACUUM ANALYZE t_g; VACUUM ANALYZE t_b;"])
                    self.vacuums += 1
                else:
                    sql = self.twin(self.gen.transaction())
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


def verify_mirrors():
    """gpubtree_verify() of every t_g index with a current mirror: (mirrors checked, problems)."""
    out = psql("SELECT i.relname || '|' || coalesce(v.problem, '') || '|' || coalesce(v.tid::text, '') "
               "FROM pg_class i CROSS JOIN LATERAL gpubtree_verify(i.oid) v "
               "WHERE i.oid IN (SELECT index FROM gpubtree_mirrors() WHERE current) AND i.relname LIKE 't_g_%';"
               "SELECT '#' || count(*) FROM gpubtree_mirrors() m JOIN pg_class i ON i.oid = m.index "
               "WHERE m.current AND i.relname LIKE 't_g_%';")
    checked, problems = 0, []
    for line in out.splitlines():
        if line.startswith("#"):
            checked = int(line[1:])
        elif line and line.split("|")[1] not in ("no current mirror", "no GPU service answered"):
            problems.append(line)
    return checked, problems


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
                # The first error of a transaction must be a write conflict;
                # what follows it in the same transaction is its consequence.
                failed = True
                if EXPECTED_ERRORS.search(line):
                    errors += 1
                else:
                    unexpected.append("writer transaction %s: %s" % (txn, line.strip()))
        f.close()
    failures += unexpected[:5]

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

    kinds = {}
    for f in failures:
        m = re.match(r"check \d+, ([^:]+):", f) or re.match(r"(gpubtree_verify [^:]+: t_g_\w+\|[^|]+)", f)
        kind = m.group(1) if m else f.split(":")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    rows = psql("SELECT count(*) FROM t_g").strip()
    summary = ("concurrent, %d writers, %.0f s: %d checks under one snapshot, %d with a gpubtree bitmap scan, "
               "%d answered by the service (+%d aggregates), %d bitmap scans by nbtree instead; writers: %d "
               "transactions (%d rolled back on purpose, %d write conflicts, %d with bitmap scans forced), "
               "%d VACUUMs; gpubtree_verify: %d mirrors, %d times during the writes; then %d queries x %d plan "
               "shapes, %s rows") % (
        args.writers, elapsed, nchecks, bitmaps, served, aggs, fallbacks, sum(w.txns for w in writers),
        sum(w.rollbacks for w in writers), errors, sum(w.forced for w in writers), sum(w.vacuums for w in writers),
        mirrors_verified, verifies, len(final_qs), len(SHAPES), rows)
    if kinds:
        summary += "; differences by kind: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items()))
    return failures, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seed", type=int)
    ap.add_argument("--rounds", type=int, default=40, help="DML transactions per phase")
    ap.add_argument("--queries", type=int, default=60, help="queries per phase")
    ap.add_argument("--concurrent", action="store_true", help="checks under one snapshot while writers run")
    ap.add_argument("--writers", type=int, default=3, help="concurrent mode: writer sessions")
    ap.add_argument("--checks", type=int, default=2000, help="concurrent mode: at most this many checks")
    ap.add_argument("--seconds", type=float, default=30, help="concurrent mode: at most this long")
    ap.add_argument("--verify-every", type=float, default=5, help="concurrent mode: gpubtree_verify interval (s)")
    args = ap.parse_args()
    gen = Gen(random.Random(args.seed))
    # = ANY arrays go to the GPU service from this many elements on.
    common = "SET TimeZone = 'UTC'; SET gpubtree.min_gpu_batch = %d;" % gen.r.choice([1, 2, 5])
    if os.environ.get("GPUBTREE_DEVICE"):
        common += "SET gpubtree.device = %s;" % os.environ["GPUBTREE_DEVICE"]

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
    psql("CREATE EXTENSION IF NOT EXISTS amcheck;" + "".join(
        "SELECT gpubtree_index_check('t_g_%s', true, true);" % name for name in INDEXES))

    for shape in SHAPES:
        if used[shape] * 2 < nq:
            failures.append("only %d of %d queries used a %s scan on a gpubtree index" % (used[shape], nq, shape))
    rows = psql("SELECT count(*) FROM t_g").strip()
    summary = ("%d queries x %d plan shapes, %s rows; used on gpubtree: %s; bitmap scans answered by the service: %d; "
               "whole-table aggregates answered by the service: %d of %d") % (
        nq, len(SHAPES), rows, ", ".join("%s %d" % (s, used[s]) for s in SHAPES), used["service"],
        whole["aggregate"], len(WHOLE_TABLE_AGGS) * len(phases))
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
