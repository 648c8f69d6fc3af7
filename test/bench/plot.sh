#!/usr/bin/env bash
# test/bench/plot.sh DIR: PNG plots (gnuplot) from DIR/results.csv, then
# report.md rewritten so that it links them.  Works on a results folder
# fetched from another machine.
set -euo pipefail
DIR=${1:?usage: test/bench/plot.sh DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v gnuplot >/dev/null || { echo "gnuplot not found: no plots" >&2; exit 1; }
term=pngcairo
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo || term=png
GBT_GNUPLOT_TERM=$term python3 "$HERE/report.py" "$DIR" --plotdata
gnuplot "$DIR/plotdata/plots.gp"
rm -rf "$DIR/plotdata"
python3 "$HERE/report.py" "$DIR"
ls "$DIR"/*.png
