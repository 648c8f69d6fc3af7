#!/usr/bin/env python3
"""test/bench/report.py DIR [--plotdata]: report.md (or gnuplot data + script)
from DIR/results.csv and DIR/settings.txt.  Standard library only.

The first AM in the results (btree) is the baseline; every other AM is
compared with it: "speed-up" > 1 means faster than the baseline (time ratio
baseline/other for ms, throughput ratio other/baseline for tps)."""
import csv
import math
import os
import re
import sys
from collections import OrderedDict

WORKLOAD_ORDER = ["create_index", "range_count", "range_sum", "any_count", "bitmap_rows",
                  "ycsb_C_uniform", "ycsb_C_zipfian", "ycsb_B_uniform", "ycsb_B_zipfian",
                  "ycsb_A_uniform", "ycsb_A_zipfian", "insert_batch", "update_batch",
                  "commit_latency", "commit_tps"]
WORKLOAD_TEXT = {
    "create_index": "CREATE INDEX ... (k) INCLUDE (v) on the loaded, vacuumed table",
    "range_count": "SELECT count(*) WHERE k in a key range (index-only scan forced)",
    "range_sum": "SELECT sum(v) WHERE k in a key range (index-only scan forced)",
    "any_count": "SELECT count(*) WHERE k = ANY(array of m keys, about half present)",
    "bitmap_rows": "SELECT k, v WHERE k in a key range, bitmap heap scan forced (rows produced, not sent)",
    "insert_batch": "INSERT ... SELECT of a batch of rows, keys spread over the key range (incl. commit)",
    "update_batch": "UPDATE ... SET v = v + 1 over a key range (non-HOT: v is in the index; incl. commit)",
    "commit_latency": "pgbench, 1 client, one-row INSERT per transaction: per-transaction latency",
    "commit_tps": "pgbench, 1 client, one-row INSERT per transaction: transactions/s",
}


def ycsb_text(w):
    m = re.match(r"ycsb_([ABC])_(\w+)", w)
    mix = {"C": "100% reads", "B": "95% reads / 5% updates", "A": "50% reads / 50% updates"}[m.group(1)]
    return "YCSB-%s (%s), %s keys, pgbench -M prepared" % (m.group(1), mix, m.group(2))


def load(d):
    rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
    settings = OrderedDict()
    p = os.path.join(d, "settings.txt")
    if os.path.exists(p):
        for line in open(p):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                settings[k] = v
    return rows, settings


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def param_key(p):
    m = re.match(r"([0-9.]+)", p)
    return float(m.group(1)) if m else 0.0


def fmt(x):
    if x is None:
        return "n/a"
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    if x >= 1:
        return "%.2f" % x
    return "%.3f" % x


def rows_label(n):
    n = int(n)
    return "2^%d" % int(round(math.log2(n))) if n > 0 and (n & (n - 1)) == 0 else str(n)


def norm_plan(plan, am):
    return plan.replace("t_%s_k" % am, "t_AM_k").replace("t_%s" % am, "t_AM")


def speedup(unit, base, other):
    if base is None or other is None or base == 0 or other == 0:
        return None
    return other / base if unit == "tps" else base / other


def workloads_of(rows):
    seen = []
    for r in rows:
        if r["workload"] not in seen:
            seen.append(r["workload"])
    return sorted(seen, key=lambda w: WORKLOAD_ORDER.index(w) if w in WORKLOAD_ORDER else 99)


def index(rows):
    ams, idx = [], {}
    for r in rows:
        if r["am"] not in ams:
            ams.append(r["am"])
        idx[(r["rows"], r["workload"], r["param"], r["am"])] = r
    return ams, idx


