#!/usr/bin/env python3
"""Randomized differential test: gpubtree against btree.

For one seed: create twin tables t_g (gpubtree indexes) and t_b (the same
indexes USING btree), apply the same random DML to both (inserts with
duplicates and NULLs, key and INCLUDE-column updates, deletes, VACUUM,
rolled-back transactions, savepoints), then run the same random queries on
both under each plan shape (index scan, index-only scan, bitmap scan) and
compare the outputs exactly.  Drives psql only (no driver needed).

usage: diff.py SEED [--rounds N] [--queries N]
"""
import argparse
import os
import random
import subprocess
import sys

PSQL = [os.path.join(os.environ.get("PGBIN", ""), "psql"), "-X", "-q", "-A", "-t",
        "-v", "ON_ERROR_STOP=1", "-d", os.environ.get("PGDATABASE", "postgres")]

INDEXES = [
    # (name, definition after ON <table> USING <am>)
    ("k", "(k) INCLUDE (v)"),
    ("k2k", "(k2 DESC NULLS FIRST, k)"),
    ("f", "(f)"),
    ("ts", "(ts)"),
    ("uid", "(id)"),  # UNIQUE
]

SHAPES = {
    "index": "SET enable_seqscan=off; SET enable_bitmapscan=off; SET enable_indexonlyscan=off;",
    "indexonly": "SET enable_seqscan=off; SET enable_bitmapscan=off; SET enable_indexscan=on;",
    "bitmap": "SET enable_seqscan=off; SET enable_indexscan=off; SET enable_indexonlyscan=off;",
}


