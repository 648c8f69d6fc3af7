#!/usr/bin/env python3
"""Best throughput per variant family and tree size from a bench CSV -> table + gnuplot data.

usage: python3 plot.py BENCH.CSV   (writes plot_uniform.dat and plot_zipf.dat in the
current folder; then gnuplot plot.gp writes bench.png there)"""
import csv, sys
if len(sys.argv) != 2:
    sys.exit(__doc__)
rows = list(csv.DictReader(open(sys.argv[1])))
fam = [('harmonia_nopsa_nocombine', 'Harmonia (engine: no PSA, g1)'),
       ('harmonia_psa_g1_nocombine', 'Harmonia PSA (g1)'), ('harmonia_psa', 'Harmonia PSA+combine'),
       ('harmonia_nopsa', 'Harmonia no PSA'), ('sorted_array_thrust_psa', 'sorted array + PSA'),
       ('sorted_array_thrust', 'sorted array'), ('pointer_btree_psa', 'pointer B+tree + PSA'),
       ('pointer_btree', 'pointer B+tree')]
sizes = sorted({int(r['keys']) for r in rows if r['dist'] == 'uniform'})
for dist in ('uniform', 'zipf'):
    with open(f'plot_{dist}.dat', 'w') as f:
        f.write('log2n ' + ' '.join('"%s"' % l for _, l in fam) + '\n')
        for n in sizes:
            vals = []
            for v, _ in fam:
                g = [float(r['g_per_s']) for r in rows if int(r['keys']) == n and r['dist'] == dist and r['variant'] == v]
                vals.append('%.3f' % max(g) if g else 'NaN')
            f.write('%d %s\n' % (n.bit_length() - 1, ' '.join(vals)))
    print(open(f'plot_{dist}.dat').read())