def report(d):
    rows, st = load(d)
    ams, idx = index(rows)
    base = ams[0] if ams else "btree"
    others = ams[1:]
    sizes = sorted({r["rows"] for r in rows}, key=int)
    out = []
    dev = st.get("device", rows[0]["device"] if rows else "?")
    out.append("# gpubtree vs %s: benchmark report\n" % base)
    out.append("| | |\n|---|---|")
    for k, label in [("device", "device"), ("date", "date (UTC)"), ("pg_version", "PostgreSQL"),
                     ("cuda_version", "CUDA (nvcc)"), ("cpu_model", "CPU"), ("host_cpus", "CPU cores"),
                     ("host_mem_mb", "memory (MB)"), ("gpubtree_commit", "gpubtree commit"),
                     ("gpubtree.device(gpubtree sessions)", "gpubtree.device in gpubtree sessions"),
                     ("runtime_s", "suite runtime (s)")]:
        if k in st:
            out.append("| %s | %s |" % (label, st[k]))
    out.append("| table sizes | %s rows |" % ", ".join(rows_label(s) for s in sizes))
    out.append("")
    out.append("Same data, same cluster, same settings for every AM; AMs alternate within each "
               "measurement. Query times are EXPLAIN (ANALYZE, TIMING OFF) Execution Time, warm "
               "cache, one warm-up run then the median (min) of the timed runs; DDL and batch DML "
               "are psql \\timing wall times; pgbench numbers are tps without connection time. "
               "Speed-up = how many times faster %s is than %s (>1: faster).\n"
               % (" / ".join(others) or "-", base))
    notes = os.path.join(d, "notes.md")
    if os.path.exists(notes):
        out.append(open(notes).read().strip() + "\n")
    if st.get("gpubtree_device_info"):
        out.append("gpubtree_device_info(): `%s`\n" % st["gpubtree_device_info"].strip(";"))

    # headline: the largest size
    big = sizes[-1] if sizes else None
    heads = []
    for w, pf in [("create_index", None), ("range_count", "10%"), ("range_sum", "100%"),
                  ("any_count", None), ("bitmap_rows", "10%"), ("ycsb_C_uniform", None),
                  ("ycsb_A_zipfian", None), ("insert_batch", None), ("commit_latency", None)]:
        cands = [r for r in rows if r["rows"] == big and r["workload"] == w and r["am"] == base]
        if pf:
            cands = [r for r in cands if r["param"] == pf]
        if not cands:
            continue
        if w in ("any_count", "ycsb_C_uniform", "ycsb_A_zipfian"):
            cands = [max(cands, key=lambda r: param_key(r["param"]))]
        heads.append(cands[0])
    if heads and others:
        out.append("## Headline (%s rows)\n" % rows_label(big))
        hdr = "| workload | parameter | %s |" % " | ".join(["%s median (min)" % a for a in [base] + others] + ["speed-up %s" % o for o in others])
        out.append(hdr)
        out.append("|" + "---|" * (hdr.count("|") - 1))
        for b in heads:
            vals, sps = [], []
            for am in [base] + others:
                r = idx.get((b["rows"], b["workload"], b["param"], am))
                vals.append(("%s tps" % fmt(num(r["median"])) if r["unit"] == "tps" else
                             "%s (%s) ms" % (fmt(num(r["median"])), fmt(num(r["min"])))) if r else "n/a")
                if am != base:
                    sps.append(fmt(speedup(b["unit"], num(b["median"]), num(r["median"]) if r else None)))
            out.append("| %s | %s | %s | %s |" % (b["workload"], b["param"], " | ".join(vals), " | ".join(sps)))
        out.append("")

    out.append("## Results per workload\n")
    for w in workloads_of(rows):
        desc = ycsb_text(w) if w.startswith("ycsb_") else WORKLOAD_TEXT.get(w, "")
        out.append("### %s\n\n%s\n" % (w, desc))
        hdr = ["rows", "parameter"]
        for am in [base] + others:
            hdr.append("%s median (min)" % am)
        for o in others:
            hdr.append("speed-up %s" % o)
        if w in ("insert_batch", "update_batch"):
            hdr += ["%s rows/s" % am for am in [base] + others]
        hdr.append("plan (%s)" % base)
        hdr.append("other plans")
        out.append("| " + " | ".join(hdr) + " |")
        out.append("|" + "---|" * len(hdr))
        keys = sorted({(r["rows"], r["param"]) for r in rows if r["workload"] == w},
                      key=lambda k: (int(k[0]), param_key(k[1])))
        for size, param in keys:
            b = idx.get((size, w, param, base))
            cells = [rows_label(size), param]
            for am in [base] + others:
                r = idx.get((size, w, param, am))
                if not r:
                    cells.append("n/a")
                elif r["unit"] == "tps":
                    cells.append("%s tps" % fmt(num(r["median"])))
                else:
                    cells.append("%s (%s) ms" % (fmt(num(r["median"])), fmt(num(r["min"]))))
            for o in others:
                r = idx.get((size, w, param, o))
                cells.append(fmt(speedup(b["unit"], num(b["median"]), num(r["median"]))) if b and r else "n/a")
            if w in ("insert_batch", "update_batch"):
                for am in [base] + others:
                    r = idx.get((size, w, param, am))
                    n = param_key(param)
                    m = num(r["median"]) if r else None
                    cells.append("%.0f" % (n / m * 1000) if m else "n/a")
            cells.append("`%s`" % b["plan"] if b else "n/a")
            diff = []
            for o in others:
                r = idx.get((size, w, param, o))
                if r and b and norm_plan(r["plan"], o) != norm_plan(b["plan"], base):
                    diff.append("%s: `%s`" % (o, r["plan"]))
            cells.append("; ".join(diff) if diff else "same")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")

    out.append("## Settings\n")
    out.append("| setting | value |\n|---|---|")
    for k, v in st.items():
        if k in ("gpubtree_device_info",):
            continue
        out.append("| %s | %s |" % (k, v.replace("|", "\\|")))
    out.append("")
    pngs = sorted(f for f in os.listdir(d) if f.endswith(".png"))
    if pngs:
        out.append("## Plots\n")
        for p in pngs:
            out.append("![%s](%s)\n" % (p, p))
    open(os.path.join(d, "report.md"), "w").write("\n".join(out) + "\n")


