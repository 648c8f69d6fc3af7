#!/usr/bin/env python3
"""report.md for a test/bench/commit_latency.sh results folder.

usage: commit_latency_report.py DIR     (reads results.csv, settings.txt, status.txt)
"""
import csv
import os
import sys

VARIANTS = [("btree", "a"), ("gpubtree", "b"), ("mirror", "c"), ("nopreload", "d")]
LIMIT_PCT = 10.0  # issue 7: single-row commits within 10 % of btree


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def pct(v, base):
    if v is None or base is None or base == 0:
        return None
    return (v / base - 1) * 100


def fmt_pct(p):
    return "NA" if p is None else "%+.1f %%" % p


def fmt(x, digits=3):
    return "NA" if x is None else ("%.*f" % (digits, x))


def main():
    d = sys.argv[1]
    rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
    settings = open(os.path.join(d, "settings.txt")).read() if os.path.exists(os.path.join(d, "settings.txt")) else ""
    status = open(os.path.join(d, "status.txt")).read() if os.path.exists(os.path.join(d, "status.txt")) else ""
    kv = dict(line.split("=", 1) for line in settings.splitlines() if "=" in line)
    by = {(r["variant"], int(r["clients"]), int(r["rows_per_xact"])): r for r in rows}
    clients = sorted({int(r["clients"]) for r in rows})
    batches = sorted({int(r["rows_per_xact"]) for r in rows})
    present = [(v, letter) for v, letter in VARIANTS if any(r["variant"] == v for r in rows)]
    what = {r["variant"]: r["what"] for r in rows}

    def lat(v, c, n):
        r = by.get((v, c, n))
        return num(r["lat_avg_ms"]) if r else None

    out = []
    w = out.append
    w("# Commit latency: btree against gpubtree (commit-time resync)")
    w("")
    w("`test/bench/commit_latency.sh`, %s, %s, PostgreSQL %s, gpubtree %s; %s rows pre-loaded per table, "
      "%s s per pgbench run (`-M prepared`, one script inserting N random keys per transaction)." % (
          kv.get("date", "?"), kv.get("device", "?"), kv.get("pg_version", "?"), kv.get("gpubtree_commit", "?"),
          kv.get("rows_preloaded", "?"), kv.get("duration_s", "?")))
    w("")
    w("**synchronous_commit = %s, fsync = %s**%s" % (
        kv.get("synchronous_commit", "?"), kv.get("fsync", "?"),
        ": commits wait for the WAL write but not for a flush to disk, so a transaction costs less than on a "
        "durable server and the overhead in percent is larger (a worst case)." if kv.get("fsync") == "off" else "."))
    w("")
    w("Variants: " + "; ".join("(%s) `%s`: %s" % (letter, v, what[v]) for v, letter in present) + ".")
    w("Overhead = mean latency per transaction against (a) btree in the same run, same clients and batch size.")
    w("")

    w("## Overhead")
    w("")
    for c in clients:
        w("### %d client%s" % (c, "" if c == 1 else "s"))
        w("")
        head = "| rows/xact | btree ms/xact | btree µs/row |"
        sep = "|---|---|---|"
        for v, letter in present[1:]:
            head += " (%s) %s ms/xact | overhead | extra µs/row |" % (letter, v)
            sep += "---|---|---|"
        w(head)
        w(sep)
        for n in batches:
            base = lat("btree", c, n)
            line = "| %d | %s | %s |" % (n, fmt(base), fmt(base * 1000 / n if base else None, 1))
            for v, _ in present[1:]:
                x = lat(v, c, n)
                extra = (x - base) * 1000 / n if x is not None and base is not None else None
                line += " %s | %s | %s |" % (fmt(x), fmt_pct(pct(x, base)), fmt(extra, 2))
            w(line)
        w("")

    w("## Against issue 7's requirement")
    w("")
    w("Single-row commits within %g %% of btree; batches amortise (the extra time per row falls as rows per "
      "transaction grow)." % LIMIT_PCT)
    w("")
    for v, letter in present[1:]:
        for c in clients:
            if 1 in batches:
                p = pct(lat(v, c, 1), lat("btree", c, 1))
                verdict = "NA" if p is None else ("within" if p < LIMIT_PCT else "OVER")
                msg = "- (%s) %s, %d client%s, 1 row/xact: %s (%s the limit)" % (
                    letter, v, c, "" if c == 1 else "s", fmt_pct(p), verdict)
            else:
                msg = "- (%s) %s, %d client%s: no 1-row run" % (letter, v, c, "" if c == 1 else "s")
            extras = []
            for n in batches:
                x, b = lat(v, c, n), lat("btree", c, n)
                if x is not None and b is not None:
                    extras.append("%s µs at %d" % (fmt((x - b) * 1000 / n, 2), n))
            if extras:
                msg += "; extra per row: " + ", ".join(extras)
            w(msg)
    w("")
    w("Differences of a few percent are within the noise of one %s s run; rerun a cell with "
      "`CLIENTS=... BATCHES=... DURATION=30` to narrow it." % kv.get("duration_s", "?"))
    w("")

    w("## All runs")
    w("")
    w("| variant | clients | rows/xact | xacts | tps | avg ms | p50 ms | p99 ms | µs/row | overhead | "
      "logged entries | invalidations | fallbacks | mirror after the run | reader scans by the service |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for v, letter in present:
        for c in clients:
            for n in batches:
                r = by.get((v, c, n))
                if not r:
                    continue
                p = pct(num(r["lat_avg_ms"]), lat("btree", c, n)) if v != "btree" else None
                reader = "%s / %s" % (r["reader_service_scans"], r["reader_scans"]) if v == "mirror" else ""
                w("| (%s) %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    letter, v, c, n, r["xacts"], r["tps"], r["lat_avg_ms"], r["lat_p50_ms"], r["lat_p99_ms"],
                    r["us_per_row"], "" if v == "btree" else fmt_pct(p), r["logged_entries"],
                    r["invalidations"], r.get("fallbacks", ""), r["mirror"], reader))
    w("")
    w("`logged entries`, `invalidations`, `fallbacks`: change of `gpubtree_status()`'s counters during the run "
      "(all sessions; fallbacks are scans answered by nbtree instead of the service). `mirror`: the index's row in `gpubtree_mirrors()` after the run.")
    w("")
    if status:
        w("## gpubtree_status() and gpubtree_mirrors()")
        w("")
        w("```")
        w(status.rstrip())
        w("```")
        w("")
    w("## Settings")
    w("")
    w("```")
    w(settings.rstrip())
    w("```")
    open(os.path.join(d, "report.md"), "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
