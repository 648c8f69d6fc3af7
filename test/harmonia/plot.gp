# gnuplot plot.gp  (after python3 plot.py bench.csv, in the same folder): bench.png
set terminal pngcairo size 1100,450 font ",10"
set output 'bench.png'
set multiplot layout 1,2 title "Batched lookups on one H100 (10^8 queries, 64-bit keys, sort included, best fanout/group)"
set xlabel "tree size (log2 keys)"; set ylabel "G lookups/s"; set key bottom left font ",8"
set yrange [0:12]; set xtics 1; set grid
set title "uniform (half present)"
plot for [i=2:9] 'plot_uniform.dat' using 1:i with linespoints title columnheader(i)
set title "zipfian"
plot for [i=2:9] 'plot_zipf.dat' using 1:i with linespoints title columnheader(i)
unset multiplot