def psql(sql, check=True):
    r = subprocess.run(PSQL, input=sql, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("psql failed: %s\n--- sql ---\n%s" % (r.stderr.strip(), sql[:2000]))
    return r.stdout


def setup(rng):
    stmts = ["DROP TABLE IF EXISTS t_g, t_b;"]
    for t, am in (("t_g", "gpubtree"), ("t_b", "btree")):
        stmts.append("CREATE TABLE %s (id int4, k int8, k2 int4, f float8, ts timestamptz, v int8);" % t)
        for name, definition in INDEXES:
            unique = "UNIQUE " if name == "uid" else ""
            stmts.append("CREATE %sINDEX %s_%s ON %s USING %s %s;" % (unique, t, name, t, am, definition))
    return "\n".join(stmts)


class Model:
    """Random DML: the same statement text is applied to both tables."""

    def __init__(self, rng):
        self.rng = rng
        self.next_id = 1

    def key(self):
        r = self.rng.random()
        if r < 0.05:
            return "NULL"
        if r < 0.08:
            return self.rng.choice(["9223372036854775807", "-9223372036854775808"])
        return str(self.rng.randint(-50, 250))  # many duplicates

    def float(self):
        r = self.rng.random()
        if r < 0.05:
            return "NULL"
        if r < 0.12:
            return "'%s'" % self.rng.choice(["NaN", "Infinity", "-Infinity", "-0", "0"])
        return repr(round(self.rng.uniform(-100, 100), 3))

    def ts(self):
        if self.rng.random() < 0.05:
            return "NULL"
        return "'2026-01-01 00:00+00'::timestamptz + %d * interval '1 hour'" % self.rng.randint(-500, 500)

    def row(self):
        i = self.next_id
        self.next_id += 1
        k2 = "NULL" if self.rng.random() < 0.05 else str(self.rng.randint(0, 9))
        return "(%d, %s, %s, %s, %s, %d)" % (i, self.key(), k2, self.float(), self.ts(), self.rng.randint(-1000, 1000))

    def dml(self):
        """One statement with {t} for the table name."""
        r = self.rng.random()
        if r < 0.45:
            rows = ", ".join(self.row() for _ in range(self.rng.randint(1, 60)))
            return "INSERT INTO {t} VALUES %s;" % rows
        if r < 0.6:
            lo = self.rng.randint(-60, 250)
            return "UPDATE {t} SET k = k + %d WHERE k BETWEEN %d AND %d;" % (
                self.rng.randint(-5, 5), lo, lo + self.rng.randint(0, 20))
        if r < 0.7:
            lo = self.rng.randint(-60, 250)
            return "UPDATE {t} SET v = v + 1, f = %s WHERE k BETWEEN %d AND %d;" % (
                self.float(), lo, lo + self.rng.randint(0, 30))
        if r < 0.85:
            lo = self.rng.randint(-60, 250)
            return "DELETE FROM {t} WHERE k BETWEEN %d AND %d;" % (lo, lo + self.rng.randint(0, 15))
        if r < 0.9:
            return "DELETE FROM {t} WHERE id %% %d = 0;" % self.rng.randint(7, 40)
        return "UPDATE {t} SET k = NULL WHERE id %% %d = 1;" % self.rng.randint(20, 60)


def dml_round(model, rng):
    """A transaction shape around a few statements, for both tables."""
    stmts = [model.dml() for _ in range(rng.randint(1, 4))]
    undone = model.dml()
    shape = rng.random()
    out = []
    for t in ("t_g", "t_b"):
        body = [s.replace("{t}", t) for s in stmts]
        if shape < 0.6:
            out.append("BEGIN;\n%s\nCOMMIT;" % "\n".join(body))
        elif shape < 0.75:
            out.append("BEGIN;\n%s\nROLLBACK;" % "\n".join(body))
        else:
            keep, undo = body[: len(body) // 2 + 1], body[len(body) // 2 + 1:]
            out.append("BEGIN;\n%s\nSAVEPOINT s;\n%s\n%s\nROLLBACK TO SAVEPOINT s;\nCOMMIT;" % (
                "\n".join(keep), "\n".join(undo), undone.replace("{t}", t)))
    return "\n".join(out)


def queries(rng, n):
    qs = []
    for _ in range(n):
        r = rng.random()
        lo = rng.randint(-70, 260)
        hi = lo + rng.randint(0, 60)
        if r < 0.2:
            op_lo, op_hi = rng.choice([">", ">="]), rng.choice(["<", "<="])
            qs.append("SELECT id, k, v FROM {t} WHERE k %s %d AND k %s %d ORDER BY id" % (op_lo, lo, op_hi, hi))
        elif r < 0.3:
            qs.append("SELECT id, k FROM {t} WHERE k = %d ORDER BY id" % lo)
        elif r < 0.4:
            arr = ",".join(str(rng.randint(-60, 260)) for _ in range(rng.randint(1, 30)))
            if rng.random() < 0.3:
                arr += ",NULL"
            qs.append("SELECT id, k FROM {t} WHERE k = ANY ('{%s}'::int8[]) ORDER BY id" % arr)
        elif r < 0.45:
            qs.append("SELECT count(*), sum(v), min(k), max(k) FROM {t} WHERE k < %d::int4 AND k > %d::int2" % (hi, lo))
        elif r < 0.5:
            qs.append("SELECT k, v FROM {t} WHERE k IS NOT NULL ORDER BY k %s, id LIMIT %d" % (
                rng.choice(["ASC", "DESC"]), rng.randint(1, 30)))
        elif r < 0.55:
            qs.append("SELECT count(*) FROM {t} WHERE k IS NULL")
        elif r < 0.65:
            qs.append("SELECT id, k2, k FROM {t} WHERE k2 = %d AND k BETWEEN %d AND %d ORDER BY id" % (
                rng.randint(0, 9), lo, hi))
        elif r < 0.7:
            qs.append("SELECT k2, k FROM {t} ORDER BY k2 DESC NULLS FIRST, k LIMIT %d" % rng.randint(1, 40))
        elif r < 0.8:
            f = rng.choice(["'NaN'", "'Infinity'", "'-Infinity'", "0", str(round(rng.uniform(-100, 100), 2))])
            qs.append("SELECT id, f FROM {t} WHERE f %s %s ORDER BY id" % (rng.choice(["<", "<=", "=", ">=", ">"]), f))
        elif r < 0.9:
            qs.append("SELECT id, ts FROM {t} WHERE ts BETWEEN '2026-01-01 00:00+00'::timestamptz + interval '%d hours' "
                      "AND '2026-01-01 00:00+00'::timestamptz + interval '%d hours' ORDER BY id" % (lo, hi))
        else:
            ids = ",".join(str(rng.randint(1, 3000)) for _ in range(rng.randint(1, 20)))
            qs.append("SELECT id, k FROM {t} WHERE id = ANY ('{%s}') ORDER BY id" % ids)
    return qs


def run_queries(qs, shape, table):
    sql = [SHAPES[shape] if shape else "SET enable_indexscan=off; SET enable_bitmapscan=off; SET enable_indexonlyscan=off;"]
    for i, q in enumerate(qs):
        sql.append("\\echo @@ %d" % i)
        sql.append(q.replace("{t}", table) + ";")
    return psql("\n".join(sql))


def used_index(qs, shape):
    """How many of the queries' plans use a gpubtree index in this shape."""
    node = {"index": "Index Scan", "indexonly": "Index Only Scan", "bitmap": "Bitmap Index Scan"}[shape]
    sql = [SHAPES[shape]]
    for q in qs:
        sql.append("EXPLAIN (COSTS OFF) " + q.replace("{t}", "t_g") + ";")
    out = psql("\n".join(sql))
    return out.count(node + " using t_g_") + out.count(node + " on t_g_")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seed", type=int)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--queries", type=int, default=120)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    model = Model(rng)

    device = os.environ.get("GPUBTREE_DEVICE")
    if device:
        SHAPES.update({k: v + " SET gpubtree.device = %s;" % device for k, v in SHAPES.items()})

    psql(setup(rng))
    problems = []
    nq = 0
    used = {s: 0 for s in SHAPES}
    for phase in range(3):
        psql("\n".join(dml_round(model, rng) for _ in range(args.rounds)))
        if phase == 1:
            psql("VACUUM t_g; VACUUM t_b;")
        psql("ANALYZE t_g; ANALYZE t_b;")
        qs = queries(rng, args.queries // 3)
        nq += len(qs)
        reference = run_queries(qs, None, "t_b")
        for shape in SHAPES:
            for table in ("t_g", "t_b"):
                got = run_queries(qs, shape, table)
                if got != reference:
                    a, b = got.split("@@ "), reference.split("@@ ")
                    for x, y in zip(a, b):
                        if x != y:
                            qi = int(y.split("\n", 1)[0])
                            problems.append("%s %s: %s\n  got: %s\n  expected: %s" % (
                                table, shape, qs[qi].replace("{t}", table), x.strip()[:300], y.strip()[:300]))
                            break
            used[shape] += used_index(qs, shape)
    rows = psql("SELECT count(*) FROM t_g").strip()
    if problems:
        print("seed %d: FAILED (%d differences)" % (args.seed, len(problems)))
        for p in problems[:5]:
            print("  " + p)
        return 1
    print("seed %d: ok (%d queries x %d plan shapes, %s rows at the end; gpubtree index used: %s)" % (
        args.seed, nq, len(SHAPES), rows, ", ".join("%s %d" % kv for kv in used.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