def plotdata(d):
    """Write DIR/plotdata/*.dat and DIR/plotdata/plots.gp (run by plot.sh)."""
    rows, st = load(d)
    ams, idx = index(rows)
    sizes = sorted({r["rows"] for r in rows}, key=int)
    pd = os.path.join(d, "plotdata")
    os.makedirs(pd, exist_ok=True)
    title_tail = "%s, PG %s, %s" % (st.get("device", ""), st.get("pg_version", ""), st.get("date", "")[:10])
    gp = []

    def series(name, pts):
        fn = os.path.join(pd, name + ".dat")
        with open(fn, "w") as f:
            for x, y in sorted(pts):
                if y is not None and y > 0:
                    f.write("%g %g\n" % (x, y))
        return fn

    def glabel(n):
        return rows_label(n).replace("^", "^{") + ("}" if "^" in rows_label(n) else "")

    def styled(items):
        """Same colour for the same series of different AMs; AM by dash type."""
        groups, out = [], []
        for fn, t in items:
            am, rest = t.split(" ", 1) if " " in t else (t, "")
            if rest not in groups:
                groups.append(rest)
            out.append((fn, t, "lc %d dt %d pt %d lw 1.5" % (
                groups.index(rest) + 1, ams.index(am) + 1 if am in ams else 1, ams.index(am) * 2 + 5 if am in ams else 1)))
        return out

    def plot(png, title, xl, yl, items, logx=True, logy=True, extra=""):
        items = [it for it in styled(items) if os.path.getsize(it[0]) > 0]
        if not items:
            return
        gp.append('set output "%s"' % os.path.join(d, png))
        gp.append('set title "%s\\n{/*0.8 %s}"' % (title, title_tail.replace('"', "")))
        gp.append('set xlabel "%s"; set ylabel "%s"' % (xl, yl))
        gp.append(("set logscale x" if logx else "unset logscale x") + "; " +
                  ("set logscale y" if logy else "unset logscale y"))
        gp.append(extra)
        gp.append("plot " + ", ".join('"%s" using 1:2 with linespoints %s title "%s"' % (fn, st, t) for fn, t, st in items))

    def pts(w, am, size, xf=param_key, unit=None):
        return [(xf(r["param"]), num(r["median"])) for r in rows
                if r["workload"] == w and r["am"] == am and r["rows"] == size]

    items = []
    for size in sizes:
        for am in ams:
            for w in ("range_count", "range_sum"):
                items.append((series("%s_%s_%s" % (w, am, size), pts(w, am, size)),
                              "%s %s %s" % (am, w.split("_")[1], glabel(size))))
    plot("range_aggregates.png", "Range count(*) / sum(v), index-only scan (dashed: %s)" % ", ".join(ams[1:]), "key range (% of rows)",
         "median ms", items)
    items = [(series("any_%s_%s" % (am, s), pts("any_count", am, s)), "%s %s" % (am, glabel(s)))
             for s in sizes for am in ams]
    plot("any_lookup.png", "count(*) WHERE k = ANY(array)", "keys in the array", "median ms", items)
    items = [(series("bitmap_%s_%s" % (am, s), pts("bitmap_rows", am, s)), "%s %s" % (am, glabel(s)))
             for s in sizes for am in ams]
    plot("bitmap_scan.png", "Range bitmap heap scan returning rows", "key range (% of rows)",
         "median ms", items)
    for s in sizes:
        items = []
        for mix in "CBA":
            for dist in ("uniform", "zipfian"):
                for am in ams:
                    w = "ycsb_%s_%s" % (mix, dist)
                    items.append((series("%s_%s_%s" % (w, am, s), pts(w, am, s)),
                                  "%s %s %s" % (am, mix, dist)))
        plot("ycsb_rows%s.png" % rows_label(s).replace("2^", "2e"), "YCSB mixes, %s rows (dashed: %s)" % (glabel(s), ", ".join(ams[1:])),
             "clients", "transactions/s", items, logy=False,
             extra="set key outside right; set xtics (1,2,4,8,16,32,64,128)")
    items = []
    for am in ams:
        for w, p, lab in [("create_index", None, "CREATE INDEX"), ("range_sum", "100%", "sum 100%"),
                          ("range_count", "10%", "count 10%"), ("bitmap_rows", "10%", "bitmap 10%"),
                          ("insert_batch", None, "insert batch"), ("commit_latency", None, "commit latency")]:
            ps = [(int(r["rows"]), num(r["median"])) for r in rows
                  if r["workload"] == w and r["am"] == am and (p is None or r["param"] == p)]
            items.append((series("size_%s_%s" % (w, am), ps), "%s %s" % (am, lab)))
    if len(sizes) > 1:
      plot("size.png", "Time versus table size", "rows", "median ms", items,
         extra="set key outside right; set format x '2^{%L}'; set logscale x 2")
    with open(os.path.join(pd, "plots.gp"), "w") as f:
        f.write("set terminal %s size 1100,650\nset grid\nset key left top\n" % (
            os.environ.get("GBT_GNUPLOT_TERM", "pngcairo")))
        f.write("\n".join(gp) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if "--plotdata" in sys.argv[2:]:
        plotdata(sys.argv[1])
    else:
        report(sys.argv[1])
